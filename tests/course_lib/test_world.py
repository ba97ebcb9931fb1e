"""Tests for course_lib.world, the seeded synthetic world of people and biographies."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from course_lib.data_files import read_birth_places, read_text
from course_lib.layout import DEV, REPO, TEST_ANSWERS, TEST_INPUTS, TRAIN, WIKI, WORLD_RECORD
from course_lib.layout import STUDENT_DATA_FILES as STUDENT_FILES
from course_lib.world import (
    BIO_CHARSET,
    MAX_BIO_CHARS,
    WorldConfig,
    generate_world,
    parse_seed,
    write_world,
)

FILES = STUDENT_FILES + (TEST_ANSWERS, WORLD_RECORD)  # the last two only with answers_path, outside the student folder


@pytest.fixture(scope="module")
def world():
    return generate_world(0)


def _write(root: Path, seed, config: WorldConfig = WorldConfig()) -> dict[str, Path]:
    """The student files in root/students, the answers in root/grader_only."""
    return write_world(root / "students", seed, config, answers_path=root / "grader_only" / TEST_ANSWERS)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("world0"), seed=0)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]+", text))


def _has_word(text: str, phrase: str) -> bool:
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def test_same_seed_is_byte_identical(tmp_path):
    """Does the same seed give byte-identical files?"""
    a = _write(tmp_path / "a", seed=7)
    b = _write(tmp_path / "b", seed=7)
    assert set(a) == set(b) == set(FILES)
    for name in FILES:
        assert a[name].read_bytes() == b[name].read_bytes(), name


def test_different_seeds_differ(tmp_path):
    """Do different seeds give different worlds?"""
    a = _write(tmp_path / "a", seed=1)
    b = _write(tmp_path / "b", seed=2)
    for name in (WIKI, TRAIN, DEV, TEST_ANSWERS):
        assert a[name].read_bytes() != b[name].read_bytes(), name


def test_files_parse_and_counts_match(files):
    """Do the files parse with the course reader, with as many lines as the config asks?"""
    cfg = WorldConfig()
    train = read_birth_places(files[TRAIN], require_answers=True)
    dev = read_birth_places(files[DEV], require_answers=True)
    test = read_birth_places(files[TEST_ANSWERS], require_answers=True)
    inputs = read_birth_places(files[TEST_INPUTS])
    assert (len(train), len(dev), len(test), len(inputs)) == (cfg.n_train, cfg.n_dev, cfg.n_test, cfg.n_test)
    assert all(ex.place is None for ex in inputs)
    assert [ex.question for ex in inputs] == [ex.question for ex in test]
    wiki = read_text(files[WIKI])
    assert wiki.endswith("\n") and "\r" not in wiki
    assert len(wiki.split("\n")[:-1]) == cfg.n_train + cfg.n_dev + cfg.n_test
    for name in FILES:
        assert files[name].read_bytes().endswith(b"\n"), name
    summary = json.loads(read_text(files[WORLD_RECORD]))
    assert summary["seed"] == 0 and summary["config"]["n_train"] == cfg.n_train
    assert summary["counts"]["wiki_lines"] == cfg.n_train + cfg.n_dev + cfg.n_test


def test_splits_disjoint_and_wiki_only_people(tmp_path):
    """Are train/dev/test disjoint, with wiki-only people in wiki.txt alone?"""
    cfg = WorldConfig(n_train=40, n_dev=15, n_test=10, n_wiki_only=5, n_places=8)
    paths = _write(tmp_path, seed=3, config=cfg)
    names = [
        {ex.name for ex in read_birth_places(paths[f], require_answers=True)}
        for f in (TRAIN, DEV, TEST_ANSWERS)
    ]
    assert [len(n) for n in names] == [40, 15, 10]
    assert not (names[0] & names[1] or names[0] & names[2] or names[1] & names[2])
    wiki = read_text(paths[WIKI]).split("\n")[:-1]
    assert len(wiki) == 70
    asked = set().union(*names)
    assert sum(1 for line in wiki if line.split(".")[0] not in asked) == 5


def test_each_name_has_one_biography_with_its_place(files):
    """Does every asked-about name have exactly one biography, naming its birth place?"""
    wiki = read_text(files[WIKI]).split("\n")[:-1]
    lines_with_word: dict[str, list[str]] = {}  # surname -> lines holding it, to keep this fast
    for line in wiki:
        for word in _words(line):
            lines_with_word.setdefault(word, []).append(line)
    for f in (TRAIN, DEV, TEST_ANSWERS):
        for ex in read_birth_places(files[f], require_answers=True):
            surname = ex.name.split()[-1]
            hits = [line for line in lines_with_word.get(surname, []) if _has_word(line, ex.name)]
            assert len(hits) == 1, ex.name
            assert hits[0].startswith(ex.name + ". ")
            assert _has_word(hits[0], ex.place), (ex.name, ex.place)


def test_biography_shape(world):
    """Are biographies short, in the small character set, with the birth place early in sentence one?"""
    for p in world.people:
        bio = p.biography
        assert len(bio) <= MAX_BIO_CHARS, bio
        assert set(bio) <= BIO_CHARSET, bio
        assert bio.endswith(" .")
        first_sentence = bio[len(p.name) + 2:].split(". ")[0]
        assert _has_word(first_sentence, p.birth_place), bio
        assert _has_word(first_sentence, p.surname), bio
        assert re.search(rf"\b{p.birth_place}\b", bio).start() <= 70, bio
    lengths = [len(p.biography) for p in world.people]
    # short lines: a CPU sees each fact many times a minute
    assert sum(40 <= n <= 85 for n in lengths) >= 0.9 * len(lengths)


def test_names_and_places_are_well_formed(world):
    """Are names unique ASCII words and places unique single words of 4-10 letters?"""
    names = [p.name for p in world.people]
    surnames = [p.surname for p in world.people]
    assert len(set(names)) == len(names) and len(set(surnames)) == len(surnames)
    assert all(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]{4,8}", n) for n in names)
    assert len(set(world.places)) == len(world.places) == WorldConfig().n_places
    assert all(re.fullmatch(r"[A-Z][a-z]{3,9}", pl) for pl in world.places)
    assert not set(world.places) & set(surnames)


def test_majority_share_is_modest():
    """Is the most common birth place only about 4-12% of people?"""
    for seed in (0, 1, 2):
        w = generate_world(seed)
        for people in (w.split("train"), w.people):
            top = Counter(p.birth_place for p in people).most_common(1)[0][1]
            assert 0.04 <= top / len(people) <= 0.12, (seed, top / len(people))


def test_name_alone_does_not_reveal_place():
    """Does guessing the place from the first name score no better than the majority baseline + 3 points?"""
    # a large world, so that chance agreement on a small dev set does not decide the test
    world = generate_world(0, WorldConfig(n_train=6000, n_dev=3000, n_test=10))
    train, dev = world.split("train"), world.split("dev")
    majority = Counter(p.birth_place for p in train).most_common(1)[0][0]
    by_first: dict[str, Counter] = {}
    for p in train:
        by_first.setdefault(p.first_name, Counter())[p.birth_place] += 1
    guess = {first: c.most_common(1)[0][0] for first, c in by_first.items()}
    baseline = sum(p.birth_place == majority for p in dev) / len(dev)
    by_name = sum(guess.get(p.first_name, majority) == p.birth_place for p in dev) / len(dev)
    assert by_name <= baseline + 0.03, (by_name, baseline)


def test_each_biography_names_another_place(world):
    """Does every biography mention at least one place other than the birth place?"""
    places = set(world.places)
    for p in world.people:
        others = (_words(p.biography) & places) - {p.birth_place}
        assert others, p.biography
        assert others == set(p.other_places), p.biography


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(n_train=0),
        dict(n_dev=-1),
        dict(n_test=0),
        dict(n_wiki_only=-1),
        dict(n_places=1),
        dict(n_places=10_000),
        dict(n_train=1.5),
        dict(place_skew=-0.1),
        dict(second_place_prob=2.0),
    ],
)
def test_config_rejects_bad_values(kwargs):
    """Does WorldConfig reject a bad value with ValueError?"""
    field = next(iter(kwargs))
    with pytest.raises(ValueError, match=field):
        WorldConfig(**kwargs)


def test_two_places_still_works():
    """Does the smallest world (2 places) still give every biography another place?"""
    w = generate_world(5, WorldConfig(n_train=5, n_dev=3, n_test=2, n_places=2))
    for p in w.people:
        assert len(p.other_places) == 1 and p.other_places[0] != p.birth_place
        assert _has_word(p.biography, p.other_places[0])


def test_questions_use_only_characters_of_the_wiki(tmp_path):
    """Can every question and place be encoded with the vocabulary of the world's wiki.txt?"""
    paths = _write(tmp_path, 0)
    wiki_chars = set(paths[WIKI].read_text(encoding="utf-8"))
    for name in (TRAIN, DEV, TEST_ANSWERS):
        text = paths[name].read_text(encoding="utf-8").replace("\t", "").replace("\n", "")
        assert set(text) <= wiki_chars, set(text) - wiki_chars


