"""The sandbox's entry point:

    python -I -c 'from inside.job import main; main()' JOB REQUEST ANSWER_FD [DECODE_FDS SECONDS]

Jobs:
  probe    run the student's notebooks as Jupyter's Run All does (each on its own,
           so one broken notebook does not hide the others; in a writable working
           folder; each cell within the cell limit, all within the job's own
           deadline) and, where each check's test cell stands, its probe on the
           grader's inputs; per check, the raw output or what stopped it.
  decode   no student code: answer questions with trusted model code and the
           submitted params (loaded with ``weights_only``), for the run parts.
           The score of record runs it first inside the probe job, forked before
           any student code (``decode_first``); the audit runs it on its own.
  retrain  the audit, with no student code: the course's reference notebooks
           carry out the named training runs (course_lib.runs) on the course
           data, with the graded preset, the hyperparameters the student's glue
           chose and the seeds the student's runs recorded; back come the params
           each run part ends with, raw: the grader decodes them itself with a
           decode job.
The answer goes to a pipe the grader reads with a size cap; prints go to a log
that only the instructor sees.
"""
from __future__ import annotations

import os
import re
import sys
import time
import traceback
import types
from dataclasses import dataclass

from . import wire
from .decoding import decode
from .out_of_memory import ran_out_of_memory
from .process_state import ProcessState
from .working_folder import enter_working_folder, working_folder

CELL_LABEL = re.compile(r"^\d\d_[A-Za-z0-9_]+\.ipynb cell \d+( \([A-Za-z0-9_.-]{1,60}\))?$")


class CheckTimeout(Exception):
    """One probe ran past its share of the job's time."""


def _where(tb) -> str | None:
    """The innermost notebook cell and line of a traceback: '03_x.ipynb cell 2 (03-span) line 7'."""
    found = None
    for frame, lineno in traceback.walk_tb(tb):
        label = frame.f_code.co_filename
        if CELL_LABEL.match(label):
            found = f"{label} line {lineno}"
    return found


def _error(kind: str, err: BaseException | None = None) -> dict:
    if err is not None:  # traceback to the instructor's log; the student gets the grader's words
        traceback.print_exception(err, file=sys.stdout)
    out = {"kind": kind}
    if err is not None:
        out["type"] = type(err).__name__
        out["where"] = _where(err.__traceback__)
    return out


@dataclass
class Loaded:
    """One notebook as its cells left it."""

    names: dict  # the names it defined
    failed: dict | None  # what went wrong (unreadable, failing cells), or None
    not_written: list[str]  # labels of cells that raised NotImplementedError
    out_of_time: bool = False  # the job's deadline stopped it before its last cell


def load_one(path: str, index: int, cell_seconds: float | None, skip_tags=None, at_test=None,
             deadline: float | None = None) -> Loaded:
    """One notebook's names, loaded as nbgrader runs it (past a failing cell); what went wrong, if
    anything. ``skip_tags``, ``at_test`` and ``deadline`` as in
    ``course_lib.loader.load.load_notebooks`` (default: its SKIP_TAGS)."""
    from course_lib.loader.load import SKIP_TAGS, NotebookLoadError, load_notebooks

    try:
        module = load_notebooks([path], module_name=f"submission_{index}", errors="record", cell_seconds=cell_seconds,
                                skip_tags=SKIP_TAGS if skip_tags is None else skip_tags, at_test=at_test,
                                deadline=deadline)
    except NotebookLoadError:
        return Loaded({}, {"kind": "unreadable"}, [])
    for labels in module.__repeated__:  # for the instructor: a cell split or copied in JupyterLab
        print(f"[grader] one grade_id in {len(labels)} cells, each run in order (a check at the last): "
              f"{'; '.join(labels)}", flush=True)
    failed = None
    if module.__errors__:
        first = module.__errors__[0]
        where = first.label + (f" line {first.line}" if first.line else "")
        failed = {"kind": "cell", "type": first.kind, "where": where, "count": len(module.__errors__)}
    if module.__out_of_time__:
        print(f"[grader] out of time before {module.__out_of_time__}", flush=True)
    return Loaded(_own(vars(module)), failed, module.__not_written__, module.__out_of_time__ is not None)


