"""The cohort's similarity report: copies rank first however they are hidden, the release's code never counts, honest
work does not flood it, bad input is skipped."""
from __future__ import annotations

import csv
import itertools
import re
import shutil
from pathlib import Path

import pytest
from code_disguises import DISGUISES
from conftest import SOLUTIONS
from honest_code import CAROL, SCRATCH, SHARED_SNIPPET
from similarity_cohorts import (
    PART_ROWS,
    REFERENCE,
    RELEASE,
    answers,
    apart,
    files,
    honest,
    moved,
    notebook,
    submit,
    wrapped,
    write_class,
)

from autograder.__main__ import main
from autograder.exports.similarity import OVERALL, Settings, graded_cells, read_cells, release_of, similarity_report
from autograder.exports.similarity_files import write_report

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

def renamed(code: str) -> str:
    """``code`` with RENAMES applied to names (not to keywords of calls) and its comments reworded."""
    code = re.sub(r"#.*", "# reworded by bob", code)
    for old, new in RENAMES.items():
        pattern = rf"\b{old}\b(?!=)" if old in KEYWORDS else rf"(?<![.\w]){old}\b"
        code = re.sub(pattern, new, code)
    return code


@pytest.fixture(scope="module")
def cohort(tmp_path_factory) -> Path:
    """alice: the reference; bob: alice renamed; carol: her own code; dora: alice's code moved out of the graded cells;
    ezra: alice's code run from strings; erin, frank: blank; gina: one broken file."""
    submitted = tmp_path_factory.mktemp("cohort") / "submitted"
    submit(submitted, "alice", {n: notebook(SOLUTIONS / n) for n in NOTEBOOKS})
    bob = {n: notebook(SOLUTIONS / n, edit=renamed) for n in NOTEBOOKS}
    bob[NOTEBOOKS[1]] = notebook(SOLUTIONS / NOTEBOOKS[1],
                                 edit=lambda code: renamed(code).replace('"""', f'"""{SCRIPT} ', 1))
    submit(submitted, "bob", bob)
    submit(submitted, "dora", {n: moved(n, REFERENCE) for n in NOTEBOOKS})
    ezra = {}
    for i, n in enumerate(NOTEBOOKS):
        mine = answers(SOLUTIONS / n)
        ezra[n] = notebook(RELEASE / n, {g: wrapped(code, i + j) for j, (g, code) in enumerate(mine.items())})
    submit(submitted, "ezra", ezra)
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
    assert any("raise NotImplementedError()" in code and "CharCorruptionDataset" in code
               for code in release_of(RELEASE).code)  # the starter, with the release's other code: boilerplate


def test_the_renamed_copy_ranks_at_the_top(report):
    """Does bob (alice's code, names renamed and comments changed) score as a copy of alice overall and in every graded
    cell, while carol's own code does not?"""
    alice, bob = (report.code[(s, "03-span-corruption")] for s in ("alice", "bob"))
    assert "doc_text" in bob and "document" not in bob and "document" in alice  # renamed
    assert scores(report, OVERALL)[("alice", "bob")] > 0.95
    for grade_id in ("02-glue", "03-span-corruption", "05-synthesizer", "08-b-code"):
        assert scores(report, grade_id)[("alice", "bob")] > 0.95, grade_id
        assert report.ranked(grade_id)[0].similarity == pytest.approx(scores(report, grade_id)[("alice", "bob")])
    carol = scores(report, OVERALL)
    assert max(carol.get(("alice", "carol"), 0), carol.get(("bob", "carol"), 0)) < 0.5  # genuinely different


def test_a_copy_moved_out_of_the_graded_cells_in_another_order_is_found(report):
    """Does dora (alice's answers in new untagged cells below the released ones, last first) score as a copy of alice
    overall and on every graded cell's row, though none of her graded cells holds any of it?"""
    assert scores(report, OVERALL)[("alice", "dora")] > 0.95
    for grade_id in ("02-glue", "03-span-corruption", "05-synthesizer", "08-a-code", "08-b-code"):
        assert scores(report, grade_id)[("alice", "dora")] > 0.95, grade_id
        assert "NotImplementedError" not in report.code[("dora", grade_id)]  # the release's stub is no code of hers


def test_a_copy_run_from_strings_is_found(report):
    """Does ezra (each of alice's answers run through exec, exec of compile, two added literals or %%capture) score as
    a copy of alice overall and in every graded cell?"""
    assert scores(report, OVERALL)[("alice", "ezra")] > 0.95
    for grade_id in ("02-glue", "03-span-corruption", "05-synthesizer", "08-a-code", "08-b-code"):
        assert scores(report, grade_id)[("alice", "ezra")] > 0.95, grade_id


def test_a_copy_handed_in_only_as_a_renamed_download_is_compared_in_its_place(tmp_path):
    """Is finn, whose 03 is alice's handed in only as the browser's '03_span_corruption (1).ipynb' (which the graders
    take in the missing notebook's place), still compared on 03's row and found a copy of alice?"""
    submitted = tmp_path / "submitted"
    submit(submitted, "alice", {n: notebook(SOLUTIONS / n) for n in NOTEBOOKS})
    submit(submitted, "carol", {n: notebook(RELEASE / n, CAROL) for n in NOTEBOOKS[1:]})
    finn = {n: notebook(RELEASE / n, CAROL) for n in NOTEBOOKS[1:]}
    del finn[NOTEBOOKS[1]]
    finn["03_span_corruption (1).ipynb"] = notebook(SOLUTIONS / NOTEBOOKS[1], edit=renamed)
    submit(submitted, "finn", finn)
    report = similarity_report(submitted, RELEASE)
    assert scores(report, "03-span-corruption")[("alice", "finn")] > 0.95
    assert "doc_text" in report.code[("finn", "03-span-corruption")]


