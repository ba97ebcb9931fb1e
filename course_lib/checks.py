"""Public checks students run from their notebooks.

Each check raises AssertionError with a hint that says what is wrong without
giving the answer away. The grader's hidden checks are stronger and live
outside this package.
"""
from __future__ import annotations

import random
import statistics

import torch

from .attention import SynthesizerAttentionBase
from .datasets import CharCorruptionDatasetBase, NameDataset
from .model import GPT, GPTConfig
from .trainer import Trainer, TrainerConfig
from .vocab import MASK_CHAR, PAD_CHAR

TOY_CORPUS = "\n".join(
    [
        "Ada Quill. Ada Quill was born in Marlow and later taught mathematics in Tessary for many years .",
        "Bo Renn. Born in Ostheim, Renn trained as a carpenter before moving to Calder to build bridges .",
        "Cyd Vane. Cyd Vane (born 1901 in Pellow - died 1970 in Ardent) was a poet and a printer .",
        "Dara Moss. A native of Lunet, Dara Moss studied botany in Fennick and wrote about mosses .",
        "Eli Stroud. Eli Stroud is an engineer who was born in Carrow and now lives in Wexley .",
        "Fay Orr. Where was Fay Orr born? In Tillby, though she grew up by the sea near Harlow .",
    ]
)


def _toy_dataset(dataset_class, block_size: int, corpus: str = TOY_CORPUS):
    dataset = dataset_class(corpus, block_size)
    assert isinstance(dataset, CharCorruptionDatasetBase), "CharCorruptionDataset must subclass CharCorruptionDatasetBase"
    return dataset


def span_corruption_problems(dataset_class, block_size: int = 50, samples: int = 200, seed: int = 0,
                             corpus: str = TOY_CORPUS) -> list[str]:
    """Every SPEC property of span corruption that samples of ``dataset_class`` break (empty: all hold)."""
    random.seed(seed)
    torch.manual_seed(seed)
    dataset = _toy_dataset(dataset_class, block_size, corpus)
    documents = corpus.split("\n")
    upper = int(block_size * 7 / 8)
    problems: list[str] = []
    kept_fractions, mask_offsets, lengths = [], [], []

    def fail(message: str) -> None:
        if message not in problems:
            problems.append(message)

    for n in range(samples):
        idx = n % len(documents)
        try:
            x, y = dataset[idx]
        except NotImplementedError:
            return ["__getitem__ is not written yet"]
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            return [f"__getitem__ should return two tensors, got {type(x).__name__} and {type(y).__name__}"]
        if x.dtype != torch.long or y.dtype != torch.long:
            fail(f"x and y should be LongTensors (torch.long), got {x.dtype} and {y.dtype}")
        if x.shape != (block_size - 1,) or y.shape != (block_size - 1,):
            return [f"x and y should both have shape ({block_size - 1},), got {tuple(x.shape)} and {tuple(y.shape)}"]
        if not torch.equal(x[1:], y[:-1]):
            fail("y should be x shifted left by one character (x[1:] == y[:-1])")
        text = dataset.vocab.decode(x) + dataset.vocab.decode(y[-1:])
        body = text.rstrip(PAD_CHAR)
        if PAD_CHAR in body:
            fail("padding should appear only at the end of an example")
        parts = body.split(MASK_CHAR)
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != ""):
            fail(f"an example should look like prefix{MASK_CHAR}suffix{MASK_CHAR}masked{MASK_CHAR} then padding")
            continue
        prefix, suffix, masked = parts[:3]
        kept = prefix + masked + suffix
        if not documents[idx].startswith(kept):
            fail("prefix + masked + suffix should be the start of the document, in order")
        length = len(kept)
        lengths.append(length)
        if not 4 <= length <= upper:
            fail(f"the truncated document should keep between 4 and int(block_size * 7/8) = {upper} characters, kept {length}")
        # kept length relative to the most that could be kept: ~uniform when truncation is random
        kept_fractions.append(length / max(1, min(upper, len(documents[idx]))))
        mask_offsets.append(len(masked) - length / 4)
    if len(kept_fractions) > 1 and statistics.pstdev(kept_fractions) <= 0.05:
        fail("the truncation length should be random (it barely varies)")
    if len(mask_offsets) > 1:
        mean = statistics.fmean(mask_offsets)
        # SPEC's +-1.5 characters, widened to 3 standard errors where long blocks make the mean noisier
        tolerance = max(1.5, 3 * statistics.pstdev(mask_offsets) / len(mask_offsets) ** 0.5)
        if abs(mean) > tolerance:
            fail(f"the masked span should be a quarter of the kept text on average (off by {mean:+.1f} characters)")
        if statistics.pstdev(mask_offsets) == 0:
            fail("the masked span's length should be random")
    return problems


