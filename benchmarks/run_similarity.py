"""Near-copies of runs: how often honest students are flagged, how often perturbed copies are caught, at what cost.

    python benchmarks/run_similarity.py --students 8                    # smoke preset, every run part
    python benchmarks/run_similarity.py --preset cpu --parts vanilla_nopretrain --students 10
    python benchmarks/run_similarity.py --preset cpu --parts vanilla_pretrain --trained DIR ...
    python benchmarks/run_similarity.py --timing 500                     # the driver's comparison of 500 students

Honest students are the reference notebooks trained with each student's personal seed
(``course_lib.seeds``, ids ``student-000``...; ``--trained`` adds folders of runs trained
elsewhere, e.g. ``benchmarks/calibrate_bars.py``'s ``seedN``). Each honest student's runs are
then copied with each perturbation of ``KINDS`` (params changed, predictions re-decoded from the
changed params as the grader requires, lines edited where the kind says so; ``mean_of_5`` averages
the params of the student and the four after it). Every student and copy gets the collect unit's
prints (``autograder.collecting.prints.prints_of``) and every pair is compared by
``autograder.collecting.near_copies``. Printed: per run part, the honest pairs flagged (false
flags) and the largest honest weights and circuits cosines and answers kappa; per perturbation,
the copies caught (detection: flagged with their original, a mean with every one of its five
sources) and the smallest copy cosines and kappa.
"""
from __future__ import annotations

import argparse
import itertools
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from autograder.checks.run_chains import CHAINS
from autograder.checks.run_files import RUN_PARTS
from autograder.collecting import near_copies as nc
from autograder.collecting.prints import Prints, prints_of
from autograder.collecting.run_prints import LINE_HASH, SKETCH_WIDTH, ParamsSketch
from course_lib.contract import StudentParts
from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.checkpoint import fit_state_dict
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.evaluation import predict_places, write_predictions
from course_lib.gpt.model import GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig
from course_lib.layout import DEFAULT_OUT_DIR, DEV, SOLUTIONS_DIR, TEST_ANSWERS, TEST_INPUTS, TRAIN, WIKI
from course_lib.loader.load import load_notebooks, notebook_paths
from course_lib.presets import get_preset
from course_lib.run_specs import RUNS
from course_lib.runs import run
from course_lib.seeds import personal_seed
from course_lib.world import write_world

KINDS = ("nudged", "noise_1pct", "noise_10pct", "noise_50pct", "bf16", "wrapped", "mlp_permuted", "heads_permuted",
         "all_permuted", "residual_permuted", "trained_on", "mean_of_5")
# the kinds whose params give the original's answers (the same function; tests/benchmarks/test_run_similarity.py):
# the copy hands in the original's predictions, as the tester's copy did (with one line changed: "nudged")
SAME_ANSWERS = ("nudged", "wrapped", "mlp_permuted", "heads_permuted", "all_permuted", "residual_permuted")
MEAN_OF = 5  # classmates averaged by "mean_of_5": the student and the four after it


@dataclass(frozen=True)
class Course:
    """What decoding and training a copy need."""

    preset: object  # the Preset
    reference: StudentParts  # the reference notebooks' parts
    vocab_source: CharCorruptionDatasetBase  # its vocabulary
    questions: dict[str, list[str]]  # split -> questions
    train: str  # the finetuning file's text


def _eval_runs(part) -> list[str]:
    return [n for n, s in RUNS.items() if s.outputs in (part.dev, part.test)]


def train_student(folder: Path, seed: int, preset: str, parts, data_dir: Path, reference: StudentParts) -> None:
    """The reference's runs of ``parts`` with ``seed`` into ``folder``/outputs (kept when already there)."""
    if (folder / "done").is_file():
        return
    names = list(dict.fromkeys(n for p in parts for n in (*CHAINS[p.name], *_eval_runs(p))))
    for name in names:
        run(name, reference, preset=preset, data_dir=data_dir, out_dir=folder / "outputs", seed=seed,
            progress=False)
    (folder / "done").write_text("")


# --- perturbations: a state dict in, a state dict out (function-preserving ones say so) --------------------------


def _noise(state: dict, rng: torch.Generator, share: float) -> dict:
    return {k: v + share * v.float().std() * torch.randn(v.shape, generator=rng) if v.is_floating_point()
            and v.numel() > 1 else v for k, v in state.items()}