def test_second_sentences_when_asked_for():
    """With second_place_prob=1, do most biographies that fit add a second sentence naming a further place?"""
    world = generate_world(0, WorldConfig(n_train=40, n_dev=10, n_test=10, second_place_prob=1.0))
    with_second = [p for p in world.people if len(p.other_places) == 2]
    assert len(with_second) >= 0.5 * len(world.people)  # the rest would pass the length limit
    for p in with_second:
        assert len(p.biography) <= MAX_BIO_CHARS and all(_has_word(p.biography, q) for q in p.other_places)


def _answer_lines(seed) -> list[str]:
    return [f"{p.question}\t{p.birth_place}" for p in generate_world(seed).split("test")]


def test_student_folder_holds_no_answers(tmp_path):
    """Does write_world without answers_path leave no test answer (nor the seed) in the student folder?"""
    paths = write_world(tmp_path, 0)
    assert set(paths) == set(STUDENT_FILES)
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(STUDENT_FILES)
    answers = _answer_lines(0)
    for f in tmp_path.iterdir():
        text = f.read_text(encoding="utf-8")
        assert not [line for line in answers if line in text], f.name


def test_answers_go_to_answers_path_only(tmp_path):
    """With answers_path, do the answers go there alone, one per test question, in the same order?"""
    answers = tmp_path / "grader_only" / TEST_ANSWERS
    paths = write_world(tmp_path / "students", 0, answers_path=answers)
    assert paths[TEST_ANSWERS] == answers and paths[WORLD_RECORD] == answers.parent / WORLD_RECORD
    assert sorted(f.name for f in (tmp_path / "students").iterdir()) == sorted(STUDENT_FILES)
    gold = read_birth_places(answers, require_answers=True)
    inputs = read_birth_places(paths[TEST_INPUTS])
    assert [ex.question for ex in gold] == [ex.question for ex in inputs] and len(gold) == WorldConfig().n_test
    assert answers.read_text(encoding="utf-8").splitlines() == _answer_lines(0)
    if os.name == "posix":  # a private folder and file, as the grader keeps them
        assert (answers.parent.stat().st_mode & 0o777, answers.stat().st_mode & 0o777) == (0o700, 0o600)


