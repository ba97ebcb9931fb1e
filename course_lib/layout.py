"""Where the course keeps things: file names, folders and defaults, each defined once.

Folders are resolved against the checkout (or the unpacked student bundle), never
against the current directory, so a notebook, the command line and the grader
mean the same folder by the same name.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

# the checkout, or the unpacked student bundle: the folder holding course_lib/
REPO = Path(__file__).resolve().parents[1]

ASSIGNMENT = "a5"  # nbgrader's assignment id
SOLUTIONS_DIR = REPO / "solutions" / ASSIGNMENT  # the instructor's notebooks (nbgrader source)
RELEASE_DIR = REPO / "notebooks" / ASSIGNMENT  # the student release nbgrader generates

# data files, in the original course's names
WIKI = "wiki.txt"  # one biography per line (pretraining corpus)
TRAIN = "birth_places_train.tsv"  # finetuning questions with answers
DEV = "birth_dev.tsv"  # dev questions with answers
TEST_INPUTS = "birth_test_inputs.tsv"  # test questions, no answers (what students get)
TEST_ANSWERS = "birth_test.tsv"  # test questions with answers: grader-only
WORLD_RECORD = "world.json"  # seed and sizes that remake the world, answers and all: grader-only
STUDENT_DATA_FILES = (WIKI, TRAIN, DEV, TEST_INPUTS)  # what a student's data folder holds
GRADER_ONLY_FILES = (TEST_ANSWERS, WORLD_RECORD)  # never in a student's folder or bundle

# a student bundle holds the course's data and preset here; a checkout does not
BUNDLED_DATA_DIR = REPO / "course_data"
BUNDLED_SETTINGS = BUNDLED_DATA_DIR / "course.json"  # {"preset": "cpu"}: the course's preset
_BUNDLED = json.loads(BUNDLED_SETTINGS.read_text(encoding="utf-8")) if BUNDLED_SETTINGS.is_file() else {}

DEFAULT_PRESET = _BUNDLED.get("preset", "cpu")  # the preset a laptop course trains with
# the preset the course grades (the grader's model is that preset's): a hub says so in COURSE_GRADED_PRESET, a
# student copy in its course.json; COURSE_PRESET, which a student may set, does not change it
GRADED_PRESET = os.environ.get("COURSE_GRADED_PRESET", "").strip() or DEFAULT_PRESET
WORLD_DIR = Path("data") / "world"  # where the default synthetic world is written on first use
# the course's data in a student copy; elsewhere the default synthetic world, written on first use
DEFAULT_DATA_DIR = BUNDLED_DATA_DIR if (BUNDLED_DATA_DIR / "wiki.txt").is_file() else REPO / WORLD_DIR
DEFAULT_OUT_DIR = REPO / "outputs"  # params, predictions and run logs


def data_dir_for(folder: Path) -> Path:
    """The data folder of notebooks in ``folder`` when COURSE_DATA_DIR is unset: the student copy's data, else the
    checkout's world for notebooks inside the checkout, else a world of their own beside them (notebooks copied
    out of the checkout never write into it)."""
    folder = Path(folder).resolve()
    if DEFAULT_DATA_DIR == BUNDLED_DATA_DIR or folder == REPO or REPO in folder.parents:
        return DEFAULT_DATA_DIR
    return folder / WORLD_DIR
DEFAULT_WORLD_SEED = 0  # random seed of the default world (public: its answers are too)

# the original course's files: $COURSE_ORIGINAL_DATA, else ../shared beside the checkout
ORIGINAL_DATA_DIR = Path(os.environ.get("COURSE_ORIGINAL_DATA", REPO.parent / "shared" / "data" / "cs224n_a5"))