def check_span_corruption_basic(dataset_class) -> None:
    problems = span_corruption_problems(dataset_class, block_size=50, samples=100)
    assert not problems, "span corruption: " + "; ".join(problems)
    print("span corruption: all public checks passed")


def synthesizer_config(n_embd: int = 6, n_head: int = 3, block_size: int = 8) -> GPTConfig:
    return GPTConfig(vocab_size=4, block_size=block_size, n_layer=1, n_head=n_head, n_embd=n_embd)


def check_synthesizer_shapes(attention_class) -> None:
    """Output shape, causality, and agreement across batch rows."""
    torch.manual_seed(0)
    layer = attention_class(synthesizer_config())
    assert isinstance(layer, SynthesizerAttentionBase), "SynthesizerAttention must subclass SynthesizerAttentionBase"
    layer.eval()
    x = torch.randn(11, 7, 6)
    with torch.no_grad():
        y = layer(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape, \
        f"forward should return a tensor shaped like its input {tuple(x.shape)}, got {getattr(y, 'shape', type(y))}"
    x2 = x.clone()
    x2[:, 4:] = torch.randn(11, 3, 6)
    with torch.no_grad():
        y2 = layer(x2)
    assert torch.allclose(y[:, :4], y2[:, :4], atol=1e-6), \
        "changing later positions changed earlier outputs: the causal mask is missing or misplaced"
    with torch.no_grad():
        short = layer(x[:, :3])
    assert torch.allclose(short, y[:, :3], atol=1e-6), "a shorter sequence should give the same outputs on its positions"
    print("synthesizer: all public checks passed")


FINETUNE_EXPECTED = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_EXPECTED = dict(max_epochs=650, batch_size=128, learning_rate=6e-3, lr_decay=True, warmup_tokens=512 * 20,
                         num_workers=4)


def _compare(config, expected: dict, what: str) -> None:
    assert isinstance(config, TrainerConfig), f"{what} should return a TrainerConfig first, got {type(config).__name__}"
    wrong = [k for k, v in expected.items() if getattr(config, k) != v]
    assert not wrong, f"{what}: these TrainerConfig fields differ from the handout: {', '.join(wrong)}"


def _toy_world(tmp_dir) -> tuple[CharCorruptionDatasetBase, str]:
    from pathlib import Path

    path = Path(tmp_dir) / "toy_train.tsv"
    path.write_text("Where was Ada Quill born?\tMarlow\nWhere was Bo Renn born?\tOstheim\n", encoding="utf-8")
    return CharCorruptionDatasetBase(TOY_CORPUS, 128), str(path)


def check_finetune_config(initialize_vanilla_model, finetune) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pretrain_dataset, train_path = _toy_world(tmp)
        mconf = GPTConfig(pretrain_dataset.vocab_size, 128, n_layer=1, n_head=2, n_embd=16)
        model = initialize_vanilla_model(mconf)
        assert isinstance(model, GPT), f"initialize_vanilla_model should return a GPT, got {type(model).__name__}"
        result = finetune(None, train_path, pretrain_dataset, 128, model)
        assert isinstance(result, tuple) and len(result) == 2, "finetune should return (TrainerConfig, Trainer)"
        config, trainer = result
        _compare(config, dict(FINETUNE_EXPECTED, max_epochs=75), "finetune without pretraining")
        assert config.final_tokens == 200 * len(pretrain_dataset) * 128, "finetune: final_tokens is not what the handout gives"
        assert isinstance(trainer, Trainer), "finetune should return a Trainer second"
        assert isinstance(trainer.train_dataset, NameDataset), "finetune should train on a NameDataset of the finetuning file"
        assert len(trainer.train_dataset) == 2, "the NameDataset should read the file named by finetune_corpus_path"
    print("finetune (without pretraining): all public checks passed")


def check_pretrain_config(pretrain) -> None:
    pretrain_dataset = CharCorruptionDatasetBase(TOY_CORPUS, 128)
    model = GPT(GPTConfig(pretrain_dataset.vocab_size, 128, n_layer=1, n_head=2, n_embd=16))
    result = pretrain(pretrain_dataset, 128, model)
    assert isinstance(result, tuple) and len(result) == 2, "pretrain should return (TrainerConfig, Trainer)"
    config, trainer = result
    _compare(config, PRETRAIN_EXPECTED, "pretrain")
    assert config.final_tokens == 200 * len(pretrain_dataset) * 128, "pretrain: final_tokens is not what the handout gives"
    assert isinstance(trainer, Trainer), "pretrain should return a Trainer second"
    assert trainer.train_dataset is pretrain_dataset, "pretrain should train on the pretraining dataset it is given"
    print("pretrain: all public checks passed")