def test_answers_path_inside_the_student_folder_is_refused(tmp_path):
    """Is an answers_path inside the student folder refused before anything is written?"""
    with pytest.raises(ValueError, match="inside the student folder"):
        write_world(tmp_path / "students", 0, answers_path=tmp_path / "students" / "private" / TEST_ANSWERS)
    assert not (tmp_path / "students").exists()


def test_stale_answers_are_removed_from_the_student_folder(tmp_path):
    """Does writing a world into a folder an older version filled remove its answers file and world.json?"""
    for name in (TEST_ANSWERS, WORLD_RECORD):
        (tmp_path / name).write_text("old\n")
    write_world(tmp_path, 0)
    assert not (tmp_path / TEST_ANSWERS).exists() and not (tmp_path / WORLD_RECORD).exists()


@pytest.mark.parametrize("text, seed", [("0", 0), ("12345678901234567890", 12345678901234567890),
                                        ("-3", -3), ("s3cret", "s3cret"), ("9f86d081884c7d65", "9f86d081884c7d65")])
def test_parse_seed(text, seed):
    """Does a command-line seed of digits give the int and anything else the string?"""
    assert parse_seed(text) == seed


def test_string_seed_makes_a_world_and_bad_seeds_are_refused():
    """Does a string seed give its own repeatable world, while an empty, bool, float or None seed is refused?"""
    assert generate_world("s3cret").people == generate_world("s3cret").people != generate_world(0).people
    for seed in ("", True, 1.5, None):
        with pytest.raises(ValueError, match="seed"):
            generate_world(seed)


def _cli_world(out: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "course_lib", "world", "--out", str(out), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cli_string_seed_writes_answers_apart(tmp_path):
    """Does `world --seed s3cret --answers-out A` repeat its files exactly, differ from seed 0, and keep answers in
    A?"""
    outputs = [_cli_world(tmp_path / d, "--seed", "s3cret", "--answers-out",
                          str(tmp_path / f"{d}-grader" / TEST_ANSWERS))
               for d in ("a", "b")]
    practice = _cli_world(tmp_path / "practice")  # the default seed, 0
    assert "no test answers written" in practice and "no test answers" not in outputs[0]
    assert sorted(f.name for f in (tmp_path / "practice").iterdir()) == sorted(STUDENT_FILES)
    for name in STUDENT_FILES:
        a, b = (tmp_path / "a" / name).read_bytes(), (tmp_path / "b" / name).read_bytes()
        assert a == b != (tmp_path / "practice" / name).read_bytes(), name
    for name in (TEST_ANSWERS, WORLD_RECORD):
        assert (tmp_path / "a-grader" / name).read_bytes() == (tmp_path / "b-grader" / name).read_bytes(), name
    assert sorted(f.name for f in (tmp_path / "a").iterdir()) == sorted(STUDENT_FILES)
    assert (tmp_path / "a-grader" / TEST_ANSWERS).read_text(encoding="utf-8").splitlines() == _answer_lines("s3cret")
    assert json.loads((tmp_path / "a-grader" / WORLD_RECORD).read_text(encoding="utf-8"))["seed"] == "s3cret"


def test_answers_into_another_worlds_student_folder_are_refused_in_one_line(tmp_path, capsys):
    """Is --answers-out inside another world's student folder refused with one clear line, nothing written?"""
    from course_lib.__main__ import main

    write_world(tmp_path / "public", seed=0)
    code = main(["world", "--out", str(tmp_path / "course"), "--seed", "7",
                 "--answers-out", str(tmp_path / "public" / "birth_test.tsv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "students' data" in err
    assert not (tmp_path / "public" / "birth_test.tsv").exists()