def _blocks(state: dict) -> list[str]:
    return sorted({k.split(".")[1] for k in state if k.startswith("blocks.")})


def _mlp_permuted(state: dict, rng: torch.Generator) -> dict:
    state = dict(state)
    for b in _blocks(state):
        order = torch.randperm(state[f"blocks.{b}.mlp.0.weight"].shape[0], generator=rng)
        state[f"blocks.{b}.mlp.0.weight"] = state[f"blocks.{b}.mlp.0.weight"][order]
        state[f"blocks.{b}.mlp.0.bias"] = state[f"blocks.{b}.mlp.0.bias"][order]
        state[f"blocks.{b}.mlp.2.weight"] = state[f"blocks.{b}.mlp.2.weight"][:, order]
    return state


def _heads_permuted(state: dict, rng: torch.Generator, n_head: int) -> dict:
    state = dict(state)
    for b in _blocks(state):
        prefix = f"blocks.{b}.attn."
        d = state[prefix + "proj.weight"].shape[1]
        heads = torch.randperm(n_head, generator=rng)
        order = torch.cat([torch.arange(h * (d // n_head), (h + 1) * (d // n_head)) for h in heads.tolist()])
        for name in ("key", "query", "value", "w1"):
            if prefix + name + ".weight" in state:
                state[prefix + name + ".weight"] = state[prefix + name + ".weight"][order]
                state[prefix + name + ".bias"] = state[prefix + name + ".bias"][order]
        state[prefix + "proj.weight"] = state[prefix + "proj.weight"][:, order]
    return state


def _all_permuted(state: dict, rng: torch.Generator, n_head: int) -> dict:
    """The MLP's units, the heads and each head's dimensions reordered together (queries and keys alike, values and
    the projection's inputs alike; the synthesizer's w1 and w2 alike, one order of dimensions for all its heads, as
    w2 is shared): the same function, every block's matrices other."""
    state = _mlp_permuted(state, rng)
    for b in _blocks(state):
        prefix = f"blocks.{b}.attn."
        d = state[prefix + "proj.weight"].shape[1]
        hs = d // n_head
        heads = torch.randperm(n_head, generator=rng).tolist()
        shared = torch.randperm(hs, generator=rng)
        scores = torch.cat([h * hs + (shared if prefix + "w2" in state else torch.randperm(hs, generator=rng))
                            for h in heads])  # the rows of query and key (or w1)
        values = torch.cat([h * hs + torch.randperm(hs, generator=rng) for h in heads])  # value's rows, proj's columns
        for name, order in (("query", scores), ("key", scores), ("w1", scores), ("value", values)):
            if prefix + name + ".weight" in state:
                state[prefix + name + ".weight"] = state[prefix + name + ".weight"][order]
                state[prefix + name + ".bias"] = state[prefix + name + ".bias"][order]
        state[prefix + "proj.weight"] = state[prefix + "proj.weight"][:, values]
        if prefix + "w2" in state:
            state[prefix + "w2"] = state[prefix + "w2"][shared]
    return state


def _residual_permuted(state: dict, rng: torch.Generator) -> dict:
    """Every tensor's residual-stream axis permuted alike (LayerNorm is elementwise in it): the same function."""
    d = state["tok_emb.weight"].shape[1]
    order = torch.randperm(d, generator=rng)
    out = {}
    for k, v in state.items():
        if k in ("tok_emb.weight", "head.weight") or k.endswith(("mlp.0.weight", "key.weight", "query.weight",
                                                                   "value.weight", "w1.weight")):
            out[k] = v[:, order]  # the residual stream is their input
        elif k == "pos_emb":
            out[k] = v[..., order]
        elif k.endswith(("ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias", "ln_f.weight", "ln_f.bias",
                         "proj.bias", "mlp.2.bias")):
            out[k] = v[order]
        elif k.endswith(("proj.weight", "mlp.2.weight")):
            out[k] = v[order]  # the residual stream is their output
        else:
            out[k] = v
    return out


def _wrapped(state: dict) -> dict:
    size = state["pos_emb"].shape[1]
    mask = torch.tril(torch.ones(size, size)).view(1, 1, size, size)
    return {**{f"module.{k}": v for k, v in state.items()},
            **{f"module.blocks.{b}.attn.mask": mask.clone() for b in _blocks(state)}}


def perturbed(kind: str, state: dict, rng: torch.Generator, course: Course, variant: str) -> dict:
    if kind == "nudged":
        state = dict(state)
        first = next(iter(state))
        state[first] = state[first].clone()
        state[first].view(-1)[0] += 1e-6
        return state
    if kind.startswith("noise_"):
        return _noise(state, rng, int(kind.removeprefix("noise_").removesuffix("pct")) / 100)
    if kind == "bf16":
        return {k: v.to(torch.bfloat16).to(v.dtype) if v.is_floating_point() else v for k, v in state.items()}
    if kind == "wrapped":
        return _wrapped(state)
    if kind == "mlp_permuted":
        return _mlp_permuted(state, rng)
    if kind == "heads_permuted":
        return _heads_permuted(state, rng, course.preset.model.get("n_head", 8))
    if kind == "all_permuted":
        return _all_permuted(state, rng, course.preset.model.get("n_head", 8))
    if kind == "residual_permuted":
        return _residual_permuted(state, rng)
    if kind == "trained_on":
        return _trained_on(state, course, variant, rng)
    raise ValueError(kind)


def _model(course: Course, variant: str):
    config = GPTConfig(course.vocab_source.vocab_size, course.preset.block_size, **course.preset.model)
    return course.reference.model(variant, config)


def _trained_on(state: dict, course: Course, variant: str, rng: torch.Generator) -> dict:
    """The copy finetuned further on the training file: 20 more steps at the preset's finetuning rate."""
    model = _model(course, variant)
    model.load_state_dict(state)
    torch.manual_seed(int(torch.randint(0, 2 ** 31, (1,), generator=rng)))
    rate = course.preset.finetune_with_pretrain.get("learning_rate", 6e-4)
    Trainer(model, NameDataset(course.vocab_source, course.train), None,
            TrainerConfig(max_epochs=100, batch_size=16, learning_rate=rate, max_steps=20, progress=False)).train()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def decoded(state: dict, course: Course, variant: str) -> dict[str, list[str]]:
    """split -> the answers the params give, as the grader decodes them."""
    model = _model(course, variant)
    fitted, misfit = fit_state_dict(model, state)
    assert misfit is None, misfit
    model.load_state_dict(fitted)
    model.eval()
    return {split: predict_places(model, course.vocab_source.vocab, qs, course.preset.eval_batch_size)
            for split, qs in course.questions.items()}


def _mean(states: list[dict]) -> dict:
    """The params averaged, tensor by tensor."""
    return {k: torch.stack([s[k].to(torch.float64) for s in states]).mean(0).to(v.dtype) if v.is_floating_point()
            else v for k, v in states[0].items()}


def make_copy(sources: list[Path], dest: Path, kind: str, seed: int, course: Course, parts) -> None:
    """The first of ``sources``' run files of ``parts`` (all of them averaged, for "mean_of_5"), changed as ``kind``
    says, into ``dest``/outputs; the run logs copied, but a mean's (its copier's own would be)."""
    rng = torch.Generator().manual_seed(seed)
    out = dest / "outputs"
    out.mkdir(parents=True)
    source = sources[0]
    for part in parts:
        variant = "synthesizer" if part.attention == "synthesizer" else "vanilla"
        states = [torch.load(folder / "outputs" / part.params, weights_only=True) for folder in sources]
        changed = _mean(states) if kind == "mean_of_5" else perturbed(kind, states[0], rng, course, variant)
        torch.save(changed, out / part.params)
        answers = decoded(changed, course, variant) if kind not in SAME_ANSWERS else {
            split: (source / "outputs" / name).read_text(encoding="utf-8").splitlines()
            for split, name in (("dev", part.dev), ("test", part.test))}
        for split, name in (("dev", part.dev), ("test", part.test)):
            lines = list(answers[split])
            if kind == "nudged":  # the tester's copy: one line of each predictions file changed
                lines[3] = "Paris" if lines[3] != "Paris" else "Lyon"
            write_predictions(lines, out / name)
        for log in CHAINS[part.name] if kind != "mean_of_5" else ():
            if (source / "outputs" / f"{log}.json").is_file():
                shutil.copy(source / "outputs" / f"{log}.json", out / f"{log}.json")


# --- measuring ----------------------------------------------------------------------------------------------------


def pair_numbers(a: Prints, b: Prints, part, gold: dict[str, bytes]
                 ) -> tuple[float | None, float | None, dict[str, float]]:
    """(weights' median cosine, circuits' median cosine, split -> answers' kappa) of one pair on one part, whatever the
    bounds."""
    medians = [nc._weights([("a", a), ("b", b)], part.params, circuits).of("a", "b") for circuits in (False, True)]
    kappas = {}
    for split, name in (("dev", part.dev), ("test", part.test)):
        rows = [dict(p.answers).get(name) for p in (a, b)]
        questions = len(gold[split]) // LINE_HASH
        if all(r is not None for r in rows):
            mine, theirs = (np.frombuffer(nc.trimmed(r, questions), dtype="<u8") for r in rows)
            if len(mine) == len(theirs) == questions:
                found = nc._agreement(mine, theirs, np.frombuffer(gold[split], dtype="<u8"))
                kappas[split] = found.kappa if found.informative >= nc.Bounds().informative else float("nan")
    return *(m[0] if m else None for m in medians), kappas


def timing(n: int, questions: int = 500, matrices: int = 15, circuits: int = 6) -> float:
    """Seconds the driver takes to compare ``n`` students (random prints of the cpu preset's size)."""
    rng = np.random.default_rng(0)
    students = []
    for i in range(n):
        params = tuple((p.params, ParamsSketch(*(tuple((f"m{k}", rng.standard_normal(SKETCH_WIDTH).astype(
            np.float32).tobytes()) for k in range(count)) for count in (matrices, circuits)))) for p in RUN_PARTS)
        answers = tuple((name, rng.integers(0, 50, questions, dtype="<u8").tobytes())
                        for p in RUN_PARTS for name in (p.dev, p.test))
        students.append((f"s{i:04d}", Prints((), (), "", params, answers)))
    gold = {"dev": rng.integers(0, 50, questions, dtype="<u8").tobytes(),
            "test": rng.integers(0, 50, questions, dtype="<u8").tobytes()}
    start = time.perf_counter()
    nc.near_copies(students, gold)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--parts", default=",".join(p.name for p in RUN_PARTS))
    parser.add_argument("--students", type=int, default=8, help="honest students trained here (personal seeds)")
    parser.add_argument("--trained", nargs="*", default=[], help="more honest students: folders of run files")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--out", default=str(DEFAULT_OUT_DIR / "run_similarity"))
    parser.add_argument("--timing", type=int, default=0, help="only time the driver's comparison of N students")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the study's many small models: one thread each is fastest on a shared machine
    if args.timing:
        seconds = timing(args.timing)
        print(f"near_copies of {args.timing} students (3 params files of 15 matrices and 6 circuits, 6 predictions "
              f"files of 500 lines each): {seconds:.1f} s")
        return 0
    out = Path(args.out) / args.preset
    world = out / "world"
    if not (world / WIKI).is_file():
        write_world(world, 0, answers_path=out / "grader_only" / TEST_ANSWERS)
    parts = [p for p in RUN_PARTS if p.name in args.parts.split(",")]
    reference = StudentParts(load_notebooks(notebook_paths(SOLUTIONS_DIR), module_name="reference"))
    honest = {}
    for i in range(args.students):
        student = f"student-{i:03d}"
        start = time.perf_counter()
        train_student(out / "honest" / student, personal_seed(student), args.preset, parts, world, reference)
        print(f"{student}: trained in {time.perf_counter() - start:.0f} s", flush=True)
        honest[student] = out / "honest" / student
    for folder in map(Path, args.trained):  # a folder of run files (calibrate_bars' seedN) or one holding outputs/
        student = f"trained-{folder.name}"
        honest[student] = folder
        if not (folder / "outputs").is_dir():
            honest[student] = out / "trained" / folder.name
            if not honest[student].is_dir():
                honest[student].mkdir(parents=True)
                (honest[student] / "outputs").symlink_to(folder.resolve())
    preset = get_preset(args.preset)
    wiki = read_text(world / WIKI)
    course = Course(preset, reference, CharCorruptionDatasetBase(wiki, preset.block_size),
                    {"dev": [e.question for e in read_birth_places(world / DEV)],
                     "test": [e.question for e in read_birth_places(world / TEST_INPUTS)]},
                    read_text(world / TRAIN))
    gold = nc.gold_hashes({"dev": read_birth_places(world / DEV, require_answers=True),
                           "test": read_birth_places(out / "grader_only" / TEST_ANSWERS, require_answers=True)})
    kinds = args.kinds.split(",")
    names = sorted(honest)
    sources = {s: [s] for s in names}
    means = {s: [names[(i + j) % len(names)] for j in range(MEAN_OF)] for i, s in enumerate(names)}
    copies = {}
    start = time.perf_counter()
    for student, kind in itertools.product(names, kinds):
        if kind == "mean_of_5" and len(names) < MEAN_OF:
            continue
        dest = out / "copies" / f"{kind}-of-{student}"
        if not (dest / "done").is_file():
            shutil.rmtree(dest, ignore_errors=True)
            make_copy([honest[s] for s in (means if kind == "mean_of_5" else sources)[student]], dest, kind,
                      personal_seed(f"{kind}-{student}"), course, parts)
            (dest / "done").write_text("")
        copies[(kind, student)] = dest
    print(f"{len(copies)} copies made in {time.perf_counter() - start:.0f} s", flush=True)
    start = time.perf_counter()
    prints = {name: prints_of(folder) for name, folder in honest.items()}
    prints.update({f"{kind}-of-{student}": prints_of(folder) for (kind, student), folder in copies.items()})
    print(f"prints of {len(prints)} submissions: {1000 * (time.perf_counter() - start) / len(prints):.0f} ms each")
    start = time.perf_counter()
    # each mean of five in a class of its own (the honest students and every other kind of copy): means of
    # overlapping classmates explain each other, which no real class shows
    means_made = [name for name in prints if name.startswith("mean_of_5-of-")]
    others = [(name, p) for name, p in prints.items() if name not in means_made]
    flagged = set()
    for mean in means_made or [None]:
        cohort = others + ([(mean, prints[mean])] if mean else [])
        flagged |= {(n.file, *sorted((n.student, n.other))) for n in nc.near_copies(cohort, gold)}
    print(f"near_copies over {len(others)} submissions and each of {len(means_made)} means: "
          f"{time.perf_counter() - start:.2f} s\n")
    for part in parts:
        report(part, names, kinds, prints, gold, flagged, means)
    return 0


def report(part, names: list[str], kinds: list[str], prints: dict, gold, flagged: set, means: dict) -> None:
    """Print one run part's false flags among honest students and the copies caught of each kind."""
    def seen(a: str, b: str) -> bool:
        return (part.params, *sorted((a, b))) in flagged

    honest_pairs = list(itertools.combinations(names, 2))
    numbers = [pair_numbers(prints[a], prints[b], part, gold) for a, b in honest_pairs]
    kappas = [k for *_, ks in numbers for k in ks.values() if not np.isnan(k)]
    largest = [max((n[i] for n in numbers if n[i] is not None), default=float("nan")) for i in (0, 1)]
    print(f"{part.name}: honest pairs flagged {sum(seen(a, b) for a, b in honest_pairs)} of {len(honest_pairs)}; "
          f"largest weights cosine {largest[0]:.3f}, circuits {largest[1]:.3f}, answers kappa "
          f"{max(kappas, default=float('nan')):.3f} ({len(kappas)} informative splits of {2 * len(honest_pairs)})")
    for kind in kinds:
        caught, lows, low_kappas, done = 0, [[], []], [], 0
        for student in names:
            name = f"{kind}-of-{student}"
            if name not in prints:
                continue
            done += 1
            originals = means[student] if kind == "mean_of_5" else [student]
            caught += all(seen(name, original) for original in originals)
            found = [pair_numbers(prints[name], prints[original], part, gold) for original in originals]
            for i in (0, 1):
                lows[i].append(max((f[i] for f in found if f[i] is not None), default=float("nan")))
            low_kappas += [k for f in found for k in f[2].values() if not np.isnan(k)]
        if done:
            print(f"  {kind:18} caught {caught} of {done}{' (naming all five sources)' * (kind == 'mean_of_5')}; "
                  f"smallest weights cosine {np.nanmin(lows[0]):.3f}, circuits {np.nanmin(lows[1]):.3f}, smallest "
                  f"answers kappa {min(low_kappas, default=float('nan')):.3f} ({len(low_kappas)} informative splits)")


if __name__ == "__main__":
    raise SystemExit(main())
