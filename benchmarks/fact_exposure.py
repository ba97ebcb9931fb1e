"""How often span-corruption pretraining shows the model each dev person's birth place.

    python benchmarks/fact_exposure.py --data-dir ../shared/data/cs224n_a5 --epochs 150

The graded dataset keeps a prefix of each biography of uniform random length in
[4, block_size * 7 / 8]; a fact is seen in a sample only when that prefix reaches past
the place's name. This prints the median position where the place ends, the mean
chance a sample keeps it, and the expected exposures per fact over --epochs.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "cs224n_a5"))
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=150)
    args = parser.parse_args(argv)
    data = Path(args.data_dir)
    docs = (data / "wiki.txt").read_text(encoding="utf-8").splitlines()
    questions = [line.split("\t") for line in (data / "birth_dev.tsv").read_text(encoding="utf-8").splitlines()]

    longest = int(args.block_size * 7 / 8)  # the dataset's upper bound on the kept prefix
    chances, ends = [], []
    for question, place in questions:
        name = question.removeprefix("Where was ").removesuffix(" born?")
        doc = next((d for d in docs if d.startswith(name)), "")
        at = doc.find(place)
        if at < 0:  # no biography, or the place is not written in it: never seen
            chances.append(0.0)
            continue
        end = at + len(place)
        ends.append(end)
        chances.append(max(0, longest - end + 1) / (longest - 4 + 1))
    chance = sum(chances) / len(chances)
    print(f"{len(questions)} dev questions; place found in the biography for {len(ends)}")
    print(f"median character where the place ends: {statistics.median(ends):g}")
    print(f"mean chance a sample keeps the place: {100 * chance:.1f}%")
    print(f"expected exposures per fact in {args.epochs} epochs: {chance * args.epochs:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
