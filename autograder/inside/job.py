"""The sandbox's entry point: ``python -I -c 'from inside.job import main; main()' JOB REQUEST ANSWER_FD``.

Jobs:
  probe   load the student's notebooks (each on its own, so one broken notebook
          does not hide the others) and run each requested probe on the
          grader's inputs; per check, the raw output or what stopped it.
  decode  no student code: answer questions with trusted model code and the
          submitted params (loaded with ``weights_only``), for the run parts.
The answer goes to a pipe the grader reads with a size cap; prints go to a log
that only the instructor sees.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import time
import traceback
import types

from . import wire

CELL_LABEL = re.compile(r"^\d\d_[A-Za-z0-9_]+\.ipynb cell \d+( \([A-Za-z0-9_.-]{1,60}\))?$")


class CheckTimeout(Exception):
    """One probe ran past its share of the job's time."""


def _where(tb) -> str | None:
    """The innermost notebook cell (and line) in a traceback: '03_x.ipynb cell 2 (03-span) line 7'."""
    found = None
    for frame, lineno in traceback.walk_tb(tb):
        label = frame.f_code.co_filename
        if CELL_LABEL.match(label):
            found = f"{label} line {lineno}"
    return found


def _error(kind: str, err: BaseException | None = None) -> dict:
    if err is not None:  # the whole story for the instructor's log; the student reads the grader's words
        traceback.print_exception(err, file=sys.stdout)
    out = {"kind": kind}
    if err is not None:
        out["type"] = type(err).__name__
        out["where"] = _where(err.__traceback__)
    return out


def load_parts(paths: list[str]) -> tuple[types.SimpleNamespace, dict, list[str]]:
    """Every notebook loaded on its own and merged in order; {notebook: error} for those that failed."""
    from course_lib.notebook_loader import NotebookLoadError, load_notebooks

    merged: dict = {}
    failed: dict = {}
    not_written: list[str] = []
    for i, path in enumerate(paths):
        try:
            module = load_notebooks([path], module_name=f"submission_{i}")
        except NotebookLoadError as err:
            cause = err.__cause__
            failed[os.path.basename(path)] = {"kind": "load", "type": type(cause).__name__ if cause else "unreadable",
                                              "where": _where(cause.__traceback__) if cause else None}
            continue
        not_written += module.__not_written__
        merged.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    return types.SimpleNamespace(**merged), failed, not_written


def _alarm(signum, frame):
    raise CheckTimeout()


def probe(request: dict) -> dict:
    from .probes import PROBES

    probes = dict(PROBES)  # taken before any student code runs (it could rebind the module's table)
    started = time.monotonic()
    parts, failed, not_written = load_parts(request["notebooks"])
    print(f"[grader] notebooks loaded in {time.monotonic() - started:.1f} s", flush=True)
    answers = {"failed_notebooks": failed, "not_written": [w for w in not_written if CELL_LABEL.match(w)],
               "checks": {}}
    signal.signal(signal.SIGALRM, _alarm)
    for check in request["checks"]:
        missing = [n for n in check["needs"] if not hasattr(parts, n)]
        if missing:
            answers["checks"][check["grade_id"]] = {"error": {"kind": "missing", "names": missing}}
            continue
        signal.alarm(max(1, int(check.get("seconds", 60))))
        started = time.monotonic()
        try:
            output = probes[check["probe"]](parts, check["inputs"])
            answers["checks"][check["grade_id"]] = {"output": output}
        except NotImplementedError as err:
            answers["checks"][check["grade_id"]] = {"error": _error("not_written", err)}
        except CheckTimeout as err:
            answers["checks"][check["grade_id"]] = {"error": _error("timeout", err)}
        except MemoryError as err:
            answers["checks"][check["grade_id"]] = {"error": _error("memory", err)}
        except BaseException as err:  # SystemExit and KeyboardInterrupt from student code too
            answers["checks"][check["grade_id"]] = {"error": _error("raised", err)}
        finally:
            signal.alarm(0)
            print(f"[grader] {check['grade_id']}: {time.monotonic() - started:.1f} s", flush=True)
    return answers


def decode(request: dict) -> dict:
    """Predictions of each run part's params with trusted model code (no student code is loaded)."""
    import torch

    from course_lib.datasets import CharCorruptionDatasetBase
    from course_lib.evaluation import predict_places
    from course_lib.model import GPT, GPTConfig
    from course_lib.notebook_loader import load_notebooks

    torch.manual_seed(0)
    with open(request["wiki"], encoding="utf-8") as f:
        vocab = CharCorruptionDatasetBase(f.read(), request["block_size"]).vocab
    classes = {"vanilla": None}
    if request.get("synthesizer_reference"):
        classes["synthesizer"] = load_notebooks([request["synthesizer_reference"]],
                                                module_name="reference_synthesizer").SynthesizerAttention
    out = {}
    for part in request["parts"]:
        config = GPTConfig(len(vocab), request["block_size"], **request["model"])
        kwargs = {} if classes[part["attention"]] is None else {"attention_class": classes[part["attention"]]}
        model = GPT(config, **kwargs)
        try:
            state = torch.load(part["params"], map_location="cpu", weights_only=True)
            if not isinstance(state, dict):
                raise TypeError("not a state_dict")
            model.load_state_dict(state, strict=True)
        except Exception as err:  # unreadable, unsafe or of another shape: that part's problem only
            out[part["name"]] = {"error": {"kind": "params", "type": type(err).__name__}}
            continue
        model.eval()
        out[part["name"]] = {split: predict_places(model, vocab, questions, request.get("batch_size", 256))
                             for split, questions in part["questions"].items()}
    return out


JOBS = {"probe": probe, "decode": decode}


def main(argv: list[str] | None = None) -> int:
    job, request_path, answer_fd = argv or sys.argv[1:]
    # the answer pipe is opened before any student code runs; what the code prints goes to the log
    answer = os.fdopen(int(answer_fd), "wb")
    with open(request_path, "rb") as f:
        request = wire.loads(f.read())
    result = JOBS[job](request)
    answer.write(wire.dumps(result))
    answer.close()
    sys.stdout.flush()
    os._exit(0)  # no atexit hooks a submission may have registered


if __name__ == "__main__":
    main()
