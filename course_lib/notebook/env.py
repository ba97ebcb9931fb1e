"""Where a notebook's training cells read data and write outputs, and which preset they use.

One place for every notebook, so a test or a grader switches all of them at once:
  COURSE_PRESET    gpu | cpu | smoke          (default: cpu, or the course's in a student copy)
  COURSE_SEED      the training's random seed (default: the student's own, derived from their student id by
                   course_lib.seeds; recorded in each run's log, where the grader's audit reads it to retrain
                   the run)
  COURSE_DATA_DIR  folder of wiki.txt + TSVs  (default: a student copy's course_data/; in the repository its
                   data/world; notebooks copied elsewhere their own data/world beside them; a world is written on
                   first use)
  COURSE_OUT_DIR   folder for params, predictions and run logs (default: outputs/ beside the notebooks,
                   so that the notebooks' folder is the whole hand-in)
While nbgrader validates or autogrades (NBGRADER_EXECUTION is set) training cells
load saved run outputs instead of retraining, and widgets do nothing.

Imported in a Jupyter kernel, it also makes an answer not written yet (the release's
``raise NotImplementedError()``) show as one line instead of a traceback (``course_lib.notebook.not_written``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from course_lib import layout
from course_lib.contract import PARTS
from course_lib.notebook import not_written
from course_lib.runs import RunError, RunResult, code_prints, run
from course_lib.seeds import choose_seed
from course_lib.world import write_world

PRESET = os.environ.get("COURSE_PRESET", layout.DEFAULT_PRESET)
GRADED_PRESET = layout.GRADED_PRESET  # what the run cells hold the runs to
# relative to the notebook's folder, where a kernel runs
DATA_DIR = Path(os.environ["COURSE_DATA_DIR"]) if os.environ.get("COURSE_DATA_DIR") else layout.data_dir_for(Path.cwd())
# relative to the notebook's folder: a kernel runs there
OUT_DIR = Path(os.environ.get("COURSE_OUT_DIR", "outputs")).absolute()
SEED = choose_seed().seed  # COURSE_SEED, else the student's personal seed
GRADING = bool(os.environ.get("NBGRADER_EXECUTION"))
# run -> the prints of the graded code it calls, as this kernel last defined it (the run cells compare the logs')
CURRENT_CODE: dict[str, dict[str, str]] = {}

not_written.install()


def ensure_data() -> Path:
    """The data folder, writing the default synthetic world there if it is empty."""
    if not (DATA_DIR / layout.WIKI).is_file():
        if "COURSE_DATA_DIR" in os.environ:
            raise FileNotFoundError(f"COURSE_DATA_DIR={DATA_DIR} holds no wiki.txt")
        write_world(DATA_DIR, layout.DEFAULT_WORLD_SEED)  # no test answers in a student folder
    return DATA_DIR


def run_or_load(name: str, parts) -> RunResult | None:
    """Carry out a named run, or while grading, read the result it saved earlier (None if absent).

    A run that cannot start (a part not written yet, a run before it not done) prints one line saying why and
    returns None, so the cells after it still run.
    """
    try:
        CURRENT_CODE[name] = code_prints(parts, name)
    except Exception:  # noqa: BLE001 (parts the notebooks lack: the run says so below)
        CURRENT_CODE.pop(name, None)
    if GRADING:
        log = OUT_DIR / f"{name}.json"
        shown = f"{OUT_DIR.name}/{log.name}"  # where the folder lives is the grader's business
        if not log.is_file():
            print(f"{name}: no saved run output ({shown}); skipped while grading")
            return None
        # only for display: grades of the runs come from the grader's own scoring of the files
        try:
            return RunResult.from_log(json.loads(log.read_text(encoding="utf-8")))
        except (ValueError, TypeError, AttributeError) as err:
            print(f"{name}: the saved run output {shown} is unreadable ({type(err).__name__}); skipped while grading")
            return None
    try:
        return run(name, parts, preset=PRESET, data_dir=ensure_data(), out_dir=OUT_DIR, seed=SEED)
    except NotImplementedError as err:
        what = not_written.unwritten(err)
        if what is None:
            raise  # not the release's stub: a real error, shown with its traceback
        part = PARTS.get(what.split(".")[0])
        print(f"{name}: skipped, {what} is not written yet" + (f" ({part.notebook})" if part else ""))
    except RunError as err:
        print(f"{name}: skipped, {err}")
    return None


def written(answer):
    """``answer`` itself, or NotImplementedError while it is still None (its cell's placeholder, not written yet).

    For the cells that use an answer: inside ``needs(...)`` the error becomes its one-line reminder."""
    if answer is None:
        raise NotImplementedError
    return answer


def stored_and_answered(variant: str, parts) -> tuple[float, float] | None:
    """(recall of the pretrained model, dev accuracy after finetuning) of a variant's saved runs.

    Recall is the share of dev biographies the pretrained params complete with the
    right place (``course_lib.gpt.recall``); None while grading (display only) or when
    the runs' files are missing.
    """
    from course_lib.data_files import read_birth_places, read_text
    from course_lib.gpt.checkpoint import load_params
    from course_lib.gpt.datasets import CharCorruptionDatasetBase
    from course_lib.gpt.recall import askable_mentions, recall
    from course_lib.presets import get_preset
    from course_lib.run_specs import RUNS
    from course_lib.runs import DEV, WIKI, build_model, model_config

    params, log = OUT_DIR / f"{variant}.pretrain.params", OUT_DIR / f"{variant}_eval_dev_with_pretrain.json"
    if GRADING or not params.is_file() or not log.is_file():
        return None
    preset = get_preset(PRESET)
    data_dir = ensure_data()
    text = read_text(data_dir / WIKI)
    vocab = CharCorruptionDatasetBase(text, preset.block_size).vocab
    model = build_model(parts, RUNS[f"{variant}_pretrain"], model_config(preset, len(vocab)))
    model = load_params(model, params)
    mentions = askable_mentions(text, read_birth_places(data_dir / DEV), preset.block_size)
    answered = json.loads(log.read_text(encoding="utf-8")).get("accuracy")
    if not mentions or answered is None:
        return None
    return recall(model, vocab, mentions), answered


def parts_with(earlier_notebooks: list[str], current: dict):
    """Graded parts from earlier notebooks (paths relative to this folder), overlaid by the live ``globals()``."""
    from types import SimpleNamespace

    from course_lib.loader.load import load_notebooks

    module = load_notebooks([Path(p) for p in earlier_notebooks], module_name="earlier_notebooks")
    merged = dict(vars(module))
    merged.update({k: v for k, v in current.items() if not k.startswith("_")})
    return SimpleNamespace(**merged)


class needs:
    """``with needs("your __getitem__"):`` around a display cell: until the student part is
    written (it raises NotImplementedError) or defined at all (NameError: its cell was not run,
    or Run All stopped earlier), print a reminder instead of a traceback."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            return False
        if issubclass(exc_type, NotImplementedError):
            print(f"(skipped: write {self.what} first)")
            return True
        if issubclass(exc_type, NameError):
            missing = getattr(exc, "name", None) or str(exc)
            print(f"(skipped: {missing!s} is not defined yet. Run the cells above this one, and write "
                  f"{self.what} first)")
            return True
        return False
