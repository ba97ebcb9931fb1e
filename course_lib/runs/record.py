"""A run's log, ``outputs/<run>.json``: what the run did and wrote, and what a later check needs to tell whether
its files still fit the course: the preset, prints of the data files it read, of the graded code it called, of
the params it started from and of the files it wrote, whether it completed, and when.

A run that finds its own log complete, with the same prints, keeps its files instead of training again
(``course_lib.runs.carry_out``); the run cells of 02, 04 and 05 read the logs of a run's chain to say what to
redo (``course_lib.notebook.run_cells``). Logs written before these fields existed (format 1) still read.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

LOG_FORMAT = 2  # 1: the logs before issue 51 (no prints, no "completed")
# what makes two runs the same run: the same result from the same inputs
IDENTITY = ("name", "preset", "seed", "data", "code", "reads", "settings")


@dataclass
class RunResult:
    """What a run did and wrote: its log."""

    name: str  # the run's name
    preset: str  # preset used
    seconds: float  # wall time of the call that made this result
    written: list[str]  # files written, relative to out_dir
    correct: int | None = None  # evaluate runs with gold answers
    total: int | None = None
    history: list[dict] | None = None  # per-step loss (train runs)
    seed: int = 0  # the training's random seed: the grader's audit retrains with it
    completed: bool = True  # False while the run trains and after it stopped short (format 1 logs: True)
    finished: str | None = None  # when it completed (UTC, ISO 8601)
    steps: int | None = None  # training steps in all (train runs)
    data: dict[str, str] = field(default_factory=dict)  # data file read -> its print
    code: dict[str, str] = field(default_factory=dict)  # graded part called -> its code's print
    reads: dict[str, str] = field(default_factory=dict)  # params file it started from -> its print
    outputs: dict[str, str] = field(default_factory=dict)  # file written -> its print
    settings: str = ""  # print of what else decides the result: the model's and trainer's configs
    threads: str = ""  # what it trained on, e.g. "2 CPU threads (this machine's share: 2 CPUs)"
    format: int = LOG_FORMAT
    kept: bool = field(default=False, compare=False)  # this call found the run done and kept it (not logged)

    @property
    def accuracy(self) -> float | None:
        return None if self.total in (None, 0) else self.correct / self.total

    @property
    def steps_done(self) -> int:
        """Training steps done: the last step of the history."""
        return self.history[-1]["step"] if self.history else 0

    def log(self) -> dict:
        log = dataclasses.asdict(self) | {"accuracy": self.accuracy}
        del log["kept"]
        return log

    @classmethod
    def from_log(cls, saved: dict) -> RunResult:
        """A result from a log's JSON: fields it does not know are left out, those it lacks take their defaults;
        TypeError when a field the log must have is missing."""
        known = {f.name for f in dataclasses.fields(cls)}
        fields = {k: v for k, v in saved.items() if k in known - {"kept"}}
        fields.setdefault("format", 1)
        return cls(**fields)


def log_path(out_dir: Path, name: str) -> Path:
    return Path(out_dir) / f"{name}.json"


def write_log(result: RunResult, out_dir: Path) -> Path:
    """Write the run's log atomically (a reader never sees half of it)."""
    path = log_path(out_dir, result.name)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(result.log()), encoding="utf-8")
    tmp.replace(path)
    return path


def read_log(out_dir: Path, name: str) -> RunResult | None:
    """The run's log, None when there is none; ValueError when it is unreadable."""
    path = log_path(out_dir, name)
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        return RunResult.from_log(saved)
    except (TypeError, AttributeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path.name} is not a run log ({type(err).__name__})") from err


def file_print(path: Path) -> str | None:
    """16 hex digits of the file's SHA-256; None when it is missing."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()[:16]
    except OSError:
        return None


def prints(folder: Path, names) -> dict[str, str | None]:
    """name -> ``file_print`` of each file in ``folder``."""
    return {name: file_print(Path(folder) / name) for name in names}


def settings_print(**settings) -> str:
    """16 hex digits of the JSON of ``settings`` (configs as dicts)."""
    text = json.dumps(settings, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def identity(result: RunResult) -> str:
    """The print of what makes a run this run (``IDENTITY``): a checkpoint resumes only the run that saved it."""
    return settings_print(**{f: getattr(result, f) for f in IDENTITY})


def kept(saved: RunResult | None, wanted: RunResult, out_dir: Path) -> bool:
    """Did ``saved`` (the run's log) complete what ``wanted`` would do, with files still as it wrote them?"""
    if saved is None or saved.format < LOG_FORMAT or not saved.completed:
        return False
    same = all(getattr(saved, f) == getattr(wanted, f) for f in IDENTITY)
    return same and bool(saved.outputs) and prints(out_dir, saved.outputs) == saved.outputs