def test_honest_students_with_the_same_short_answers_rank_below_every_copy(tmp_path):
    """Do three students who wrote every part their own way (the same one-line answers of 07, scratch cells of the
    same kind) stay below half alike overall, with no row for a one-line answer, while a moved copy and a copy run
    from strings of one of them rank above every honest pair?"""
    submitted = tmp_path / "submitted"
    cohort = {"hal": honest(dict.fromkeys(("glue", "span", "synthesizer", "position"), 0)),
              "ida": honest(dict.fromkeys(("glue", "span", "synthesizer", "position"), 1)),
              "jon": honest(dict.fromkeys(("glue", "span", "synthesizer", "position"), 2), short=1)}
    for i, (student, given) in enumerate(cohort.items()):
        submit(submitted, student, files(given, SCRATCH[i:i + 4]))
    submit(submitted, "kim", {n: moved(n, cohort["ida"]) for n in files({})})
    submit(submitted, "lee", files({g: wrapped(code, i) for i, (g, code) in enumerate(cohort["jon"].items())}))
    report = similarity_report(submitted, RELEASE)
    overall = scores(report, OVERALL)
    honest_pairs = [overall.get(pair, 0.0) for pair in (("hal", "ida"), ("hal", "jon"), ("ida", "jon"))]
    assert max(honest_pairs) < 0.5
    assert min(overall[("ida", "kim")], overall[("jon", "lee")]) > 0.95
    assert not [p for p in report.pairs if p.cell in ("07-a-code", "07-b-code", "07-c-code", "07-d-code")
                and {p.a, p.b} <= set(cohort)]


@pytest.fixture(scope="module")
def a_class(tmp_path_factory):
    """Twelve honest students, each part written one of six ways, four of them sharing one cell verbatim (a study
    group's), and a copy of ten of them, each disguised one way; the report with the snippet unknown, and with it
    given as base code."""
    root = tmp_path_factory.mktemp("class")
    members = write_class(root / "submitted", 12, 4, DISGUISES, seed=0)
    (root / "snippet.py").write_text(SHARED_SNIPPET, encoding="utf-8")
    settings = Settings(max_pairs=10 ** 6)
    return members, similarity_report(root / "submitted", RELEASE, settings=settings), similarity_report(
        root / "submitted", RELEASE, settings=settings, base=(root / "snippet.py",))


def _apart_pairs(members, grade_id=None) -> list[tuple[str, str]]:
    return [(a, b) for a, b in itertools.combinations(sorted(members), 2) if apart(members[a], members[b], grade_id)]


def _copy_pair(members, kind: str) -> tuple[str, str]:
    return tuple(sorted((f"copy-{kind}", members[f"copy-{kind}"].copy_of)))


def test_in_a_class_sharing_a_snippet_every_disguised_copy_ranks_above_every_honest_pair(a_class):
    """Does every disguised copy (renamed, reordered, dead code, comments, loops rewritten, a helper extracted, cells
    split, moved, mixed two ways) rank above every honest pair that wrote every part apart, the study group's pairs
    included, by the class-weighted score, with the raw score beside it; and does giving the snippet as base code take
    it out?"""
    members, report, based = a_class
    overall = {(p.a, p.b): p for p in report.ranked(OVERALL)}
    honest_pairs = _apart_pairs(members)
    group = [pair for pair in honest_pairs if members[pair[0]].snippet and members[pair[1]].snippet]
    assert group  # the study group holds honest pairs that wrote everything else apart
    top = max(overall[pair].similarity for pair in honest_pairs if pair in overall)
    for kind in DISGUISES:
        found = overall[_copy_pair(members, kind)]
        assert found.similarity > top, (kind, found, top)
        assert 0 < found.raw <= 1 and found.matched > 0
    shared = {(p.a, p.b): p for p in based.ranked(OVERALL)}
    assert all(shared.get(pair) is None or shared[pair].raw < overall[pair].raw for pair in group)


def test_every_copy_is_seen_on_the_rows_of_the_parts_it_copied(a_class):
    """On each graded cell's row (the code its answer runs, wherever it stands), does every copy, the mixed ones whose
    code moved into helpers and into the cell after it included, score above every honest pair that wrote that part
    apart?"""
    members, report, _ = a_class
    for cell in PART_ROWS:
        row = {(p.a, p.b): p.similarity for p in report.ranked(cell)}
        top = max((row.get(pair, 0.0) for pair in _apart_pairs(members, cell)), default=0.0)
        for kind in DISGUISES:
            assert row.get(_copy_pair(members, kind), 0.0) > top, (cell, kind, top)


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
    """Does the HTML show bob's <script> docstring and an odd folder name as text, never as markup?"""
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
    copies = {"alice", "bob", "dora", "ezra"}  # alice and her copies: each pair 0.95 or more
    assert (rows[0]["cell"], rows[0]["rank"]) == (OVERALL, "1")
    assert {rows[0]["student_a"], rows[0]["student_b"]} <= copies
    assert float(rows[0]["similarity"]) > 0.95 and float(rows[0]["raw_similarity"]) > 0.95
    cells = [r["cell"] for r in rows]
    assert cells.index("03-span-corruption") > cells.index(OVERALL)
    skipped = list(csv.DictReader(open(tmp_path / "out" / "skipped.csv", encoding="utf-8")))
    assert [r["student"] for r in skipped] == ["gina"]
    assert (tmp_path / "out" / "similarity.html").is_file()
    assert "alice" in capsys.readouterr().out
