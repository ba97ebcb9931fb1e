"""Peak memory and time of each step's per-student unit on the worst inputs a student can hand in.

    .venv/bin/python benchmarks/unit_memory.py [--scale 1.0] [--params-only]

For each hostile input (a notebook of 990,000 empty objects, just under the value budget, one of 1.5 million,
one of 48 MB of them, one nested 200,000 deep, a 3 MB cell, 20,000 outputs, an nbformat 4.2 notebook of 141,000
cells with a byte-order mark and CRLF line ends that the collect step normalises, 8 MB and 19 MB of it; each also
as a job's answer) it runs
the units a
submission meets (the collect step with its prints, similarity's read, the report's parse, the wire's
parse of a job's answer); for each hostile params file (64 MB in one weight the prints sketch, 60 MB in
200,000 small tensors) the collect unit, which loads it to sketch it; and prints each unit's peak resident memory
(the unit process's own ``ru_maxrss``, which counts the grader's code the fork server preloaded, about 190 MB,
shared by every unit), its wall time and how it ended. The caps these numbers sit under are the steps'
``UnitLimits`` (on top of that preloaded code); docs/grading.md's guarantees table quotes both. Numbers go to
benchmarks/FINDINGS.md.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def notebook_cases(scale: float) -> dict[str, bytes]:
    import hostile_submissions as hs

    def objects(count: int) -> bytes:
        return b'{"cells": [' + b",".join([b"{}"] * count) + b"]}"

    def windows_save(cells: int, source: str) -> bytes:  # 7 values a cell: the collect step normalises all of it
        cell = b'{"cell_type": "markdown", "metadata": {}, "source": "' + source.encode() + b'"}'
        return (b"\xef\xbb\xbf" + b'{"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [\r\n'
                + b",\r\n".join([cell] * cells) + b"]}")

    return {
        "990,000 empty objects (2 MB)": objects(int(990_000 * scale)),  # the most the value budget lets through
        "BOM+CRLF 4.2, 141,000 cells, 8 MB": windows_save(int(141_000 * scale), ""),
        "BOM+CRLF 4.2, 141,000 cells, 19 MB": windows_save(int(141_000 * scale), "x" * 80),
        "1.5M empty objects (3 MB)": objects(int(1_500_000 * scale)),
        "48 MB of empty objects": objects(int(24_000_000 * scale)),
        "nested 200,000 deep": b'{"cells": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
        "a 3 MB cell": hs._notebook([hs._code("x = 1  # " + "y" * int(3_000_000 * scale))]),
        "20,000 outputs": hs._notebook([hs._code("print(1)", outputs=[
            {"output_type": "stream", "name": "stdout", "text": "z" * 100}] * int(20_000 * scale))]),
    }


def params_cases(scale: float) -> dict[str, dict]:
    """Params files at the collect step's 64 MB cap: what the collect unit loads (weights_only) to sketch."""
    import torch

    return {
        "64 MB in one weight": {"head.weight": torch.randn(int((16 * 2 ** 20 - 4096) * scale))},
        "200,000 small tensors": {f"blocks.{i}.mlp.0.weight": torch.zeros(1, 1) for i in range(int(200_000 * scale))},
    }


def params_rows(scale: float) -> list:
    """The collect unit (with its prints) of a submission holding each hostile params file."""
    import torch

    from autograder.checks.run_files import RUN_FILES
    from autograder.collecting.cohort import COLLECT, collect_one
    from autograder.collecting.collect import Limits, Wanted
    from autograder.units.unit import run_unit

    rows = []
    for name, state in params_cases(scale).items():
        root = Path(tempfile.mkdtemp(prefix="unit-memory-"))
        try:
            outputs = root / "submitted" / "eve" / "a5" / "outputs"
            outputs.mkdir(parents=True)
            torch.save(state, outputs / "vanilla.model.params")
            size = (outputs / "vanilla.model.params").stat().st_size
            got = run_unit(collect_one, (str(root / "submitted"), "eve", "a5", str(root / "dest"), Limits(),
                                         Wanted(frozenset(), frozenset(RUN_FILES))), COLLECT.limits)
            rows.append(("collect", f"{name} ({size / 2 ** 20:.0f} MB)", got))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="size of the big cases (1: as listed)")
    parser.add_argument("--params-only", action="store_true", help="only the hostile params files")
    args = parser.parse_args()
    import unit_work

    from autograder.collecting.cohort import COLLECT, collect_one
    from autograder.collecting.collect import Wanted
    from autograder.exports.report import REPORT_STEP
    from autograder.exports.similarity import READ_STEP, Settings, read_student, release_of
    from autograder.grading.cohort import UNIT_MEMORY_MB
    from autograder.units.limits import UnitLimits
    from autograder.units.unit import run_unit

    rows = []
    release = release_of(REPO / "notebooks" / "a5")  # every unit fingerprints the release's code as boilerplate
    cases = {} if args.params_only else notebook_cases(args.scale)
    for name, data in cases.items():
        root = Path(tempfile.mkdtemp(prefix="unit-memory-"))
        try:
            folder = root / "submitted" / "eve" / "a5"
            folder.mkdir(parents=True)
            (folder / "03_span_corruption.ipynb").write_bytes(data)
            wanted = Wanted(frozenset({"03_span_corruption.ipynb"}), frozenset())
            from autograder.collecting.collect import Limits

            got = run_unit(collect_one, (str(root / "submitted"), "eve", "a5", str(root / "dest"), Limits(), wanted),
                           COLLECT.limits)
            rows.append(("collect", name, got))
            copy = str(root / "dest" / "eve" / "a5")
            graded = {"03_span_corruption.ipynb": {"03-span-corruption": frozenset({"CharCorruptionDataset"})}}
            got = run_unit(read_student, ("eve", copy, graded,
                                          Settings(notebook_bytes=64 * 2 ** 20), release.code), READ_STEP.limits)
            rows.append(("similarity", name, got))
            from autograder.exports.report import _read

            got = run_unit(_read, (folder / "03_span_corruption.ipynb",), REPORT_STEP.limits)
            rows.append(("report", name, got))
            got = run_unit(unit_work.parse_answer, (data,),
                           UnitLimits(memory_mb=UNIT_MEMORY_MB))  # the grade unit's limit
            rows.append(("wire answer", name, got))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    if not args.params_only:  # the largest answer the cap lets through: one tensor, base64, just under ANSWER_CAP
        import torch

        from autograder.confinement.jobs import ANSWER_CAP
        from autograder.inside import wire

        answer = wire.dumps({"checks": {"x": torch.zeros(int((ANSWER_CAP * 3 // 4 - 4096) * args.scale) // 4)}})
        got = run_unit(unit_work.parse_answer, (answer,), UnitLimits(memory_mb=UNIT_MEMORY_MB))
        rows.append(("wire answer", f"one tensor, {len(answer) / 2 ** 20:.0f} MB", got))
    rows += params_rows(args.scale)
    print(f"{'unit':<12}{'input':<30}{'peak MB':>9}{'s':>7}  outcome")
    for unit, name, got in rows:
        peak = f"{got.peak_mb:.0f}" if got.peak_mb is not None else "-"
        said = "ok" if got.ok else got.failure
        if got.ok and isinstance(got.value, str):
            said = got.value[:60]
        elif got.ok and isinstance(got.value, tuple) and got.value[0] is None:
            said = f"refused: {got.value[1][:60]}"
        print(f"{unit:<12}{name:<30}{peak:>9}{got.seconds:>7.1f}  {said}")


if __name__ == "__main__":
    start = time.monotonic()
    main()
    print(f"({time.monotonic() - start:.0f} s)")
