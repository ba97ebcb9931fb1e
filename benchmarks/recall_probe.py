"""Judge pretrained params in seconds: how many dev birth places does the model write after their biography?

    python benchmarks/recall_probe.py outputs/time_to_bar/pretrain_19min.params --preset cpu-original
    python benchmarks/recall_probe.py outputs/ttb_1layer/pretrain_18.2min.params --set model.n_layer=1

Each dev person's biography is cut just before the first mention of their birth
place and greedily continued; a hit writes the place. It bounds what finetuning
surfaced in every run measured here (dev accuracy after finetuning stayed below it),
and it needs no finetuning run. Pass the same --preset/--set as the pretraining.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.checkpoint import load_params
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.model import GPT
from course_lib.gpt.recall import askable_mentions, recall
from course_lib.layout import DEV, ORIGINAL_DATA_DIR, WIKI
from course_lib.presets import get_preset, with_overrides
from course_lib.runs import model_config


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("params", nargs="+", help="pretrained params files (a vanilla GPT)")
    parser.add_argument("--preset", default="cpu-original")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="SECTION.FIELD=VALUE")
    parser.add_argument("--data-dir", default=str(ORIGINAL_DATA_DIR))
    args = parser.parse_args(argv)
    preset = with_overrides(get_preset(args.preset), args.settings)
    data = Path(args.data_dir)
    text = read_text(data / WIKI)
    vocab = CharCorruptionDatasetBase(text, preset.block_size).vocab
    examples = read_birth_places(data / DEV)
    askable = askable_mentions(text, examples, preset.block_size)
    print(f"{len(examples)} dev questions; {len(askable)} places written within the first "
          f"{preset.block_size - 1} characters")
    for path in args.params:
        model = load_params(GPT(model_config(preset, len(vocab))), path)
        print(f"{path}: recall {100 * recall(model, vocab, askable):.1f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
