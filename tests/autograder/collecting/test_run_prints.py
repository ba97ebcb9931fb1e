"""The runs' prints a collect unit makes: sketches of the weights, hashes of the answers, the seeds the logs record."""
from __future__ import annotations

import os
import pickle

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks.run_files import RUN_PARTS
from autograder.collecting.near_copies import near_copies
from autograder.collecting.prints import Prints
from autograder.collecting.run_prints import (
    SKETCH_WIDTH,
    answer_hash,
    hash_predictions,
    recorded_seed,
    sketch_params,
    trimmed,
)
from course_lib.gpt.model import GPT, GPTConfig


class RunsCode:
    """A pickle that would run code when loaded."""

    def __reduce__(self):
        return (os.system, ("touch ran-the-students-code",))


def _model_state(seed: int) -> dict:
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16)).state_dict()


def test_one_model_saved_other_ways_has_one_sketch(tmp_path):
    """Do DataParallel's names, a persistent mask, another key order and a tensor of the student's own leave the
    sketch of the weights as it was, while another seed's model is another sketch?"""
    state = _model_state(0)
    torch.save(state, tmp_path / "plain.params")
    other_way = {f"module.{k}": v for k, v in reversed(list(state.items()))}
    other_way["module.blocks.0.attn.mask"] = torch.ones(1, 1, 16, 16)
    other_way["module.my_probe.weight"] = torch.randn(4, 4)
    torch.save(other_way, tmp_path / "wrapped.params")
    torch.save(_model_state(1), tmp_path / "other.params")
    plain, wrapped, other = (sketch_params(tmp_path / f"{n}.params").matrix() for n in ("plain", "wrapped", "other"))
    # the token embedding and head, six matrices a block (pos_emb starts at zero: a constant tensor has no sketch)
    assert plain.keys() == wrapped.keys() == other.keys() and len(plain) == 2 + 2 * 6
    assert all(np.allclose(plain[k], wrapped[k]) for k in plain)
    assert np.median([abs(plain[k] @ other[k]) for k in plain]) < 0.5


def test_a_params_file_that_is_not_tensors_has_no_sketch_and_runs_nothing(tmp_path, monkeypatch):
    """Is a pickle that would run code, a text file or a list of tensors given no sketch, nothing run?"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "code.params").write_bytes(pickle.dumps(RunsCode()))
    (tmp_path / "text.params").write_text("not a model")
    torch.save([torch.ones(3, 3)], tmp_path / "list.params")
    assert [sketch_params(tmp_path / f"{n}.params") for n in ("code", "text", "list")] == [None, None, None]
    assert not (tmp_path / "ran-the-students-code").exists()


def test_answers_are_read_as_the_grader_reads_them(tmp_path):
    """Do a byte-order mark, CRLF, spaces at the ends and blank lines after the last answer leave the hashes of the
    answers as they were, and does a file that is not UTF-8 have none?"""
    (tmp_path / "plain").write_text("Paris\nLyon\n\n", encoding="utf-8")
    (tmp_path / "windows").write_bytes(b"\xef\xbb\xbfParis \r\nLyon\r\n\r\n\r\n\r\n")
    (tmp_path / "latin1").write_bytes("Zürich\n".encode("latin-1"))
    plain, windows = (trimmed(hash_predictions(tmp_path / n), 3) for n in ("plain", "windows"))
    assert plain == windows == answer_hash("Paris") + answer_hash("Lyon") + answer_hash("")
    assert hash_predictions(tmp_path / "latin1") is None


def test_only_an_int_seed_is_taken_from_a_log(tmp_path):
    """Is a log's seed taken only when it is a plain int, and nothing from a log that is not JSON?"""
    for name, text in (("int", '{"seed": 42}'), ("bool", '{"seed": true}'), ("text", '{"seed": "42"}'),
                       ("huge", '{"seed": 99999999999999999999}'), ("list", "[1]"), ("junk", "{")):
        (tmp_path / name).write_text(text)
    assert [recorded_seed(tmp_path / n) for n in ("int", "bool", "text", "huge", "list", "junk")] == \
        [42, None, None, None, None, None]


def _reordered(state: dict, n_head: int, generator: torch.Generator) -> dict:
    """The MLP's units, the heads and each head's dimensions reordered together: the same function."""
    state = dict(state)
    for b in {k.split(".")[1] for k in state if k.startswith("blocks.")}:
        units = torch.randperm(state[f"blocks.{b}.mlp.0.weight"].shape[0], generator=generator)
        for name, rows in (("mlp.0.weight", units), ("mlp.0.bias", units)):
            state[f"blocks.{b}.{name}"] = state[f"blocks.{b}.{name}"][rows]
        state[f"blocks.{b}.mlp.2.weight"] = state[f"blocks.{b}.mlp.2.weight"][:, units]
        hs = state[f"blocks.{b}.attn.proj.weight"].shape[0] // n_head
        heads = torch.randperm(n_head, generator=generator).tolist()
        scores, values = (torch.cat([h * hs + torch.randperm(hs, generator=generator) for h in heads]) for _ in "qv")
        for name, rows in (("query", scores), ("key", scores), ("value", values)):
            for kind in ("weight", "bias"):
                state[f"blocks.{b}.attn.{name}.{kind}"] = state[f"blocks.{b}.attn.{name}.{kind}"][rows]
        state[f"blocks.{b}.attn.proj.weight"] = state[f"blocks.{b}.attn.proj.weight"][:, values]
    return state