def _own(names: dict) -> dict:
    """A notebook's names without the module's own (``__name__``, ``__errors__``, ...)."""
    return {k: v for k, v in names.items() if not k.startswith("__")}


def load_parts(paths: list[str], cell_seconds: float | None = None) -> tuple[types.SimpleNamespace, dict, list[str]]:
    """Every notebook loaded on its own and merged in order, as a later notebook's ``parts_with``
    sees the earlier ones; {notebook: what went wrong} for those that could not be read or had
    failing cells."""
    merged: dict = {}
    failed: dict = {}
    not_written: list[str] = []
    for i, path in enumerate(paths):
        loaded = load_one(path, i, cell_seconds)
        if loaded.failed:
            failed[os.path.basename(path)] = loaded.failed
        not_written += loaded.not_written
        merged.update(loaded.names)
    return types.SimpleNamespace(**merged), failed, not_written


def _run_check(probes: dict, check: dict, parts: types.SimpleNamespace, deadline: float | None = None) -> dict:
    """One probe on the grader's inputs, in the names of the check's own notebook: its raw output
    (encoded for the wire at once, so a later cell that changes a tensor in place changes nothing)
    or what stopped it. Its own time limit, or what is left before ``deadline`` when that is less."""
    from course_lib.loader.time_limit import time_limit

    missing = [n for n in check["needs"] if not hasattr(parts, n)]
    if missing:
        return {"error": {"kind": "missing", "names": missing}}
    seconds = max(1, int(check.get("seconds", 60)))
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        return {"error": {"kind": "out_of_time"}}
    cut = left is not None and left < seconds  # the job's deadline, not the check's own limit, would stop it
    started = time.monotonic()
    try:
        with time_limit(min(seconds, left) if cut else seconds, CheckTimeout):
            return {"output": wire.encode(probes[check["probe"]](parts, check["inputs"]))}
    except NotImplementedError as err:
        return {"error": _error("not_written", err)}
    except CheckTimeout as err:
        return {"error": _error("out_of_time" if cut else "timeout", err)}
    except BaseException as err:  # SystemExit and KeyboardInterrupt from student code too
        return {"error": _error("memory" if ran_out_of_memory(err) else "raised", err)}
    finally:
        print(f"[grader] {check['grade_id']}: {time.monotonic() - started:.1f} s", flush=True)


def probe(request: dict) -> dict:
    """Each notebook as its own kernel runs it under Run All: the process-wide settings put back
    first, then every cell in order, each check's probe where its test cell stands, on the names as
    they are there (a later cell that rebinds a name changes nothing; a name or a setting of 08
    never reaches 07's checks). A check whose test cell is not in the notebook runs on the
    notebook's final names. A notebook with no check is not run: its names reach no check. The
    notebooks share a writable working folder (``working_folder``), as they share their folder
    under nbgrader. Past ``request["seconds"]`` no cell or check starts: what was checked before
    keeps its answer, the rest are "out_of_time"."""
    from course_lib.loader.load import RUN_ALL

    from .probes import PROBES

    probes = dict(PROBES)  # taken before any student code runs (it could rebind the module's table)
    started = time.monotonic()
    deadline = started + float(request["seconds"]) if request.get("seconds") else None
    working = working_folder(os.getcwd())
    enter_working_folder(working)
    fresh = ProcessState.taken(working)
    answers = {"failed_notebooks": {}, "not_written": [], "checks": {}, "out_of_time": []}
    waiting = list(request["checks"])
    for i, path in enumerate(request["notebooks"]):
        mine = {c["grade_id"]: c for c in waiting if f"{c['notebook']}.ipynb" == os.path.basename(path)}
        waiting = [c for c in waiting if c["grade_id"] not in mine]
        if not mine:
            continue

        def at_test(grade_id: str, names: dict, mine: dict = mine) -> None:
            if grade_id in mine:  # the grader's check at its test cell, which itself never runs
                parts = types.SimpleNamespace(**_own(names))
                answers["checks"][grade_id] = _run_check(probes, mine.pop(grade_id), parts, deadline)

        fresh.restore()
        began = time.monotonic()
        loaded = load_one(path, i, request.get("cell_seconds"), RUN_ALL, at_test, deadline)
        print(f"[grader] {os.path.basename(path)}: run and checked in {time.monotonic() - began:.1f} s", flush=True)
        if loaded.failed:
            answers["failed_notebooks"][os.path.basename(path)] = loaded.failed
        if loaded.out_of_time:
            answers["out_of_time"].append(os.path.basename(path))
        answers["not_written"] += [w for w in loaded.not_written if CELL_LABEL.match(w)]
        for check in mine.values():  # its test cell is not in the notebook, or the deadline came first
            answers["checks"][check["grade_id"]] = {"error": {"kind": "out_of_time"}} if loaded.out_of_time else \
                _run_check(probes, check, types.SimpleNamespace(**loaded.names), deadline)
    for check in waiting:  # their notebook is not in the submission
        answers["checks"][check["grade_id"]] = {"error": {"kind": "missing", "names": list(check["needs"])}}
    fresh.restore()
    print(f"[grader] notebooks loaded and checked in {time.monotonic() - started:.1f} s", flush=True)
    return answers


