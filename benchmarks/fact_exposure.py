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

from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.recall import place_mentions
from course_lib.layout import ORIGINAL_DATA_DIR


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=150)
    args = parser.parse_args(argv)
    data = Path(args.data_dir)
    examples = read_birth_places(data / "birth_dev.tsv")
    mentions = place_mentions(read_text(data / "wiki.txt").split("\n"), examples)

    longest = int(args.block_size * 7 / 8)  # the dataset's upper bound on the kept prefix
    # a sample keeps the fact when its prefix length (uniform in 4..longest) reaches the place's end;
    # no biography, or a place never written in it: never seen
    chances = [0.0 if m is None else max(0, longest - m.end + 1) / (longest - 4 + 1) for m in mentions]
    ends = [m.end for m in mentions if m is not None]
    chance = sum(chances) / len(chances)
    print(f"{len(examples)} dev questions; place found in the biography for {len(ends)}")
    print(f"median character where the place ends: {statistics.median(ends):g}")
    print(f"mean chance a sample keeps the place: {100 * chance:.1f}%")
    print(f"expected exposures per fact in {args.epochs} epochs: {chance * args.epochs:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
