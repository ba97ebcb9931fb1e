"""Nothing a student receives contains a graded answer, verbatim or as a formula.

What students receive: the release notebooks (``notebooks/a5/*.ipynb``) and the ``course_lib`` package.
Two kinds of scan:
  - every non-trivial line of every ``### BEGIN SOLUTION`` region of the solution notebooks,
    whitespace-normalised, must appear in no shipped file (derived from the solutions, so new
    answers are covered without editing this file);
  - the reference answers' formulas, in the forms they could be written (code or LaTeX, any scale,
    any spacing), must match nothing shipped. Each pattern is first shown to find its answer in the
    solutions, so a pattern that has gone stale fails here instead of silently matching nothing.
"""
from __future__ import annotations

import ast
import re

import nbformat
import pytest
from conftest import REPO, SOLUTIONS

RELEASE = REPO / "notebooks" / "a5"
COURSE_LIB = REPO / "course_lib"
SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.S)
# lines of a solution that are not an answer: stub scaffolding, bare syntax, and keyword arguments with a
# literal value (the handout's hyperparameters, which the question itself states)
TRIVIAL = re.compile(r"^(#.*|\"\"\"|'''|pass|return|else:|try:|\)|\]|\}|[\w.]+\s*=\s*(\[\]|\{\}|0|None|True|False)"
                     r"|\w+=[\w.+\-*/ ]+,?)$")
# boilerplate a solution shares with code students are given (course_lib's vanilla attention, the tour)
GIVEN_ELSEWHERE = {"B, T, C = x.size()", "return self.resid_drop(self.proj(y))", "trainer.train()"}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _squash(text: str) -> str:
    """No whitespace at all: the formula patterns then ignore spacing."""
    return re.sub(r"\s+", "", text)


