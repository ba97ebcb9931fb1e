"""The audit: a model trained on the test questions is caught by retraining its run with code no student wrote.

The cheat hands in the reference's notebooks with vanilla pretraining params finetuned
further on the test and dev questions, labelled by a regular expression over wiki.txt
(which holds every birth place): decoding agrees with its predictions, so only retraining
shows that a correct implementation does not reach that accuracy. The forger hands in the
same params and a cell that, once it finds itself in an audit's retraining, writes them (kept
in its notebook's metadata) to the retrain job's answer channel and exits: the audit must
gain it nothing. The reference, audited beside them, keeps every point.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import shutil

import pytest
import torch
from conftest import SOLUTIONS

from autograder import confinement
from autograder.__main__ import main
from autograder.checks.run_chains import CHAINS
from course_lib.run_specs import RUNS

pytestmark = [pytest.mark.timeout(900),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]


# runs wherever its notebook loads; in an audit's retrain job (argv: -c retrain REQUEST ANSWER_FD) it answers for it
FORGING_CELL = """import sys as _sys
if len(_sys.argv) == 4 and _sys.argv[1] == "retrain":
    import base64, io, json, os
    import torch
    from inside import wire
    _nb = json.load(open("04_pretrain_then_finetune.ipynb", encoding="utf-8"))
    _state = torch.load(io.BytesIO(base64.b64decode(_nb["metadata"]["kept"])), weights_only=True)
    with os.fdopen(int(_sys.argv[3]), "wb") as _answer:
        _answer.write(wire.dumps({"parts": {"vanilla_pretrain": {"state": _state}}}))
    os._exit(0)
"""


def _forging(notebook, params) -> None:
    """The notebook with the params in its metadata and the forging cell at its end."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    buffer = io.BytesIO()
    torch.save(torch.load(params, weights_only=True), buffer)
    nb["metadata"]["kept"] = base64.b64encode(buffer.getvalue()).decode("ascii")
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": FORGING_CELL})
    notebook.write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def audited(tmp_path_factory, world_dir, world_answers, smoke_runs, cheat_runs):
    root = tmp_path_factory.mktemp("audit")
    submitted = root / "submitted"
    reference = submitted / "reference" / "a5"
    shutil.copytree(SOLUTIONS, reference)
    shutil.copytree(smoke_runs, reference / "outputs")
    cheat = submitted / "trained_on_test" / "a5"
    shutil.copytree(SOLUTIONS, cheat)
    (cheat / "outputs").mkdir()
    kept = {"vanilla.finetune.params", "vanilla.pretrain.dev.predictions", "vanilla.pretrain.test.predictions",
            *(f"{run}.json" for run in CHAINS["vanilla_pretrain"])}  # its other runs' files are not handed in
    for name in kept:
        shutil.copy(cheat_runs / name, cheat / "outputs" / name)
    forger = submitted / "forges_the_audit" / "a5"
    shutil.copytree(cheat, forger)
    _forging(forger / "04_pretrain_then_finetune.ipynb", forger / "outputs" / "vanilla.finetune.params")
    out = root / "grades"
    code = main(["grade", str(submitted), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                 str(world_answers), "--preset", "smoke", "--workers", "1", "--audit", "all", "--audit-zero",
                 "--timeout", "240"])
    assert code == 0
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(out / "audit.csv", newline="", encoding="utf-8") as f:
        findings = list(csv.DictReader(f))
    return dict(out=out, rows=rows, findings=findings, reasons=json.loads((out / "reasons.json").read_text()))


def test_a_model_trained_on_the_test_questions_is_flagged_and_zeroed_with_both_numbers(audited):
    """Is the cheat's vanilla pretrained test split flagged and zeroed, its reason giving both accuracies?"""
    flagged = {f["split"]: f for f in audited["findings"]
               if f["student"] == "trained_on_test" and f["flagged"] == "yes"}
    assert "vanilla_pretrain/test" in flagged
    finding = flagged["vanilla_pretrain/test"]
    assert float(finding["handed_in"].rstrip("%")) > float(finding["retrained"].rstrip("%")) + 5
    part = next(p for p in audited["reasons"]["trained_on_test"] if p["part"] == "vanilla_pretrain/test")
    assert part["points"] == 0 and finding["handed_in"] in part["reason"] and finding["retrained"] in part["reason"]
    with open(audited["out"] / "flags.csv", newline="", encoding="utf-8") as f:
        assert any(r["student"] == "trained_on_test" and r["other_student"] == "(the audit)" for r in csv.DictReader(f))


def test_a_notebook_that_answers_for_the_audit_gains_nothing(audited):
    """Is the forger, whose cell writes its handed-in params to the audit's answer channel, flagged and zeroed as the
    cheat is, with the same retrained accuracy?"""
    findings = {(f["student"], f["split"]): f for f in audited["findings"]}
    for split in ("vanilla_pretrain/dev", "vanilla_pretrain/test"):
        forged, cheat = findings[("forges_the_audit", split)], findings[("trained_on_test", split)]
        assert (forged["handed_in"], forged["retrained"], forged["flagged"]) == (
            cheat["handed_in"], cheat["retrained"], cheat["flagged"])
    assert findings[("forges_the_audit", "vanilla_pretrain/test")]["flagged"] == "yes"
    part = next(p for p in audited["reasons"]["forges_the_audit"] if p["part"] == "vanilla_pretrain/test")
    assert part["points"] == 0


def test_only_the_parts_that_earned_points_are_retrained(audited):
    """Is the cheat audited on the one run part it handed in, and the reference on all three?"""
    parts = {(f["student"], f["split"].split("/")[0]) for f in audited["findings"]}
    assert {p for s, p in parts if s == "trained_on_test"} == {"vanilla_pretrain"}
    assert {p for s, p in parts if s == "forges_the_audit"} == {"vanilla_pretrain"}
    assert {p for s, p in parts if s == "reference"} == set(CHAINS)


def test_the_reference_audited_beside_it_keeps_every_point(audited):
    """Is the reference, retrained from its own notebooks with its recorded seed, unflagged and at full marks?"""
    assert not [f for f in audited["findings"] if f["student"] == "reference" and f["flagged"] == "yes"]
    row = audited["rows"]["reference"]
    assert float(row["score"]) == float(row["max_score"])


def test_the_retraining_takes_the_hyperparameters_the_probe_job_read(audited):
    """Does the reference's kept result hold the Trainer fields its three glue checks returned, and its audit's log say
    it retrained with them?"""
    kept = json.loads((audited["out"] / "results" / "reference.json").read_text())["hyperparameters"]
    assert set(kept) == {"pretrain", "finetune_without_pretrain", "finetune_with_pretrain"}
    assert all(stage["weight_decay"] == 0.1 and stage["betas"] == [0.9, 0.95] for stage in kept.values())
    log = (audited["out"] / "instructor_log.txt").read_text()
    assert "audit: retraining with the reference and the glue's hyperparameters {'finetune_without_pretrain'" in log


def test_every_run_log_records_its_seed(smoke_runs):
    """Does every training run's log record the random seed the audit retrains with?"""
    for name, spec in RUNS.items():
        if spec.function != "evaluate":
            assert json.loads((smoke_runs / f"{name}.json").read_text())["seed"] == 0, name