def _with_hyperparameters(preset, chosen: dict):
    """The preset with the student's chosen fields under each stage's overrides (the preset's own
    still win, as in the student's runs)."""
    import dataclasses

    stages = {stage: {**{k: tuple(v) if isinstance(v, list) else v for k, v in chosen.get(stage, {}).items()},
                      **getattr(preset, stage)}
              for stage in ("pretrain", "finetune_without_pretrain", "finetune_with_pretrain")}
    return dataclasses.replace(preset, **stages)


def retrain(request: dict) -> dict:
    """The named training runs with the reference notebooks' parts; the final params of each run
    part (or why not)."""
    import torch

    from course_lib.presets import get_preset
    from course_lib.run_specs import RUNS
    from course_lib.runs import run

    parts, failed, _ = load_parts(request["notebooks"], request.get("cell_seconds"))
    preset = _with_hyperparameters(get_preset(request["preset"]), request.get("hyperparameters") or {})
    out_dir = "/tmp/audit" if os.path.isdir("/tmp") else "audit"
    stopped: dict[str, str] = {}  # run -> the error type that stopped it
    for name in request["runs"]:
        if any(before in stopped for before in request["after"].get(name, [])):
            stopped[name] = "an earlier run failed"
            continue
        started = time.monotonic()
        try:
            run(name, parts, preset=preset, data_dir=request["data_dir"], out_dir=out_dir,
                seed=int(request["seeds"].get(name, 0)), progress=False, num_threads=1)
        except Exception as err:  # that run (and what needs it) is reported, the rest go on
            traceback.print_exception(err, file=sys.stdout)
            stopped[name] = type(err).__name__
        print(f"[grader] retrain {name}: {time.monotonic() - started:.1f} s", flush=True)
    out = {"failed_notebooks": failed, "parts": {}}
    for part, final in request["finals"].items():
        if final in stopped:
            out["parts"][part] = {"error": stopped[final]}
            continue
        state = torch.load(os.path.join(out_dir, RUNS[final].writes), map_location="cpu", weights_only=True)
        out["parts"][part] = {"state": state}
    return out


JOBS = {"probe": probe, "decode": decode, "retrain": retrain}


def main(argv: list[str] | None = None) -> int:
    """Run JOB on the request file and write its answer to the answer pipe; exits the process."""
    job, request_path, answer_fd, *decode_args = argv or sys.argv[1:]
    # the answer pipe is opened before any student code runs; what the code prints goes to the log
    answer = os.fdopen(int(answer_fd), "wb")
    if decode_args:  # DECODE_REQUEST_FD DECODE_ANSWER_FD SECONDS: the decode first, its pipes shut before the probe
        from .decode_first import decode_first

        decode_first(int(decode_args[0]), int(decode_args[1]), float(decode_args[2]))
    with open(request_path, "rb") as f:
        request = wire.loads(f.read())
    result = JOBS[job](request)
    answer.write(wire.dumps(result))
    answer.close()
    sys.stdout.flush()
    os._exit(0)  # no atexit hooks a submission may have registered


if __name__ == "__main__":
    main()