def test_circuits_ignore_the_order_of_units_heads_and_head_dimensions(tmp_path):
    """Are a model's circuits the same when its MLP units, heads and each head's dimensions are reordered together
    (most weight matrices then other), while another seed's model has other circuits, and is the sketch of an average
    of models the average of their sketches?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16))
    x = torch.randint(0, 20, (2, 15))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    reordered = _reordered(state, 2, torch.Generator().manual_seed(1))
    model.eval()
    expected = model(x)[0]
    model.load_state_dict(reordered)
    assert torch.allclose(model(x)[0], expected, atol=1e-5)  # the same function
    for name, s in (("plain", state), ("reordered", reordered), ("other", _model_state(1)),
                    ("mean", {k: (v + _model_state(1)[k]) / 2 for k, v in state.items()})):
        torch.save(s, tmp_path / f"{name}.params")
    plain, reordered, other, mean = (sketch_params(tmp_path / f"{n}.params")
                                     for n in ("plain", "reordered", "other", "mean"))
    assert len(plain.matrix(circuits=True)) == 2 * 3  # qk, ov and mlp of each block
    weights, circuits = ([abs(a[k] @ b[k]) for k in a] for a, b in ((plain.matrix(), reordered.matrix()),
                                                                    (plain.matrix(True), reordered.matrix(True))))
    assert np.median(weights) < 0.5 and min(circuits) > 0.999
    assert np.median([abs(plain.matrix(True)[k] @ other.matrix(True)[k]) for k in plain.matrix(True)]) < 0.5
    assert all(np.allclose(mean.raw()[k], (plain.raw()[k] + other.raw()[k]) / 2, atol=1e-4) for k in plain.raw())


def _residual_permuted(state: dict, order: torch.Tensor) -> dict:
    """Every axis of the residual stream permuted alike (LayerNorm is elementwise in it): the same function."""
    reads = ("tok_emb.weight", "head.weight", "key.weight", "query.weight", "value.weight", "mlp.0.weight")
    writes = ("proj.weight", "proj.bias", "mlp.2.weight", "mlp.2.bias", "ln1.weight", "ln1.bias", "ln2.weight",
              "ln2.bias", "ln_f.weight", "ln_f.bias")
    return {k: v[..., order] if k.endswith(reads) or k == "pos_emb" else v[order] if k.endswith(writes) else v
            for k, v in state.items()}


def test_a_copy_with_its_residual_stream_permuted_is_flagged_and_another_seed_is_not(tmp_path):
    """Is a model whose residual stream's axes are all permuted alike (same function, every matrix other) flagged
    against its source through its circuits, while a model of another seed is flagged against neither?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16)).eval()
    for name, p in model.named_parameters():
        if name.startswith(("pos_emb", "ln")) or ".ln" in name:  # not the identity LayerNorm of a fresh model
            p.data.normal_(1.0 if name.endswith("weight") else 0.0, 0.2)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    copy = _residual_permuted(state, torch.randperm(16, generator=torch.Generator().manual_seed(1)))
    x = torch.randint(0, 20, (2, 15))
    expected = model(x)[0]
    model.load_state_dict(copy)
    assert torch.allclose(model(x)[0], expected, atol=1e-5)  # the same function
    file = RUN_PARTS[0].params
    students = []
    for name, s in (("ana", state), ("ben", _model_state(1)), ("cara", copy)):
        torch.save(s, tmp_path / f"{name}.params")
        students.append((name, Prints((), (), "", ((file, sketch_params(tmp_path / f"{name}.params")),))))
    flagged = near_copies(students, None)
    assert [(f.file, f.student, f.other) for f in flagged] == [(file, "ana", "cara")]
    assert "circuits: median cosine 1.000" in flagged[0].why


NAMES = ("tok_emb.weight", "head.weight", *(f"blocks.{b}.{n}" for b in (0, 1, 7) for n in (
    "attn.query.weight", "attn.key.weight", "attn.value.weight", "attn.proj.weight", "attn.w1.weight", "attn.w2",
    "mlp.0.weight", "mlp.2.weight")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(NAMES), st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(1, 3)),
                       max_size=14))
def test_any_params_of_the_models_names_sketch_or_have_none(tmp_path, shapes):
    """Do tensors of any shapes under the course model's names (products that do not multiply, empty ones, three
    dimensions) give a sketch of bounded size, or none, without raising?"""
    state = {name: torch.randn(rows, cols) if dims == 2 else torch.randn(rows, cols, dims)
             for name, (rows, cols, dims) in shapes.items()}
    torch.save(state, tmp_path / "any.params")
    found = sketch_params(tmp_path / "any.params")
    if found is not None:
        assert len(found.tensors) <= len(state) and len(found.circuits) <= 4 * 3
        assert all(len(raw) == 4 * SKETCH_WIDTH for _, raw in (*found.tensors, *found.circuits))
