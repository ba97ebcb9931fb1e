"""Hidden checks, stronger than the public ones, called from the hidden test cells.

Each raises AssertionError with a hint that names what is wrong without giving
the answer. References come from the solution notebooks, loaded with the same
loader that loads a student's notebook.
"""
from __future__ import annotations

import functools
from pathlib import Path

import torch

from course_lib.checks import TOY_CORPUS, synthesizer_config, span_corruption_problems
from course_lib.notebook_loader import load_notebooks, notebook_paths

SOLUTIONS = Path(__file__).resolve().parents[1] / "solutions" / "a5"
SPAN_BLOCK_SIZES = (24, 50, 128, 200)  # from 24 up, 7/8 of the block plus three masks fits
SYNTH_CONFIGS = ((6, 3, 8), (16, 4, 12), (32, 8, 20), (12, 1, 5))  # (n_embd, n_head, block_size)


@functools.lru_cache(maxsize=1)
def reference():
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="hidden_reference")


def check_span_corruption_hidden(dataset_class, samples: int = 600) -> None:
    """Every SPEC property over many samples and several block sizes, on two corpora."""
    long_corpus = "\n".join(line * 3 for line in TOY_CORPUS.split("\n"))
    for corpus in (TOY_CORPUS, long_corpus):
        for block_size in SPAN_BLOCK_SIZES:
            for seed in (1, 2):
                problems = span_corruption_problems(dataset_class, block_size, samples, seed=seed, corpus=corpus)
                assert not problems, f"span corruption (block_size {block_size}): " + "; ".join(problems)


def check_synthesizer_hidden(attention_class) -> None:
    """Same output as the reference on random weights over several shapes, in eval mode; causal."""
    ref_class = reference().SynthesizerAttention
    for n_embd, n_head, block_size in SYNTH_CONFIGS:
        config = synthesizer_config(n_embd, n_head, block_size)
        torch.manual_seed(n_embd * 100 + block_size)
        ref = ref_class(config).eval()
        for p in ref.parameters():  # random weights everywhere, not just the initial ones
            torch.nn.init.normal_(p, std=0.5)
        student = attention_class(config).eval()
        student.load_state_dict(ref.state_dict())
        for T in sorted({1, block_size // 2, block_size - 1}):
            x = torch.randn(5, T, n_embd)
            with torch.no_grad():
                got, want = student(x), ref(x)
            assert got.shape == want.shape, f"output shape {tuple(got.shape)} for input {tuple(x.shape)}"
            assert (got - want).norm() < 1e-4 * max(1.0, want.norm()), (
                f"output differs from the expected attention for n_embd={n_embd}, n_head={n_head}, T={T}")
            if T > 1:
                x2 = x.clone()
                x2[:, -1] += 1.0
                with torch.no_grad():
                    assert torch.allclose(student(x2)[:, :-1], got[:, :-1], atol=1e-5), \
                        "changing the last position changed earlier outputs: attention is not causal"
    # the original grader's exact case: n_embd 6, 3 heads, block 8, randn(11, 7, 6), eval mode
    config = synthesizer_config(6, 3, 8)
    torch.manual_seed(0)
    ref = ref_class(config).eval()
    student = attention_class(config).eval()
    student.load_state_dict(ref.state_dict())
    x = torch.randn(11, 7, 6)
    with torch.no_grad():
        assert (student(x) - ref(x)).norm() < 1e-8, "the original grader's case does not match the reference"


def check_finetune_after_pretraining(initialize_vanilla_model, finetune, train) -> None:
    """With a params path: those params are loaded, 10 epochs, the rest as without; train() saves the params."""
    import tempfile

    from course_lib.checks import FINETUNE_EXPECTED, _compare, _toy_world
    from course_lib.checkpoint import load_params, save_params
    from course_lib.model import GPT, GPTConfig

    with tempfile.TemporaryDirectory() as tmp:
        pretrain_dataset, train_path = _toy_world(tmp)
        mconf = GPTConfig(pretrain_dataset.vocab_size, 128, n_layer=1, n_head=2, n_embd=16)
        torch.manual_seed(3)
        pretrained = GPT(mconf)
        params = save_params(pretrained, Path(tmp) / "pre.params")
        torch.manual_seed(4)
        model = initialize_vanilla_model(mconf)
        config, trainer = finetune(str(params), train_path, pretrain_dataset, 128, model)
        _compare(config, dict(FINETUNE_EXPECTED, max_epochs=10), "finetune after pretraining")
        for (name, got), want in zip(model.state_dict().items(), pretrained.state_dict().values()):
            assert torch.equal(got, want), f"finetune did not load the pretrained params into the model ({name} differs)"
        trainer.config.max_epochs, trainer.config.max_steps, trainer.config.progress = 1, 1, False
        trainer.config.num_workers = 0
        out = Path(tmp) / "out.params"
        train(model, str(out), trainer)
        assert out.is_file(), "train() should save the params to writing_params_path"
        load_params(GPT(mconf), out)
