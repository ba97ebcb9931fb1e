"""Near-copies of runs: a classmate's runs changed a little are flagged with both names; students' own runs are not.

Ana and Ben train the reference's runs with their personal seeds (as the notebooks do on the
hub); Cara hands in Ana's runs, changed as a copier would change them. The flags come from the
grader's own path: the collect step's units make the prints, ``cohort_flags`` compares them.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import benchmark_scripts
import pytest
import torch

from autograder.checks.run_files import RUN_FILES, RUN_LOGS, RUN_PARTS
from autograder.collecting.cohort import collect_cohort
from autograder.collecting.collect import Wanted
from autograder.collecting.flags import cohort_flags
from autograder.collecting.near_copies import Agreement, Bounds, gold_hashes
from autograder.grading.grade import load_gold
from autograder.grading.results import settings_for
from course_lib.seeds import personal_seed

pytestmark = pytest.mark.timeout(900)  # the first test trains two students (seconds each on an idle machine)
A5 = "a5"
WANTED = Wanted(frozenset(), frozenset(RUN_FILES) | RUN_LOGS)


def _nudged(state: dict) -> dict:
    """The tester's copy: one value of the params nudged by 1e-6."""
    first = next(iter(state))
    state[first].view(-1)[0] += 1e-6
    return state


def _noisy(state: dict) -> dict:
    """Noise of a tenth of each tensor's own spread on every value."""
    generator = torch.Generator().manual_seed(1)
    return {k: v + 0.1 * v.std() * torch.randn(v.shape, generator=generator) if v.numel() > 1 else v
            for k, v in state.items()}


def _wrapped_half(state: dict) -> dict:
    """Saved through DataParallel after a round trip through half precision."""
    return {f"module.{k}": v.half().float() for k, v in state.items()}


def _mlp_permuted(state: dict) -> dict:
    """The MLP's hidden units reordered in every block (the same function, other matrices)."""
    order = torch.randperm(state["blocks.0.mlp.0.weight"].shape[0], generator=torch.Generator().manual_seed(2))
    for b in {k.split(".")[1] for k in state if k.startswith("blocks.")}:
        state[f"blocks.{b}.mlp.0.weight"] = state[f"blocks.{b}.mlp.0.weight"][order]
        state[f"blocks.{b}.mlp.0.bias"] = state[f"blocks.{b}.mlp.0.bias"][order]
        state[f"blocks.{b}.mlp.2.weight"] = state[f"blocks.{b}.mlp.2.weight"][:, order]
    return state


def _study():
    """benchmarks/run_similarity.py, for its copies that compute the same function with other matrices."""
    return benchmark_scripts.load("run_similarity")


def _all_permuted(state: dict) -> dict:
    """The MLP's units, the heads and each head's dimensions reordered together (the smoke preset's 2 heads)."""
    return _study()._all_permuted(state, torch.Generator().manual_seed(3), n_head=2)


PERTURBATIONS = {"one value nudged by 1e-6, one line changed": _nudged, "noise on every weight": _noisy,
                 "DataParallel names, half precision": _wrapped_half, "MLP units reordered": _mlp_permuted,
                 "MLP units, heads and head dimensions reordered together": _all_permuted}


def _copy_of(runs: Path, outputs: Path, change) -> None:
    """``runs`` into ``outputs`` with every params file changed by ``change`` and one line of every predictions file
    edited."""
    shutil.copytree(runs, outputs)
    for part in RUN_PARTS:
        torch.save(change(torch.load(outputs / part.params, weights_only=True)), outputs / part.params)
        for name in (part.dev, part.test):
            lines = (outputs / name).read_text(encoding="utf-8").split("\n")
            lines[3] = "Paris" if lines[3] != "Paris" else "Lyon"
            (outputs / name).write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def gold(world_dir, world_answers) -> dict[str, bytes]:
    return gold_hashes(load_gold(settings_for(world_dir, world_answers, "synthetic", "smoke")))


def _flags(tmp_path: Path, runs: dict[str, Path], gold) -> list:
    for student, outputs in runs.items():
        shutil.copytree(outputs, tmp_path / "submitted" / student / A5 / "outputs")
    cohort = collect_cohort(tmp_path / "submitted", A5, tmp_path / "collected", wanted=WANTED)
    return cohort_flags(cohort.students, A5, gold=gold)


