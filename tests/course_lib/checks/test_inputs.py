"""The checks' inputs: no number of the handout among the sizes they draw, and the course data's own edge cases."""
from __future__ import annotations

import random
import re

import nbformat
import pytest
from conftest import REPO

from course_lib.checks import inputs as fresh
from course_lib.data_files import read_text
from course_lib.layout import DEFAULT_WORLD_SEED
from course_lib.world import generate_world

# an integer as the handout writes it: 128, 2,938, 20_000; not the digits of 0.1, 1e-4, x_1 or 2i
NUMBER = re.compile(r"(?<![\w.])\d+(?:[,_]\d{3})*(?![\w.]\d|\w)")


def _numbers(text: str) -> set[int]:
    return {int(m.group().replace(",", "").replace("_", "")) for m in NUMBER.finditer(text)}


def test_handout_numbers_hold_every_number_the_release_and_presets_show():
    """Does HANDOUT_NUMBERS hold every integer of the release notebooks (code and text) and of the presets, so that
    no size a check draws can be one a student saw and typed in?"""
    shown = _numbers((REPO / "course_lib" / "presets.py").read_text(encoding="utf-8"))
    for path in sorted((REPO / "notebooks" / "a5").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            shown |= _numbers(cell.source)
    assert shown - fresh.HANDOUT_NUMBERS == set()
    assert {128, 16, 256, 512, 64, 32} <= shown  # the scan sees the sizes issue 40 named


def test_drawn_sizes_avoid_the_handout_numbers():
    """Do draw_size and draw_heads never give a number the handout shows, over many draws?"""
    rng = random.Random(0)
    for _ in range(2000):
        assert fresh.draw_size(rng, 9, 300) not in fresh.HANDOUT_NUMBERS
        n_head, n_embd = fresh.draw_heads(rng)
        assert n_head in fresh.HEAD_COUNTS and not {n_embd, n_embd // n_head} & fresh.HANDOUT_NUMBERS


def _edge_cases(documents: list[str], block_size: int) -> dict:
    """What a corpus holds of the span corruption's edge cases at a block size."""
    lengths = [len(d) for d in documents]
    return {"short": {n for n in lengths if n < 4}, "longest": max(lengths), "block": block_size in lengths,
            "cap": fresh.kept_cap(block_size) in lengths}


def _course_corpora(original_data=None) -> dict[str, list[str]]:
    corpora = {"world": "\n".join(generate_world(DEFAULT_WORLD_SEED).wiki_lines) + "\n"}
    if original_data is not None:
        corpora["original"] = read_text(original_data / "wiki.txt")
    return {name: text.split("\n") for name, text in corpora.items()}


@pytest.mark.parametrize("data", ["world", "original"])
def test_span_plans_hold_the_course_datas_edge_cases(request, data):
    """Does every span plan hold (and draw) each edge case of the course's wiki.txt, the world's and the original's:
    its empty last document, lengths 1-3, a document as long as its longest, one exactly the block size long?"""
    original = request.getfixturevalue("original_data") if data == "original" else None
    documents = _course_corpora(original)[data]
    wanted = _edge_cases(documents, 128)
    assert 0 in wanted["short"]  # the trailing empty document, in both
    if data == "original":
        assert wanted["block"]  # 23 documents of exactly 128 characters
    rng = random.Random(1)
    for block_size in (19, 47, 63, 129, 255):
        plan = fresh.span_plan(rng, block_size, 600)
        corpus = plan["corpus"].split("\n")
        have = _edge_cases(corpus, block_size)
        assert have["short"] >= {0, 1, 2, 3} >= wanted["short"]
        assert have["longest"] >= max(wanted["longest"], fresh.LONGEST_DOCUMENT) and have["block"] and have["cap"]
        drawn = {len(corpus[i]) for i in plan["draws"]}
        assert {0, 1, 2, 3, block_size, fresh.kept_cap(block_size), have["longest"]} <= drawn
        assert [len(corpus[i]) for i in plan["draws"][:4]] == [0, 1, 2, 3]  # the edge documents first


def test_longest_document_is_the_original_datas_longest(original_data):
    """Is LONGEST_DOCUMENT the original wiki.txt's longest document (the world's are shorter)?"""
    assert max(len(d) for d in read_text(original_data / "wiki.txt").split("\n")) == fresh.LONGEST_DOCUMENT
    assert max(len(d) for d in _course_corpora()["world"]) < fresh.LONGEST_DOCUMENT


def test_toy_worlds_draw_every_size():
    """Does each toy world draw its block size, model shape and dropout rates (none the handout's or a preset's)?"""
    seen = set()
    for seed in range(40):
        world = fresh.toy_world(random.Random(seed))
        model = world["model"]
        assert world["block_size"] not in fresh.HANDOUT_NUMBERS and 48 <= world["block_size"] <= 120
        rates = {model["embd_pdrop"], model["resid_pdrop"], model["attn_pdrop"]}
        assert len(rates) == 3 and not rates & {0.0, 0.1}
        seen.add((world["block_size"], model["n_layer"], model["n_head"], model["n_embd"]))
    assert len(seen) > 30
    quiet = fresh.toy_world(random.Random(0), dropout=False)["model"]
    assert (quiet["embd_pdrop"], quiet["resid_pdrop"], quiet["attn_pdrop"]) == (0.0, 0.0, 0.0)