def shipped_texts() -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """name -> (whole text, [(kind, chunk)]) for every shipped file; chunks are cells or top-level functions."""
    texts = {}
    for path in sorted(RELEASE.glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        chunks = [(c.cell_type, c.source) for c in cells]
        texts[f"notebooks/a5/{path.name}"] = ("\n".join(c.source for c in cells), chunks)
    for path in sorted(COURSE_LIB.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        chunks = [("code", ast.get_source_segment(source, node) or "") for node in ast.walk(ast.parse(source))
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        texts[str(path.relative_to(REPO))] = (source, chunks + [("code", source)])
    return texts


def solution_lines() -> dict[str, list[str]]:
    """notebook -> the non-trivial, whitespace-normalised lines of its solution regions."""
    out = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        lines = []
        for cell in nbformat.read(path, as_version=4).cells:
            for region in SOLUTION_REGION.findall(cell.source):
                for line in region.splitlines():
                    line = _norm(line)
                    if len(line) >= 12 and not TRIVIAL.match(line) and line not in GIVEN_ELSEWHERE:
                        lines.append(line)
        out[path.name] = lines
    return out


# name -> (regex on the whitespace-free text, where it applies: "code", "markdown" or "any")
NUM = r"(?:\d+(?:\.\d*)?|beta|β|scale)"
FORMULAS = {
    # 07 (a): a scaled key copies its value
    "a scaled key, q = beta k_j": (rf"{NUM}\*keys\[\d\]|keys\[\d\]\*{NUM}", "code"),
    # 07 (b)(i): the projection onto A
    "projection basis_a.T @ basis_a": (r"basis_[ab]\.T@basis_[ab]|basis_[ab]\.t\(\)@basis_[ab]", "code"),
    "projection as a sum of outer products": (r"outer\(a(_j)?,a(_j)?\)|a_ja_j\^\\top|a_ja_j\^T", "any"),
    # 07 (b)(ii), (c)(i): beta times the sum of two keys or means
    "beta (k_a + k_b) in code": (rf"{NUM}\*\(keys\[\d\]\+keys\[\d\]", "code"),
    "beta (mu_a + mu_b) in code": (rf"{NUM}\*\(means\[\w\]\+means\[\w\]\)|\(means\[\w\]\+means\[\w\]\)\*{NUM}",
                                   "code"),
    "beta (mu_a + mu_b) in LaTeX": (r"\\beta\(\\mu_a\+\\mu_b\)|\(\\mu_a\+\\mu_b\)\\beta", "any"),
    "(mu_a + mu_b), code or LaTeX": (r"\(\\?mu_?a\+\\?mu_?b\)", "any"),
    "beta (k_a + k_b) in LaTeX": (r"\\beta\(k_a\+k_b", "any"),
    # 07 (d)(i): one head per mean
    "q_1 = beta mu_a in code": (rf"{NUM}\*means\[\w\]|means\[\w\]\*{NUM}", "code"),
    "q_1 = beta mu_a in LaTeX": (r"q_[12]=\\beta\\mu_[ab]", "any"),
    # 07 (e)(ii): V, K, Q from outer products of the u's
    "outer products of the u's in code": (r"outer\(u_[a-d],u_[a-d]\)", "code"),
    "outer products of the u's in LaTeX": (r"u_[a-d]u_[a-d]\^\\top", "any"),
    "V = beta^-2 (...)": (r"\\beta\^\{-2\}\(u_b", "any"),
    # 07 (e)(i): plain attention through identities
    "self_attention with identity maps": (r"self_attention\(X,(torch\.)?eye", "code"),
    # 08 (a): the layer on the permuted input
    "the layer applied to P @ X": (r"position_free_layer\(P[\w.()]*@X", "code"),
    # 08 (b): the sinusoid, in one function or cell
    "sinusoid": (r"(10000|1e4|10_000)(\.0*)?(\*\*|\)\*\*|pow|\^).*\b(sin|cos)\(|\b(sin|cos)\(.*(10000|1e4|10_000)",
                 "code"),
    # 08 (b): the angles' rates alone (10000 to a power of an arange, or the exp-log form), with or without the
    # sine: a helper returning t / 10000^(2i/d) is most of the answer (the old twin check shipped one)
    "the angle rates": (r"(10000|1e4|10_000)(\.0*)?\)?(,|\*\*|\)\*\*)[^;]{0,30}?arange"
                        r"|log\((10000|1e4|10_000)(\.0*)?\)", "code"),
}


def _matches(pattern: str, kind: str, chunks) -> list[str]:
    hits = []
    for chunk_kind, chunk in chunks:
        if kind != "any" and chunk_kind != kind:
            continue
        found = re.search(pattern, _squash(chunk), re.S)
        if found:
            hits.append(found.group(0)[:80])
    return hits


def _solution_chunks():
    chunks = []
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            chunks += [(cell.cell_type, region) for region in SOLUTION_REGION.findall(cell.source)]
    return chunks


def test_solution_lines_are_found_and_not_trivial():
    """Do the solution notebooks yield answer lines to look for, in every notebook with a solution?"""
    lines = solution_lines()
    assert sum(map(len, lines.values())) > 50
    assert lines["07_attention_exploration.ipynb"] and lines["08_position_embeddings.ipynb"]


@pytest.mark.parametrize("name", list(FORMULAS))
def test_formula_pattern_finds_its_answer_in_the_solutions(name):
    """Does this formula pattern match the reference answer it is meant to catch (so it can catch a leak)?"""
    pattern, kind = FORMULAS[name]
    assert _matches(pattern, kind, _solution_chunks()), f"{name}: the pattern no longer matches any solution"


def test_no_solution_line_is_shipped():
    """Does every non-trivial line of every solution region stay out of the release notebooks and course_lib?"""
    shipped = {name: _norm(text) for name, (text, _) in shipped_texts().items()}
    leaks = [f"{nb}: {line!r} in {name}" for nb, lines in solution_lines().items() for line in lines
             for name, text in shipped.items() if line in text]
    assert not leaks, "\n".join(leaks[:20])


def test_no_answer_formula_is_shipped():
    """Does any shipped notebook cell or course_lib function contain a reference answer's formula, in any form?"""
    leaks = []
    for name, (_, chunks) in shipped_texts().items():
        for formula, (pattern, kind) in FORMULAS.items():
            leaks += [f"{name}: {formula}: {hit!r}" for hit in _matches(pattern, kind, chunks)]
    assert not leaks, "\n".join(leaks[:20])


def test_scan_covers_what_students_receive():
    """Are the release notebooks and every course_lib module (the explorer and the checks included) scanned?"""
    names = set(shipped_texts())
    assert {"course_lib/notebook/widgets.py", "course_lib/checks/twins.py", "course_lib/gpt/attention_math.py"} <= names
    assert {f"notebooks/a5/{p.name}" for p in SOLUTIONS.glob("*.ipynb")} <= names


def test_scan_would_catch_the_old_explorer(monkeypatch, tmp_path):
    """Would the scan have caught the explorer that spelled out the (c) and (d) queries?"""
    old = "def f(beta, means):\n    c1 = attend(beta * (means[0] + means[1]), k, v)\n    q1 = beta * means[0]\n"
    chunks = [("code", old)]
    assert _matches(*FORMULAS["beta (mu_a + mu_b) in code"], chunks)
    assert _matches(*FORMULAS["q_1 = beta mu_a in code"], chunks)
    sinus = "def pe(T, d):\n    f = 10000 ** (-torch.arange(0, d, 2) / d)\n    return torch.sin(t * f)\n"
    assert _matches(*FORMULAS["sinusoid"], [("code", sinus)])


def test_scan_would_catch_the_old_angle_helper():
    """Would the scan have caught the twin check's helper that computed the 08 (b) angles (no sine in it)?"""
    helper = ("def _phi_angles(T, d):\n"
              "    rates = torch.pow(torch.tensor(1e4, dtype=DTYPE), -torch.arange(0, d - 1, 2, "
              "dtype=DTYPE) / d)\n    return torch.arange(T, dtype=DTYPE)[:, None] * rates\n")
    assert _matches(*FORMULAS["the angle rates"], [("code", helper)])
    assert not _matches(*FORMULAS["sinusoid"], [("code", helper)])  # why the new pattern is needed
