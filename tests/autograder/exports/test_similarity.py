"""The cohort's similarity report: renamed copies rank first, starter code never counts, bad input is skipped."""
from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.exports.similarity import OVERALL, Settings, graded_cells, read_cells, similarity_report
from autograder.exports.similarity_files import write_report
from conftest import REPO, SOLUTIONS

RELEASE = REPO / "notebooks" / "a5"
NOTEBOOKS = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb", "05_synthesizer.ipynb",
             "08_position_embeddings.ipynb")
SCRIPT = "<script>alert('bob')</script>"

# bob: alice's code with every name of her own renamed and every comment reworded
RENAMES = {"document": "doc_text", "truncated": "cut", "masked_len": "span_len", "start": "begin",
           "prefix": "head", "masked": "hidden", "suffix": "tail", "text": "sequence", "x": "inp", "y": "tgt",
           "n": "length", "tconf": "train_cfg", "trainer": "runner", "finetune_dataset": "qa_data",
           "max_epochs": "n_epochs", "hs": "head_size", "a": "hid", "v": "val", "scores": "logits",
           "att": "probs", "B": "nb", "T": "nt", "C": "nc", "t": "pos", "freq": "inv_freq", "phi": "emb",
           "order": "perm", "mconf": "cfg"}
KEYWORDS = {"max_epochs"}  # also TrainerConfig's keyword (max_epochs=...): only the variable is renamed

