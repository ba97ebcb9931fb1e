"""python -m autograder's paths are read against the folder the command is typed in, whatever runs them later."""
from __future__ import annotations

import os

import pytest

import autograder.__main__ as cli
from autograder.cli_paths import absolute_db_url

# each command with every path option given relative, and a relative SQLite gradebook: option -> value
COMMANDS = {
    "grade": {"submitted": "submitted", "--out": "grades/", "--data-dir": "data/w", "--answers": "grader_only/t.tsv",
              "--gradebook": "sqlite:///gradebook.db"},
    "autograde": {"assignment": "a5", "--course": "course", "--data-dir": "data/w", "--db": "sqlite:///gb.db",
                  "--out-dir": "outputs"},
    "report": {"course": "course", "--out": "grades", "--db": "sqlite:///gb.db?mode=ro"},
    "bundle": {"--out": "dist/", "--data-dir": "data/w"},
    "similarity": {"submitted": "submitted", "--out": "sim", "--release": "notebooks/a5"},
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_path_option_is_read_against_the_working_folder(command, tmp_path, monkeypatch):
    """Does each command see every path it was given (and a SQLite gradebook's file) absolute against the folder it
    runs in, except autograde's --out-dir, a folder inside each submission?"""
    seen, real = {}, cli.absolute_paths

    def parsed_then_stop(args):
        seen.update(vars(real(args)))
        raise SystemExit(0)

    monkeypatch.setattr(cli, "absolute_paths", parsed_then_stop)
    monkeypatch.chdir(tmp_path)
    argv = [command] + [word for option, value in COMMANDS[command].items()
                        for word in ((option, value) if option.startswith("--") else (value,))]
    with pytest.raises(SystemExit):
        cli.main(argv)
    for option, value in COMMANDS[command].items():
        got = seen[option.removeprefix("--").replace("-", "_")]
        if option in ("assignment", "--out-dir"):
            assert got == value
        elif value.startswith("sqlite:///"):
            assert got == "sqlite:///" + str(tmp_path / value.removeprefix("sqlite:///")), got
        else:
            assert got == str(tmp_path / value.rstrip("/")), (option, got)


def test_sqlite_urls_get_an_absolute_file_and_other_urls_stay():
    """Is sqlite:///gradebook.db made absolute (its query kept), while absolute, in-memory and server URLs stay?"""
    here = os.getcwd()
    assert absolute_db_url("sqlite:///gradebook.db") == f"sqlite:///{here}/gradebook.db"
    assert absolute_db_url("sqlite:///gb.db?mode=ro") == f"sqlite:///{here}/gb.db?mode=ro"
    for url in ("sqlite:////srv/course/gradebook.db", "sqlite:///:memory:", "sqlite://",
                "postgresql://grader@db/course"):
        assert absolute_db_url(url) == url


def test_a_folder_given_for_the_answers_file_is_one_line(tmp_path, world_dir, capsys):
    """Is a folder given to ``grade --answers`` (the folder that holds the answers file, not the file) refused in one
    line that says so, with status 2 and nothing graded?"""
    (tmp_path / "submitted").mkdir()
    (tmp_path / "grader_only").mkdir()
    code = cli.main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "grades"), "--data-dir",
                     str(world_dir), "--answers", str(tmp_path / "grader_only")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "is a folder, not the answers file" in err, err
    assert not (tmp_path / "grades").exists()
