"""The decode: every split's questions answered by trusted model code in one pass a part."""
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


def test_each_splits_answers_are_those_of_decoding_it_alone(tmp_path, world_dir, world_answers):
    """Are a part's dev and test answers, decoded together, those each split gets decoded on its own, for vanilla
    and synthesizer attention, with batches smaller than a length's questions too?"""
    preset = get_preset("smoke")
    vocab = CharCorruptionDatasetBase((world_dir / layout.WIKI).read_text(encoding="utf-8"), preset.block_size).vocab
    questions = {"dev": [e.question for e in read_birth_places(world_dir / layout.DEV)],
                 "test": [e.question for e in read_birth_places(world_answers)]}
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
        got = decode({"wiki": str(world_dir / layout.WIKI), "block_size": preset.block_size, "model": preset.model,
                      "batch_size": batch_size, "synthesizer_reference": str(SYNTHESIZER_REFERENCE), "parts": parts})
        for name, model in models.items():
            alone = {split: predict_places(model, vocab, split_questions, batch_size)
                     for split, split_questions in questions.items()}
            assert got[name] == alone, (name, batch_size)
            assert [len(got[name][split]) for split in questions] == [len(q) for q in questions.values()]