# carol: her own code for every graded cell of 03, 05 and 08 (written apart from the reference)
CAROL = {
    "03-span-corruption": '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    """Span corruption: `prefix ⁇ suffix ⁇ masked ⁇` padded, as (x, y) shifted by one."""

    def __getitem__(self, idx):
        chars = list(self.data[idx])
        limit = int(self.block_size * 0.875)
        chars = chars[:random.randrange(4, limit + 1)]
        span = max(1, round(random.gauss(len(chars) / 4, 1)))
        span = min(span, len(chars) - 1) if len(chars) > 1 else len(chars)
        lo = random.randrange(0, len(chars) - span + 1)
        pieces = ["".join(chars[:lo]), "".join(chars[lo + span:]), "".join(chars[lo:lo + span])]
        out = self.MASK_CHAR.join(pieces) + self.MASK_CHAR
        out += self.PAD_CHAR * (self.block_size - len(out))
        ids = torch.LongTensor(list(map(self.stoi.get, out)))
        return ids[:-1], ids[1:]
''',
    "05-synthesizer": '''class SynthesizerAttention(SynthesizerAttentionBase):
    """Dense synthesizer: attention scores computed from each position alone."""

    def forward(self, x):
        n_batch, n_steps, width = x.shape
        per_head = width // self.n_head

        def heads(t):
            return t.reshape(n_batch, n_steps, self.n_head, per_head).permute(0, 2, 1, 3)

        hidden = torch.relu(heads(self.w1(x)))
        logits = torch.matmul(hidden, self.w2[:, :n_steps]) + self.b2[:n_steps]
        causal = self.mask[:, :, :n_steps, :n_steps].bool()
        logits = torch.where(causal, logits, torch.full_like(logits, -float("inf")))
        weights = self.attn_drop(torch.softmax(logits, dim=-1))
        merged = torch.matmul(weights, heads(self.value(x))).permute(0, 2, 1, 3).reshape(n_batch, n_steps, width)
        return self.resid_drop(self.proj(merged))


def initialize_synthesizer_model(mconf: GPTConfig) -> GPT:
    """A GPT whose blocks use your SynthesizerAttention."""
    built = GPT(mconf, attention_class=SynthesizerAttention)
    return built
''',
    "08-a-code": '''def permuted_output(P, X):
    """The layer's output Z' when its input is the sequence X reordered by the permutation matrix P."""
    reordered = torch.matmul(P.type(X.dtype), X)
    return position_free_layer(reordered, *params)


P = torch.zeros(T, T, dtype=DTYPE)
for i in range(T):
    P[i, (i + 1) % T] = 1.0
''',
    "08-b-code": '''def position_embeddings(T, d):
    rows = []
    for pos in range(T):
        row = []
        for i in range(0, d, 2):
            angle = pos / (10000 ** (i / d))
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=DTYPE)
''',
}


def renamed(code: str) -> str:
    """``code`` with RENAMES applied to names (not to keywords of calls) and its comments reworded."""
    code = re.sub(r"#.*", "# reworded by bob", code)
    for old, new in RENAMES.items():
        pattern = rf"\b{old}\b(?!=)" if old in KEYWORDS else rf"(?<![.\w]){old}\b"
        code = re.sub(pattern, new, code)
    return code


def notebook(source: Path, cells: dict[str, str] | None = None, edit=None) -> str:
    """The notebook at ``source`` as JSON text, graded cells replaced by ``cells`` or passed through ``edit``."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        grade_id = meta["grade_id"]
        if cells and grade_id in cells:
            cell["source"] = cells[grade_id]
        elif edit:
            cell["source"] = edit("".join(cell["source"]))
    return json.dumps(nb)


def submit(submitted: Path, student: str, files: dict[str, str | bytes]) -> None:
    folder = submitted / student / "a5"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    """alice: the reference; bob: alice renamed; carol: her own code; erin, frank: blank; gina: one broken file."""
    submitted = tmp_path_factory.mktemp("cohort") / "submitted"
    submit(submitted, "alice", {n: notebook(SOLUTIONS / n) for n in NOTEBOOKS})
    bob = {n: notebook(SOLUTIONS / n, edit=renamed) for n in NOTEBOOKS}
    bob[NOTEBOOKS[1]] = bob[NOTEBOOKS[1]].replace("# reworded by bob", f"# {SCRIPT}", 1)
    submit(submitted, "bob", bob)
    submit(submitted, "carol", {n: notebook(RELEASE / n, CAROL) for n in NOTEBOOKS[1:]})
    for blank in ("erin", "frank"):
        submit(submitted, blank, {n: notebook(RELEASE / n) for n in NOTEBOOKS})
    submit(submitted, "gina", {NOTEBOOKS[0]: notebook(RELEASE / NOTEBOOKS[0]),
                               NOTEBOOKS[2]: notebook(SOLUTIONS / NOTEBOOKS[2])[:500]})
    return submitted


@pytest.fixture(scope="module")
def report(cohort):
    return similarity_report(cohort, RELEASE)


def scores(report, cell: str) -> dict[tuple[str, str], float]:
    return {(p.a, p.b): p.similarity for p in report.ranked(cell)}


def test_the_graded_cells_are_the_release_solution_cells():
    """Are the compared cells the release's code cells with nbgrader solution metadata, starter code and all?"""
    cells = {c.grade_id: c for c in graded_cells(RELEASE)}
    assert {"02-glue", "03-span-corruption", "05-synthesizer", "07-a-code", "08-b-code"} <= set(cells)
    assert not any(g.endswith("-test") for g in cells)  # the test cells are the grader's, not the students'
    assert "raise NotImplementedError()" in cells["03-span-corruption"].starter


def test_the_renamed_copy_ranks_at_the_top(report):
    """Does bob (alice's code, names renamed and comments changed) top the overall and every per-cell ranking?"""
    alice, bob = (report.code[(s, "03-span-corruption")] for s in ("alice", "bob"))
    assert "doc_text" in bob and "document" not in bob and "# 1. keep" in alice  # renamed, comments reworded
    assert bob_first(report.ranked(OVERALL))
    assert report.ranked(OVERALL)[0].similarity > 0.95
    for grade_id in ("02-glue", "03-span-corruption", "05-synthesizer", "08-b-code"):
        assert bob_first(report.ranked(grade_id)), grade_id
    carol = scores(report, OVERALL)
    assert max(carol.get(("alice", "carol"), 0), carol.get(("bob", "carol"), 0)) < 0.5  # genuinely different


def bob_first(ranked) -> bool:
    return bool(ranked) and (ranked[0].a, ranked[0].b) == ("alice", "bob")


def test_blank_starter_code_makes_no_pair_similar(report, cohort, tmp_path):
    """Do two blank submissions share nothing, while with the starter counted they would match in full?"""
    blank = [(p.cell, p.a, p.b) for p in report.pairs if {p.a, p.b} & {"erin", "frank"}]
    assert blank == []
    # the same cohort against a release whose starter code is empty: the blanks match entirely
    release = tmp_path / "release"
    release.mkdir()
    for path in RELEASE.glob("*.ipynb"):
        (release / path.name).write_text(notebook(path, edit=lambda code: ""), encoding="utf-8")
    counted = similarity_report(cohort, release)
    assert scores(counted, "02-glue")[("erin", "frank")] == pytest.approx(1.0)


def test_a_malformed_notebook_is_skipped_with_a_reason(report):
    """Is gina's truncated notebook listed as skipped with a reason, and her readable one still compared?"""
    skipped = [s for s in report.skipped if s.student == "gina"]
    assert [(s.where, s.reason[:18]) for s in skipped] == [(NOTEBOOKS[2], "not valid JSON (li")]
    assert "gina" in report.students and set(report.code) >= {("gina", "02-glue")}


@pytest.mark.parametrize("data, reason", [(b"\xff\xfe", "not UTF-8"), (b"[1, 2]", "not a notebook"),
                                          (b'{"cells": [1]}', "a cell is not"), (b"[" * 100_000, "JSON nested"),
                                          (b'{"cells": [{"cell_type": "code", "metadata": {"nbgrader": '
                                           b'{"grade_id": ["x"]}}}, {"cell_type": "code", "source": 3, "metadata": '
                                           b'{"nbgrader": {"grade_id": "x"}}}]}', "a cell's source")])
def test_each_kind_of_broken_notebook_has_its_reason(data, reason):
    """Does every way a notebook can be broken come back as a short reason rather than an exception?"""
    from autograder.exports.similarity import Malformed

    with pytest.raises(Malformed, match=re.escape(reason)):
        read_cells(data, {"x"})


def test_the_page_escapes_student_code_and_names(report, cohort, tmp_path):
    """Does the HTML show bob's <script> comment and an odd folder name as text, never as markup?"""
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    for student in ("alice", "bob"):
        shutil.copytree(cohort / student, submitted / student)
    (submitted / "<script>x").mkdir()
    rep = similarity_report(submitted, RELEASE)
    _, _, page = write_report(rep, tmp_path / "out")
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "&lt;script&gt;alert(&#x27;bob&#x27;)&lt;/script&gt;" in text
    assert "&lt;script&gt;x" in text  # the folder's name, in the skipped table


def test_long_cells_are_cut_and_said_so(tmp_path):
    """Is a cell longer than the cap compared only up to it, with a note saying so?"""
    submitted = tmp_path / "submitted"
    huge = {"08-b-code": "x = 1\n" * 10_000}
    submit(submitted, "hal", {NOTEBOOKS[3]: notebook(RELEASE / NOTEBOOKS[3], huge)})
    rep = similarity_report(submitted, RELEASE, settings=Settings(max_cell_chars=1000))
    assert len(rep.code[("hal", "08-b-code")]) == 1000
    assert [s.where for s in rep.skipped] == ["08-b-code"]


def test_oversized_and_linked_notebooks_are_skipped_unread(tmp_path):
    """Are a notebook over the size cap and a symbolic link to one skipped with collect's reasons, unread?"""
    submitted = tmp_path / "submitted"
    outside = tmp_path / "elsewhere.ipynb"
    outside.write_text(notebook(SOLUTIONS / NOTEBOOKS[3]), encoding="utf-8")
    submit(submitted, "ivan", {NOTEBOOKS[1]: notebook(SOLUTIONS / NOTEBOOKS[1]) + " " * 20_000})
    (submitted / "ivan" / "a5" / NOTEBOOKS[3]).symlink_to(outside)
    rep = similarity_report(submitted, RELEASE, settings=Settings(notebook_bytes=10_000))
    reasons = {s.where: s.reason for s in rep.skipped}
    assert reasons.keys() == {NOTEBOOKS[1], NOTEBOOKS[3]}
    assert reasons[NOTEBOOKS[1]].endswith("over the 9.8 KB limit")
    assert reasons[NOTEBOOKS[3]].startswith("a symbolic link")
    assert rep.code == {} and rep.students == []


def test_the_command_writes_the_csv_and_the_page(cohort, tmp_path, capsys):
    """Does `python -m autograder similarity` write similarity.csv (overall then per cell, ranked) and the page?"""
    assert main(["similarity", str(cohort), "--out", str(tmp_path / "out")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "similarity.csv", encoding="utf-8")))
    assert (rows[0]["cell"], rows[0]["rank"], rows[0]["student_a"], rows[0]["student_b"]) == (
        OVERALL, "1", "alice", "bob")
    cells = [r["cell"] for r in rows]
    assert cells.index("03-span-corruption") > cells.index(OVERALL)
    skipped = list(csv.DictReader(open(tmp_path / "out" / "skipped.csv", encoding="utf-8")))
    assert [r["student"] for r in skipped] == ["gina"]
    assert (tmp_path / "out" / "similarity.html").is_file()
    assert "alice" in capsys.readouterr().out
