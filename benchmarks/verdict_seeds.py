"""Every check's verdicts on many grading seeds: the suite's tests/autograder/checks/test_verdicts.py, on more seeds.

    .venv/bin/python benchmarks/verdict_seeds.py [--seeds 40] [-k EXPRESSION] [--workers 2]

The suite grades each wrong answer (and the reference) on 10 seeds; this runs the same table with VERDICT_SEEDS
seeds and prints what pytest printed and the wall time. Its figures go to benchmarks/FINDINGS.md ("Issue 40").
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="grading seeds per answer (0 to N-1)")
    parser.add_argument("-k", default="", help="only the tests pytest's -k selects")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (0: in one process)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    only = ["-k", args.k] if args.k else []
    command = [sys.executable, "-m", "pytest", "tests/autograder/checks/test_verdicts.py", "-n", str(args.workers),
               "--dist", "load", "-p", "no:cacheprovider", "--timeout", "0", *only]
    env = dict(os.environ, VERDICT_SEEDS=str(args.seeds))
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    print(done.stdout[-6000:], done.stderr[-2000:])
    print(f"{args.seeds} seeds per answer: {time.monotonic() - start:.0f} s, exit status {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
