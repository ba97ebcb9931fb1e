"""A long fuzz of every step that reads students' bytes: the suite's Hypothesis cohorts, many more of them, full size.

    .venv/bin/python benchmarks/fuzz_cohort.py [--examples 200]

Runs tests/autograder/units/test_hostile_cohort.py with FUZZ_EXAMPLES examples per property and the hostile cases
at full size (HOSTILE_SCALE=1: a notebook of 1.5 million empty objects, a 3 MB cell, 20,000 outputs), with
Hypothesis's statistics, and prints what pytest printed and the wall time. Its figures go to benchmarks/FINDINGS.md
("Hostile cohorts").
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200, help="generated cohorts per property")
    args = parser.parse_args()
    env = dict(os.environ, FUZZ_EXAMPLES=str(args.examples), HOSTILE_SCALE="1")
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/autograder/units/test_hostile_cohort.py", "-n", "0",
                           "-p", "no:cacheprovider", "--hypothesis-show-statistics", "-q", "--timeout", "0"],
                          cwd=REPO, env=env, capture_output=True, text=True)
    print(done.stdout[-6000:], done.stderr[-2000:])
    print(f"{args.examples} examples per property, full size: {time.monotonic() - start:.0f} s, "
          f"exit status {done.returncode}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