@pytest.mark.parametrize("how", sorted(PERTURBATIONS))
def test_a_perturbed_copy_of_a_classmates_runs_is_flagged_with_both_names(tmp_path, personal_smoke_runs, gold, how):
    """Is a classmate's runs copied with small changes (a value nudged, noise, another way of saving, reordered units)
    flagged on every run part, naming both students and the evidence, while two students' own runs are not?"""
    _copy_of(personal_smoke_runs("ana"), tmp_path / "cara-outputs", PERTURBATIONS[how])
    flags = _flags(tmp_path, {"ana": personal_smoke_runs("ana"), "ben": personal_smoke_runs("ben"),
                              "cara": tmp_path / "cara-outputs"}, gold)
    near = {(f.file, f.student, f.other): f.why for f in flags if f.why.startswith("near-copies")}
    assert set(near) == {(part.params, "ana", "cara") for part in RUN_PARTS}, near
    assert all("weights: median cosine" in why and "circuits: median cosine" in why for why in near.values())
    if how.endswith("reordered together"):  # other matrices, the same circuits
        assert all("circuits: median cosine 1.000" in why for why in near.values()), near
    assert not [f for f in flags if {f.student, f.other} == {"ana", "ben"}]


def test_a_mean_of_five_classmates_runs_is_flagged_naming_each_of_them(tmp_path, personal_smoke_runs, gold):
    """Is a run whose params are the average of five classmates' (each under half alike to it) flagged against each
    of the five, while the five, who trained their own, are flagged neither with each other nor as a mean?"""
    five = ("ana", "ben", "dan", "eve", "gus")
    (tmp_path / "fay-outputs").mkdir()
    for part in RUN_PARTS:
        states = [torch.load(personal_smoke_runs(s) / part.params, weights_only=True) for s in five]
        torch.save(_study()._mean(states), tmp_path / "fay-outputs" / part.params)
    flags = _flags(tmp_path, {**{s: personal_smoke_runs(s) for s in five}, "fay": tmp_path / "fay-outputs"}, gold)
    means = {(f.file, f.student, f.other): f.why for f in flags}
    assert set(means) == {(part.params, "fay", s) for part in RUN_PARTS for s in five}, means
    assert all(why.startswith("close to the mean of 5 classmates' runs") for why in means.values())


def test_a_copy_records_its_owners_personal_seed(tmp_path, personal_smoke_runs, gold):
    """Is a copy whose run logs still record the classmate's personal seed flagged, naming whose seed it is?"""
    _copy_of(personal_smoke_runs("ana"), tmp_path / "cara-outputs", _nudged)
    flags = _flags(tmp_path, {"ana": personal_smoke_runs("ana"), "cara": tmp_path / "cara-outputs"}, gold)
    seeds = [(f.student, f.other, f.why) for f in flags if "personal seed" in f.why]
    assert seeds == [("cara", "ana", f"{len(RUN_LOGS)} run log(s) record ana's personal seed ({personal_seed('ana')})")]
    assert any(f"both logs record seed {personal_seed('ana')}" in f.why for f in flags)


def test_answers_alike_where_both_are_right_are_no_evidence():
    """Do two students who answer every question right, or who answer everything with the same one string, carry
    no evidence (agreement there is what accuracy or a degenerate model explains), while a shared set of varied
    wrong answers does?"""
    assert Agreement(0, 0, 1.0).kappa == 0 and not Agreement(0, 0, 1.0).passes(Bounds())
    assert not Agreement(120, 120, 1.0).passes(Bounds())  # both answer "" to everything
    assert Agreement(119, 120, 0.05).passes(Bounds())


def test_the_same_answers_from_two_students_own_weak_models_are_not_flagged(tmp_path, personal_smoke_runs, gold):
    """Are two students whose own params (trained with their own seeds) answer every question with the same place,
    so their predictions files are byte for byte alike, left unflagged, as the honest cohort's weak smoke models
    are?"""
    for student in ("ana", "ben"):
        shutil.copytree(personal_smoke_runs(student), tmp_path / f"{student}-outputs")
        for part in RUN_PARTS:
            for name in (part.dev, part.test):
                count = len((tmp_path / f"{student}-outputs" / name).read_text(encoding="utf-8").splitlines())
                (tmp_path / f"{student}-outputs" / name).write_text("Paris\n" * count, encoding="utf-8")
    flags = _flags(tmp_path, {s: tmp_path / f"{s}-outputs" for s in ("ana", "ben")}, gold)
    assert flags == []
