"""Sanitising submissions before grading: no link followed, no special file read, sizes capped."""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
import unit_work

import autograder.collecting.cohort
from autograder.checks.run_files import RUN_FILES
from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import MAX_REASONS, Limits, Wanted, collect_submission, wanted_for

A = "a5"
NOTEBOOKS = ("01_intro.ipynb", "02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "04_d.ipynb")
WANTED = Wanted(frozenset(NOTEBOOKS), frozenset(RUN_FILES))
SECRET = b"TOP-SECRET-gradebook-answer-7f3a9c"


def make_submission(submitted: Path, student: str = "alice", files: dict[str, bytes] | None = None) -> Path:
    """submitted/<student>/a5 holding ``files`` (relative paths -> bytes); the assignment folder."""
    folder = submitted / student / A
    folder.mkdir(parents=True)
    for rel, data in (files or {"01_intro.ipynb": b'{"cells": []}'}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def secret_file(tmp_path: Path) -> Path:
    """A file outside every submission that no copy may ever hold: the gradebook or the hidden answers."""
    path = tmp_path / "grader_only" / "answers.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(SECRET)
    return path


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` (links not followed): file -> bytes, anything else -> its kind."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            rel = str(path.relative_to(root))
            found[rel] = path.read_bytes() if stat.S_ISREG(mode) else ("dir" if stat.S_ISDIR(mode) else "other")
    return found


def assert_no_secret(dest: Path) -> None:
    """Nothing under ``dest`` is a link or holds the secret's bytes."""
    for rel, content in tree(dest).items():
        assert content != "other", f"{rel} is not a plain file or folder"
        if isinstance(content, bytes):
            assert SECRET not in content, f"{rel} holds the secret"


def test_a_normal_submission_is_copied_intact(tmp_path):
    """Are notebooks and run files, at the top and in outputs/, copied byte for byte, run files into outputs/?"""
    files = {"01_intro.ipynb": b'{"cells": [1]}', "02_finetune_without_pretraining.ipynb": b'{"cells": [2]}',
             "vanilla.model.params": b"\x00\x01params", "vanilla.nopretrain.dev.predictions": b"Paris\nRome\n",
             "outputs/vanilla.finetune.params": b"\x02\x03more", "outputs/vanilla.pretrain.dev.predictions": b"Oslo\n"}
    folder = make_submission(tmp_path / "submitted", files=files)
    (folder / "01_intro.ipynb").chmod(0o600)
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert got.dropped == []
    assert got.folder == tmp_path / "dest" / "alice" / A
    copied = {rel: data for rel, data in tree(got.folder).items() if data != "dir"}
    assert copied == {"01_intro.ipynb": files["01_intro.ipynb"],
                      "02_finetune_without_pretraining.ipynb": files["02_finetune_without_pretraining.ipynb"],
                      "outputs/vanilla.model.params": files["vanilla.model.params"],
                      "outputs/vanilla.nopretrain.dev.predictions": files["vanilla.nopretrain.dev.predictions"],
                      "outputs/vanilla.finetune.params": files["outputs/vanilla.finetune.params"],
                      "outputs/vanilla.pretrain.dev.predictions": files["outputs/vanilla.pretrain.dev.predictions"]}
    assert {stat.S_IMODE(os.stat(got.folder / rel).st_mode) for rel in copied} == {0o644}


def test_every_runs_log_the_notebooks_show_while_grading_is_collected(tmp_path):
    """Are the evaluations' logs (which the run cells print in nbgrader's feedback) kept beside the graded files?"""
    from course_lib.run_specs import RUNS

    logs = {f"outputs/{name}.json": b'{"seed": 0}' for name in RUNS}
    assert "outputs/vanilla_eval_dev_without_pretrain.json" in logs
    make_submission(tmp_path / "submitted", files={"02_finetune_without_pretraining.ipynb": b"{}", **logs})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=wanted_for(A))
    assert got.dropped == [] and {k: v for k, v in tree(got.folder).items() if k in logs} == logs


def test_a_symlinked_notebook_or_run_file_is_dropped_not_followed(tmp_path):
    """Is a notebook or run file linking to a secret outside dropped as a symbolic link, the secret copied nowhere?"""
    secret = secret_file(tmp_path)
    folder = make_submission(tmp_path / "submitted")
    (folder / "02_finetune_without_pretraining.ipynb").symlink_to(secret)
    (folder / "outputs").mkdir()
    (folder / "outputs" / "vanilla.model.params").symlink_to(os.path.relpath(secret, folder / "outputs"))
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert_no_secret(tmp_path / "dest")
    outside = "a symbolic link to somewhere outside the submission, not taken"
    assert f"02_finetune_without_pretraining.ipynb: {outside}" in got.dropped
    assert f"outputs/vanilla.model.params: {outside}" in got.dropped
    assert (got.folder / "01_intro.ipynb").is_file()
    assert not any(SECRET.decode() in reason for reason in got.dropped)


def test_a_symlinked_outputs_folder_is_not_entered(tmp_path):
    """Is an outputs/ that links to a folder of the grader's reported and left unread?"""
    secret = secret_file(tmp_path)
    (secret.parent / "vanilla.model.params").write_bytes(SECRET)
    folder = make_submission(tmp_path / "submitted")
    (folder / "outputs").symlink_to(secret.parent, target_is_directory=True)
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert_no_secret(tmp_path / "dest")
    assert got.dropped == ["outputs: a symbolic link to somewhere outside the submission, not taken"]
    assert (got.folder / "01_intro.ipynb").is_file()
    assert not (got.folder / "outputs").exists()


def test_a_symlinked_assignment_folder_is_not_entered(tmp_path):
    """Is an assignment folder that is a link to another folder reported, with nothing copied?"""
    elsewhere = tmp_path / "grader_only" / A
    elsewhere.mkdir(parents=True)
    (elsewhere / "01_intro.ipynb").write_bytes(SECRET)
    (tmp_path / "submitted" / "alice").mkdir(parents=True)
    (tmp_path / "submitted" / "alice" / A).symlink_to(elsewhere, target_is_directory=True)
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert not (tmp_path / "dest").exists()
    assert (got.folder, got.dropped) == (None, [f"{A}: a symbolic link, not a folder"])


def test_a_symlinked_student_folder_is_not_entered(tmp_path):
    """Is a student folder that links to another student's (or the grader's) folder reported, not copied?"""
    make_submission(tmp_path / "submitted", "alice", {"01_intro.ipynb": b"alice's own"})
    victim = make_submission(tmp_path / "grader_only", "victim", {"01_intro.ipynb": SECRET})
    (tmp_path / "submitted" / "eve").symlink_to(victim.parent, target_is_directory=True)
    rows = collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED).students
    assert_no_secret(tmp_path / "dest")
    assert [(r.student, r.folder is not None) for r in rows] == [("alice", True), ("eve", False)]
    assert rows[1].dropped == ["eve: a symbolic link, not a folder"]
    alone = collect_submission(tmp_path / "submitted" / "eve", "eve", A, tmp_path / "dest2", wanted=WANTED)
    assert not (tmp_path / "dest2").exists()
    assert (alone.folder, alone.dropped) == (None, ["eve: a symbolic link, not a folder"])


@pytest.mark.timeout(20)
def test_a_fifo_named_like_a_notebook_does_not_block(tmp_path):
    """Is a FIFO named like a notebook dropped as a FIFO at once, without the grader blocking on it?"""
    folder = make_submission(tmp_path / "submitted")
    os.mkfifo(folder / "02_finetune_without_pretraining.ipynb")
    os.mkfifo(folder / "vanilla.model.params")
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert sorted(got.dropped) == ["02_finetune_without_pretraining.ipynb: a FIFO (named pipe), not a file",
                                   "vanilla.model.params: a FIFO (named pipe), not a file"]
    assert sorted(tree(got.folder)) == ["01_intro.ipynb"]


def test_a_folder_named_like_a_notebook_is_dropped(tmp_path):
    """Is a folder named 03_x.ipynb reported as a folder and left uncopied, with nothing inside it read?"""
    folder = make_submission(tmp_path / "submitted")
    (folder / "03_span_corruption.ipynb").mkdir()
    (folder / "03_span_corruption.ipynb" / "01_intro.ipynb").write_bytes(SECRET)
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert sorted(tree(got.folder)) == ["01_intro.ipynb"]
    assert got.dropped == ["03_span_corruption.ipynb: a folder, not a file"]
    assert got.notes == {"03_span_corruption.ipynb": "it is a folder, not a file"}


def test_an_oversize_params_file_is_dropped_with_its_size(tmp_path):
    """Is a params file over its cap left out, with a reason naming its size and the limit, and the rest copied?"""
    make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"{}", "outputs/vanilla.model.params": b"x" * 5000,
                                                   "outputs/vanilla.finetune.params": b"y" * 900})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest",
                             Limits(params_bytes=1000), WANTED)
    assert sorted(tree(got.folder)) == ["01_intro.ipynb", "outputs", "outputs/vanilla.finetune.params"]
    assert got.dropped == ["outputs/vanilla.model.params: 4.9 KB, over the 1000 bytes limit"]


def test_a_file_growing_past_its_cap_while_read_is_stopped(tmp_path, monkeypatch):
    """Is a file whose fstat says small but whose content runs past the cap stopped and left out?"""
    make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"n" * 5000})
    real_fstat = os.fstat

    def small_fstat(fd):
        st = real_fstat(fd)
        return os.stat_result((*tuple(st)[:6], 10, *tuple(st)[7:10])) if stat.S_ISREG(st.st_mode) else st

    monkeypatch.setattr(os, "fstat", small_fstat)
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest",
                             Limits(notebook_bytes=1000), WANTED)
    assert (got.folder, got.dropped) == (None, ["01_intro.ipynb: grew past the 1000 bytes limit while being copied"])
    assert not (tmp_path / "dest" / "alice").exists()


def test_a_submission_over_the_total_limit_is_cut_with_a_reason(tmp_path):
    """Once the files copied reach the total cap, are the rest left out with a reason each?"""
    names = sorted(NOTEBOOKS)
    make_submission(tmp_path / "submitted", files={n: b"z" * 1000 for n in names})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest",
                             Limits(total_bytes=2500), WANTED)
    assert sorted(tree(got.folder)) == names[:2]
    assert got.dropped == [f"{n}: would take the submission past the 2.4 KB limit for all files" for n in names[2:]]


def test_an_unexpected_file_is_dropped_and_editor_noise_ignored(tmp_path):
    """Is notes.txt (or an oddly named notebook) dropped with a reason, while checkpoints and dot-files go silently?"""
    folder = make_submission(tmp_path / "submitted", files={
        "01_intro.ipynb": b"{}", "notes.txt": b"hello", "evil.ipynb": b"{}", "outputs/01_intro.ipynb": b"{}",
        ".ipynb_checkpoints/01_intro-checkpoint.ipynb": b"{}", ".DS_Store": b"\x00"})
    (folder / "data").mkdir()
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert sorted(got.dropped) == ["data: not a file", "evil.ipynb: not one of the assignment's files",
                                   "notes.txt: not one of the assignment's files",
                                   "outputs/01_intro.ipynb: not one of the assignment's files"]
    assert sorted(tree(got.folder)) == ["01_intro.ipynb"]


def test_a_run_file_in_both_places_keeps_the_outputs_copy(tmp_path):
    """When a run file is at the top and in outputs/ both, is the outputs/ one kept and the other dropped?"""
    make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"{}", "vanilla.model.params": b"top",
                                                   "outputs/vanilla.model.params": b"outputs"})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert got.dropped == ["vanilla.model.params: also in outputs/, whose copy is kept"]
    assert (got.folder / "outputs" / "vanilla.model.params").read_bytes() == b"outputs"
    assert sorted(tree(got.folder)) == ["01_intro.ipynb", "outputs", "outputs/vanilla.model.params"]


def test_a_hard_linked_file_is_copied_by_its_content_and_noted(tmp_path):
    """Is a notebook with a second hard link (an honest backup, a cp -al gathering) copied by content, and noted?"""
    folder = make_submission(tmp_path / "submitted", files={"02_finetune_without_pretraining.ipynb": b"mine"})
    os.link(folder / "02_finetune_without_pretraining.ipynb", folder / "backup.ipynb")
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert (got.folder / "02_finetune_without_pretraining.ipynb").read_bytes() == b"mine"
    assert os.stat(got.folder / "02_finetune_without_pretraining.ipynb").st_nlink == 1  # a copy, not a link
    assert got.linked == ["02_finetune_without_pretraining.ipynb"]
    source = os.stat(folder / "02_finetune_without_pretraining.ipynb")
    assert got.inodes["02_finetune_without_pretraining.ipynb"] == (source.st_dev, source.st_ino)


def test_reasons_show_names_sanitised_and_never_contents(tmp_path):
    """Does a reason show a hostile file name without control characters, cut to 80, and none of its contents?"""
    hostile = "\x1b[2J\rgrade=100\n" + "A" * 200 + ".txt"
    make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"{}", hostile: SECRET})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert_no_secret(tmp_path / "dest")
    [reason] = got.dropped
    name, _, why = reason.partition(": ")
    assert why == "not one of the assignment's files"
    assert name.isprintable() and len(name) <= 80 and name.startswith("?[2J?grade=100?AAA")
    assert SECRET.decode() not in reason
    assert_no_secret(tmp_path / "dest")


HONEST_IDS = ("alice", "Ana María", "Øyvind", "-dash", "--help", "李雷", "o'brien", "x" * 128, "👩\u200d🔬",
              "a+b", "bad\x1bname")
REFUSED_IDS = {"bad\nname": "newline", "star*": "pattern", "brack[et]": "pattern",
               "trailing ": "strips white space", "x" * 129: "128 characters"}


def test_every_id_nbgrader_accepts_is_collected(tmp_path):
    """Are ids with spaces, other alphabets, a leading dash or --help collected under their own names?"""
    for student in HONEST_IDS:
        make_submission(tmp_path / "submitted", student)
    cohort = collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED)
    assert [c.student for c in cohort.students] == sorted(HONEST_IDS) and cohort.refused == []
    for student in HONEST_IDS:
        assert (tmp_path / "dest" / student / A / "01_intro.ipynb").is_file(), student


def test_ids_nbgrader_cannot_carry_are_refused_by_name_and_never_written(tmp_path):
    """Are '..', hidden names, newlines, patterns, end spaces and over-long ids refused, each with a row (a hidden
    name too), nothing written outside dest?"""
    submitted, dest = tmp_path / "in" / "submitted", tmp_path / "out" / "dest"
    make_submission(submitted, "alice")
    for student in (".hidden", *REFUSED_IDS):
        make_submission(submitted, student, {"01_intro.ipynb": SECRET})
    (tmp_path / "in" / A).mkdir()
    (tmp_path / "in" / A / "01_intro.ipynb").write_bytes(SECRET)  # what submitted/.. /a5 would reach
    before = {p for p in tree(tmp_path) if not p.startswith("out")}
    cohort = collect_cohort(submitted, A, dest, wanted=WANTED)
    alone = collect_submission(submitted / "..", "..", A, dest, wanted=WANTED)
    assert {p for p in tree(tmp_path) if not p.startswith("out")} == before
    assert_no_secret(dest)
    assert [c.student for c in cohort.students] == ["alice"]
    refused = {r.shown: r.why for r in cohort.refused}
    assert "hidden" in refused[".hidden"] and len(refused) == len(REFUSED_IDS) + 1
    for name, words in REFUSED_IDS.items():
        shown_name = name.replace("\n", "?") if len(name) <= 80 else name[:77] + "..."
        assert words in refused[shown_name], (name, refused)
    assert (alone.folder, alone.dropped) == (None, ["..: not a folder name, so not collected"])
    assert sorted(os.listdir(dest)) == ["alice"]


def test_many_files_never_hide_the_wanted_ones(tmp_path):
    """With 5,000 other files beside them, are the run files and notebooks still found (looked up by name), quickly,
    with the listing cut and the reasons capped?"""
    folder = make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"{}",
                                                           "outputs/vanilla.model.params": b"params"})
    for where in (folder, folder / "outputs"):
        for i in range(2500):
            os.close(os.open(where / f"junk{i:05d}", os.O_CREAT | os.O_WRONLY, 0o644))
    start = time.monotonic()
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", Limits(max_entries=2000),
                             WANTED)
    assert time.monotonic() - start < 5
    assert sorted(tree(got.folder)) == ["01_intro.ipynb", "outputs", "outputs/vanilla.model.params"]
    assert got.dropped[0].startswith("outputs/: more than 2000 entries")
    assert got.dropped[1].startswith("the submission: more than 2000 entries")
    assert len(got.dropped) <= MAX_REASONS + 3
    assert got.dropped[-1].startswith("... and ") and got.dropped[-1].endswith(" more things left out")


def test_a_name_that_misses_a_notebook_by_spaces_or_capitals_gets_a_note(tmp_path):
    """Does '03_span_corruption.ipynb ' (a trailing space) leave a note naming the assignment's notebook?"""
    make_submission(tmp_path / "submitted", files={"01_intro.ipynb": b"{}", "03_span_corruption.ipynb ": b"{}",
                                                   "02_Finetune_Without_Pretraining.ipynb": b"{}"})
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert sorted(got.notes) == ["02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb"]
    assert all("rename it" in note for note in got.notes.values())
    assert sorted(tree(got.folder)) == ["01_intro.ipynb"]


def test_one_unreadable_student_does_not_stop_the_cohort(tmp_path, monkeypatch):
    """When reading one student's folder fails with an OSError in its unit, does that student get a row saying so
    (no file name in it) and the others a copy?"""
    for student in ("alice", "bob", "carol"):
        make_submission(tmp_path / "submitted", student)
    monkeypatch.setattr(autograder.collecting.cohort, "collect_one", unit_work.collect_one_failing_for_bob)
    rows = collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED).students
    assert [(r.student, r.folder is not None) for r in rows] == [("alice", True), ("bob", False), ("carol", True)]
    assert rows[1].dropped == ["the submission could not be collected: a file or folder of it cannot be read "
                               "(PermissionError)"]
    assert sorted(os.listdir(tmp_path / "dest")) == ["alice", "carol"]


def test_a_missing_assignment_folder_is_reported(tmp_path):
    """Does a student folder without the assignment folder get a row saying so, and no copy?"""
    (tmp_path / "submitted" / "alice" / "a4").mkdir(parents=True)
    (tmp_path / "submitted" / "alice" / "a4" / "01_intro.ipynb").write_bytes(b"{}")
    [row] = collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED).students
    assert (row.student, row.folder, row.dropped) == ("alice", None, [f"no {A} folder in the submission"])
    assert not (tmp_path / "dest" / "alice").exists()


def test_a_cohort_is_never_mixed_into_an_old_copy(tmp_path):
    """Does collect_cohort refuse a dest that already holds files, rather than mix old copies with new?"""
    make_submission(tmp_path / "submitted")
    (tmp_path / "dest" / "zoe" / A).mkdir(parents=True)  # last week's run, of a student gone since
    (tmp_path / "dest" / "zoe" / A / "01_old.ipynb").write_bytes(b"old")
    with pytest.raises(FileExistsError):
        collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED).students


def test_a_notebook_nested_200000_deep_stops_neither_the_collect_nor_the_flags(tmp_path):
    """Does a notebook holding a JSON array nested 200,000 deep (which stopped both graders for the class when the
    driver fingerprinted it) get its student a row, the others their copies and the cohort its flags?"""
    from autograder.collecting.flags import cohort_flags

    deep = b'{"cells": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    make_submission(tmp_path / "submitted", "alice", {"01_intro.ipynb": b'{"cells": []}'})
    make_submission(tmp_path / "submitted", "bob", {"01_intro.ipynb": b'{"cells": []}'})
    make_submission(tmp_path / "submitted", "eve", {"01_intro.ipynb": deep})
    cohort = collect_cohort(tmp_path / "submitted", A, tmp_path / "dest", wanted=WANTED)
    assert [(c.student, c.folder is not None) for c in cohort.students] == [("alice", True), ("bob", True),
                                                                           ("eve", True)]
    assert dict(cohort.students[2].prints.notebooks) == {"01_intro.ipynb": None}  # unreadable: no fingerprint
    assert [(f.student, f.other) for f in cohort_flags(cohort.students, A)] == [("alice", "bob")]


def test_links_that_stay_inside_the_submission_are_followed(tmp_path):
    """Is an outputs/ that links to a folder of the student's own submission entered, and a notebook that links to a
    file of theirs copied by its content (a copy with no links in it), as Jupyter and the student see them?"""
    files = {"runs/vanilla.model.params": b"params", "runs/vanilla.nopretrain.dev.predictions": b"Oslo\n",
             "work/intro-v2.ipynb": b'{"cells": [2]}'}
    folder = make_submission(tmp_path / "submitted", files=files)
    (folder / "outputs").symlink_to("runs", target_is_directory=True)
    (folder / "01_intro.ipynb").symlink_to("work/../work/intro-v2.ipynb")
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    copied = {rel: data for rel, data in tree(got.folder).items() if data != "dir"}
    assert copied == {"01_intro.ipynb": b'{"cells": [2]}', "outputs/vanilla.model.params": b"params",
                      "outputs/vanilla.nopretrain.dev.predictions": b"Oslo\n"}
    assert got.notes == {}


@pytest.mark.parametrize("target, words", [("../../bob/a5/runs", "outside the submission"),
                                           ("/etc", "outside the submission"), ("loop", "a chain of more than"),
                                           ("missing", "a symbolic link to nothing")])
def test_a_link_that_leaves_the_submission_is_named_in_the_students_note(tmp_path, target, words):
    """Is an outputs/ linking out of the submission (to a classmate's runs, an absolute path), in a loop or to nothing
    left out, with the student's note naming what it is?"""
    make_submission(tmp_path / "submitted", "bob", files={"runs/vanilla.model.params": b"bob's"})
    folder = make_submission(tmp_path / "submitted")
    (folder / "outputs").symlink_to(target)
    (folder / "loop").symlink_to("loop")
    got = collect_submission(tmp_path / "submitted" / "alice", "alice", A, tmp_path / "dest", wanted=WANTED)
    assert not (got.folder / "outputs").exists()
    assert any(words in reason for reason in got.dropped), got.dropped
    assert words in got.notes["outputs"], got.notes
