"""Command line: ``python -m course_lib world|run|runs|presets ...``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course_lib import layout, runs
from course_lib.presets import PRESETS, get_preset, with_overrides

WORLD_HELP = """Write a synthetic world: the student files wiki.txt, birth_places_train.tsv,
birth_dev.tsv and birth_test_inputs.tsv, and with --answers-out the grader-only
test answers (birth_test.tsv format) and world.json, which records the random seed.

Students practise on the default random seed 0 (the world the notebooks write for
themselves). To grade, make a world with a secret random seed, e.g. from
  python -c "import secrets; print(secrets.token_hex(16))"
give the students the --out folder, and keep the answers file and the random seed private:
with either, anyone can know the test answers."""


def _world(args: argparse.Namespace) -> int:
    from course_lib.world import parse_seed, write_world

    answers = Path(args.answers_out) if args.answers_out else None
    try:
        written = write_world(Path(args.out), parse_seed(args.seed), answers_path=answers)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written.values():
        print(f"wrote {path}")
    if answers is None:
        print("no test answers written (pass --answers-out FILE, a grader-only place, to write them)")
    return 0


def _run(args: argparse.Namespace) -> int:
    from course_lib.seeds import choose_seed

    preset = with_overrides(get_preset(args.preset), args.settings)
    seed = choose_seed(args.seed).seed  # --seed, else COURSE_SEED, else the student's personal seed
    results = []
    for name in args.names:
        result = runs.run(
            name, args.notebooks, preset=preset, data_dir=args.data_dir, out_dir=args.out_dir,
            seed=seed, device=args.device, progress=not args.quiet, num_threads=args.threads, fresh=args.fresh,
        )
        line = f"{name}: {'kept' if result.kept else 'wrote'} {', '.join(result.written)}"
        line += "" if result.kept else f" in {result.seconds:.1f}s"
        if result.accuracy is not None:
            line += f"; correct: {result.correct} out of {result.total}: {100 * result.accuracy:.2f}%"
        elif result.history:
            line += f"; final loss {result.history[-1]['loss']:.4f}"
        print(line, flush=True)
        results.append(result)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from course_lib.demo import demo

    demo(Path(args.data_dir), Path(args.out_dir), Path(args.notebooks), preset=args.preset)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_lib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    world = sub.add_parser("world", help="write a synthetic world (wiki.txt and the birth-place files)",
                           description=WORLD_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    world.add_argument("--out", required=True, help="the student data folder to write into")
    world.add_argument("--answers-out", metavar="FILE", default=None,
                       help="where the grader-only test answers go (never inside --out); without it none are written")
    world.add_argument("--seed", default="0",
                       help="random seed: an int or any string (same seed, same files); default 0, the students' "
                            "practice world")
    world.set_defaults(func=_world)

    run = sub.add_parser("run", help="carry out named runs of run.sh, in order")
    run.add_argument("names", nargs="+", choices=list(runs.RUNS), metavar="NAME",
                     help="one or more of: " + ", ".join(runs.RUNS))
    run.add_argument("--notebooks", nargs="+", default=[str(layout.RELEASE_DIR)],
                     help="notebooks (or folders of them) holding the graded parts; default the release notebooks")
    run.add_argument("--preset", default=layout.DEFAULT_PRESET, choices=sorted(PRESETS),
                     help=f"training preset (default {layout.DEFAULT_PRESET})")
    run.add_argument("--data-dir", default=str(runs.DEFAULT_DATA_DIR), help="folder with wiki.txt and the TSVs")
    run.add_argument("--out-dir", default=str(runs.DEFAULT_OUT_DIR), help="folder for params and predictions")
    run.add_argument("--seed", type=int, default=None,
                     help="random seed of training (default: $COURSE_SEED, else your own, derived from your student "
                          "id: the JupyterHub user, else your account's name)")
    run.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    run.add_argument("--threads", type=int, default=None,
                     help="CPU threads for torch (default: $COURSE_THREADS, else what this process's share of the "
                          "CPUs and the other work on them leave, followed as it trains)")
    run.add_argument("--quiet", action="store_true", help="no progress bar (the run's log file still follows it)")
    run.add_argument("--fresh", action="store_true",
                     help="train again even when a run is done (its log matches) or has a checkpoint to resume")
    run.add_argument("--set", dest="settings", action="append", default=[], metavar="SECTION.FIELD=VALUE",
                     help="change one field of the preset, e.g. all.autocast_bf16=True (repeatable; SECTION is "
                          "model, pretrain, finetune_without_pretrain, finetune_with_pretrain or all)")
    run.set_defaults(func=_run)

    demo = sub.add_parser("demo", help="the main job: the assignment's lesson on the synthetic world, on a CPU")
    demo.add_argument("--preset", default=layout.DEFAULT_PRESET, choices=sorted(PRESETS),
                      help=f"training preset (default {layout.DEFAULT_PRESET})")
    demo.add_argument("--data-dir", default=str(layout.DEFAULT_DATA_DIR),
                      help="data folder (the world is written here if missing)")
    demo.add_argument("--out-dir", default=str(layout.DEFAULT_OUT_DIR / "demo"),
                      help="folder for params and predictions")
    demo.add_argument("--notebooks", default=str(layout.SOLUTIONS_DIR), help="notebooks with the graded parts")
    demo.set_defaults(func=_demo)

    presets = sub.add_parser("presets", help="list the training presets")
    presets.set_defaults(func=lambda a: print("\n".join(f"{p.name:6} {p.description}" for p in PRESETS.values())) or 0)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except NotImplementedError as err:
        print(f"error: {_unwritten(err)} is not written yet: write it, then run this again", file=sys.stderr)
        return 2
    except (runs.RunError, FileNotFoundError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _unwritten(err: NotImplementedError) -> str:
    """The notebook cell whose answer raised (the loader names code by its cell), or the error's own words."""
    import traceback

    cells = [frame.f_code.co_filename for frame, _ in traceback.walk_tb(err.__traceback__)
             if ".ipynb cell" in frame.f_code.co_filename]
    if cells:
        return f"the answer in {cells[-1]}"
    return str(err) or "a graded part"


if __name__ == "__main__":
    sys.exit(main())
