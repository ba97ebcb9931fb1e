"""The decode: every split's questions answered by trusted model code in one pass a part, the synthesizer's with a
cache of its values, all as the models' own ``forward`` answers them one split at a time."""
from __future__ import annotations

import torch

from autograder.grading.run_parts import SYNTHESIZER_REFERENCE
from autograder.inside.decoding import decode
from course_lib import layout
from course_lib.data_files import read_birth_places
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.evaluation import predict_places
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.loader.load import load_notebooks
from course_lib.presets import get_preset


def _world(world_dir, world_answers) -> tuple:
    """The smoke preset, the world's vocabulary and its dev and test questions."""
    preset = get_preset("smoke")
    vocab = CharCorruptionDatasetBase((world_dir / layout.WIKI).read_text(encoding="utf-8"), preset.block_size).vocab
    questions = {"dev": [e.question for e in read_birth_places(world_dir / layout.DEV)],
                 "test": [e.question for e in read_birth_places(world_answers)]}
    return preset, vocab, questions


def _decoded(world_dir, preset, parts: list[dict], batch_size: int) -> dict:
    """The decode's answers for ``parts`` on the world's wiki, with the reference synthesizer."""
    return decode({"wiki": str(world_dir / layout.WIKI), "block_size": preset.block_size, "model": preset.model,
                   "batch_size": batch_size, "synthesizer_reference": str(SYNTHESIZER_REFERENCE), "parts": parts})


def test_each_splits_answers_are_those_of_decoding_it_alone(tmp_path, world_dir, world_answers):
    """Are a part's dev and test answers, decoded together (the synthesizer's with its cache), those each split gets
    from the reference's own ``forward`` on its own, for vanilla and synthesizer attention, with batches smaller than
    a length's questions too?"""
    preset, vocab, questions = _world(world_dir, world_answers)
    synthesizer = load_notebooks([SYNTHESIZER_REFERENCE], module_name="reference_for_test").SynthesizerAttention
    parts, models = [], {}
    for name, attention in (("vanilla", None), ("synthesizer", synthesizer)):
        torch.manual_seed(len(name))
        config = GPTConfig(len(vocab), preset.block_size, **preset.model)
        models[name] = GPT(config, **({} if attention is None else {"attention_class": attention})).eval()
        torch.save(models[name].state_dict(), tmp_path / f"{name}.params")
        parts.append({"name": name, "params": str(tmp_path / f"{name}.params"), "attention": name,
                      "questions": questions})
    for batch_size in (512, 3):
        got = _decoded(world_dir, preset, parts, batch_size)
        for name, model in models.items():
            alone = {split: predict_places(model, vocab, split_questions, batch_size)
                     for split, split_questions in questions.items()}
            assert got[name] == alone, (name, batch_size)
            assert [len(got[name][split]) for split in questions] == [len(q) for q in questions.values()]


def test_the_synthesizers_cache_answers_as_the_references_forward_for_trained_params(tmp_path, world_dir,
                                                                                     world_answers, smoke_runs):
    """With a synthesizer trained in the smoke preset (pretrained, then finetuned), does the decode's cached answer to
    every dev and test question equal the reference's own ``forward``'s, one split at a time?"""
    preset, vocab, questions = _world(world_dir, world_answers)
    synthesizer = load_notebooks([SYNTHESIZER_REFERENCE], module_name="reference_for_trained").SynthesizerAttention
    params = smoke_runs / "synthesizer.finetune.params"
    model = GPT(GPTConfig(len(vocab), preset.block_size, **preset.model), attention_class=synthesizer).eval()
    model.load_state_dict(torch.load(params, weights_only=True))
    got = _decoded(world_dir, preset, [{"name": "s", "params": str(params), "attention": "synthesizer",
                                        "questions": questions}], 512)
    assert got["s"] == {split: predict_places(model, vocab, q, 512) for split, q in questions.items()}


def test_the_synthesizers_cache_gives_the_references_rows_after_any_past():
    """Does the cached attention give, for new positions after any number of cached ones, the rows the reference's
    ``forward`` gives on the whole sequence (to float rounding), with scores far from their near-uniform start?"""
    from autograder.inside.synthesizer_cache import with_cache

    reference = load_notebooks([SYNTHESIZER_REFERENCE], module_name="reference_for_rows").SynthesizerAttention
    torch.manual_seed(3)
    config = GPTConfig(vocab_size=5, block_size=17, n_layer=1, n_head=3, n_embd=12)
    attention = with_cache(reference)(config).eval()
    with torch.no_grad():
        attention.w2.normal_(0, 2.0)
        attention.b2.normal_(0, 2.0)
    x = torch.randn(2, 16, 12)  # (B, T, C)
    whole = attention(x)  # (B, T, C)
    for split in (1, 5, 15):
        first, cache = attention.forward_cached(x[:, :split], None)
        rest, cache = attention.forward_cached(x[:, split:], cache)
        assert cache[0].shape == (2, 3, 16, 4)
        torch.testing.assert_close(torch.cat([first, rest], dim=1), whole, rtol=1e-5, atol=1e-6)
