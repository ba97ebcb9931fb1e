"""Public checks students run from their notebooks.

Each check raises CheckFailed (an AssertionError a notebook shows without a traceback)
with a hint that says what is wrong without
giving the answer away. The grader's hidden checks are stronger and live
outside this package.
"""
from __future__ import annotations

import dataclasses
import random
import statistics

import torch

from .attention import SynthesizerAttentionBase
from .check_failed import CheckFailed, require
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


def sample_span_corruption(dataset_class, block_size: int = 50, samples: int = 200, seed: int = 0,
                           corpus: str = TOY_CORPUS) -> dict:
    """What ``dataset_class`` produces on ``corpus``: raw token ids, judged by ``span_problems``.

    Sampling and judging are separate halves so that the rules (``span_sample_problems``)
    are written once: the public check here, the hidden test cell and the grader's
    judge (``autograder.judges``, on raw outputs from its own confined job) all use them.
    """
    random.seed(seed)
    torch.manual_seed(seed)
    dataset = dataset_class(corpus, block_size)
    report = {"subclass": isinstance(dataset, CharCorruptionDatasetBase), "samples": [], "error": None}
    documents = corpus.split("\n")
    for n in range(samples):
        idx = n % len(documents)
        try:
            x, y = dataset[idx]
        except NotImplementedError:
            report["error"] = "__getitem__ is not written yet"
            break
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            report["error"] = f"__getitem__ should return two tensors, got {type(x).__name__} and {type(y).__name__}"
            break
        report["samples"].append({"idx": idx, "x": x.tolist(), "y": y.tolist(), "dtypes": [str(x.dtype), str(y.dtype)]})
    return report


def span_problems(report: dict, block_size: int = 50, corpus: str = TOY_CORPUS) -> list[str]:
    """Every SPEC property of span corruption that the sampled examples break (empty: all hold)."""
    if not report.get("subclass"):
        return ["CharCorruptionDataset must subclass CharCorruptionDatasetBase"]
    if report.get("error"):
        return [report["error"]]
    return span_sample_problems(report["samples"], block_size, corpus)


def span_sample_problems(samples: list[dict], block_size: int, corpus: str) -> list[str]:
    """What the samples ({idx, x, y, dtypes}, x and y as lists of ints) break of span corruption (empty: none)."""
    vocab = CharCorruptionDatasetBase(corpus, block_size).vocab
    documents = corpus.split("\n")
    upper = int(block_size * 7 / 8)
    problems: list[str] = []
    kept_fractions, mask_offsets = [], []
    masked_by_kept: dict[int, set[int]] = {}  # kept length -> the masked lengths seen with it

    def fail(message: str) -> None:
        if message not in problems:
            problems.append(message)

    for sample in samples:
        idx, x, y = sample["idx"], sample["x"], sample["y"]
        if sample["dtypes"] != ["torch.int64", "torch.int64"]:
            fail(f"x and y should be LongTensors (torch.long), got {sample['dtypes'][0]} and {sample['dtypes'][1]}")
        if not (_flat_ints(x) and _flat_ints(y)) or len(x) != block_size - 1 or len(y) != block_size - 1:
            return [f"x and y should both have shape ({block_size - 1},), got {_shape(x)} and {_shape(y)}"]
        if any(not 0 <= t < len(vocab) for t in x + y):
            return ["x and y should hold indices of the dataset's vocabulary (stoi)"]
        if x[1:] != y[:-1]:
            fail("y should be x shifted left by one character (x[1:] == y[:-1])")
        text = vocab.decode(torch.tensor(x)) + vocab.decode(torch.tensor(y[-1:]))
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
        if not 4 <= length <= upper:
            fail(f"the truncated document should keep between 4 and int(block_size * 7/8) = {upper} characters, kept {length}")
        # kept length relative to the most that could be kept: ~uniform when truncation is random
        kept_fractions.append(length / max(1, min(upper, len(documents[idx]))))
        mask_offsets.append(len(masked) - length / 4)
        masked_by_kept.setdefault(length, set()).add(len(masked))
    if len(kept_fractions) > 1 and statistics.pstdev(kept_fractions) <= 0.05:
        fail("the truncation length should be random (it barely varies)")
    if len(mask_offsets) > 1:
        mean = statistics.fmean(mask_offsets)
        # SPEC's +-1.5 characters for the true mean, plus 4 standard errors of this sample's mean: graded on
        # fresh random inputs many times over, 3 errors on top of nothing failed the reference now and then
        tolerance = 1.5 + 4 * statistics.pstdev(mask_offsets) / len(mask_offsets) ** 0.5
        if abs(mean) > tolerance:
            fail(f"the masked span should be a quarter of the kept text on average (off by {mean:+.1f} characters)")
        # a length fixed by the kept text (always L // 4) varies with L only: look within each L
        seen_often = [lengths for kept, lengths in masked_by_kept.items() if kept >= 12]
        if statistics.pstdev(mask_offsets) == 0 or (len(seen_often) >= 5 and all(len(v) == 1 for v in seen_often)):
            fail("the masked span's length should be random")
    return problems


def _flat_ints(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, int) for v in values)


def _shape(values) -> tuple:
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return tuple(shape)


def span_corruption_problems(dataset_class, block_size: int = 50, samples: int = 200, seed: int = 0,
                             corpus: str = TOY_CORPUS) -> list[str]:
    """Sample ``dataset_class`` and judge the samples in one go (the public check, in the student's kernel)."""
    return span_problems(sample_span_corruption(dataset_class, block_size, samples, seed, corpus), block_size, corpus)


def check_span_corruption_basic(dataset_class) -> None:
    problems = span_corruption_problems(dataset_class, block_size=50, samples=100)
    require(not problems, "span corruption: " + "; ".join(problems))
    print("span corruption: all public checks passed")


def synthesizer_config(n_embd: int = 6, n_head: int = 3, block_size: int = 8) -> GPTConfig:
    return GPTConfig(vocab_size=4, block_size=block_size, n_layer=1, n_head=n_head, n_embd=n_embd)


def check_synthesizer_shapes(attention_class) -> None:
    """Output shape, causality, and agreement across batch rows."""
    torch.manual_seed(0)
    layer = attention_class(synthesizer_config())
    require(isinstance(layer, SynthesizerAttentionBase),
            "SynthesizerAttention must subclass SynthesizerAttentionBase")
    layer.eval()
    x = torch.randn(11, 7, 6)
    try:
        with torch.no_grad():
            y = layer(x)
    except NotImplementedError:
        raise CheckFailed("SynthesizerAttention.forward is not written yet: write it in notebook 05's "
                             "synthesizer cell (the one with `class SynthesizerAttention`)") from None
    require(isinstance(y, torch.Tensor) and y.shape == x.shape,
            f"forward should return a tensor shaped like its input {tuple(x.shape)}, "
            f"got {getattr(y, 'shape', type(y))}")
    x2 = x.clone()
    x2[:, 4:] = torch.randn(11, 3, 6)
    with torch.no_grad():
        y2 = layer(x2)
    require(torch.allclose(y[:, :4], y2[:, :4], atol=1e-6),
            "changing later positions changed earlier outputs: the causal mask is missing or misplaced")
    with torch.no_grad():
        short = layer(x[:, :3])
    require(torch.allclose(short, y[:, :3], atol=1e-6),
            "a shorter sequence should give the same outputs on its positions")
    print("synthesizer: all public checks passed")


# final_tokens the handout's formula gives for the toy corpus (200 * documents * block_size)
TOY_FINAL_TOKENS = 200 * len(TOY_CORPUS.split("\n")) * 128
FINETUNE_EXPECTED = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_EXPECTED = dict(max_epochs=650, batch_size=128, learning_rate=6e-3, lr_decay=True, warmup_tokens=512 * 20,
                         num_workers=4)


def describe_setup(result, dataset=None) -> dict:
    """What pretrain()/finetune() returned, as plain values: judged by ``setup_problems``."""
    report = {"pair": isinstance(result, tuple) and len(result) == 2, "returned": type(result).__name__}
    if not report["pair"]:
        return report
    config, trainer = result
    report["config"] = ({f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(TrainerConfig)}
                        if isinstance(config, TrainerConfig) else None)
    report["config_type"] = type(config).__name__
    report["trainer_type"] = "Trainer" if isinstance(trainer, Trainer) else type(trainer).__name__
    train_dataset = getattr(trainer, "train_dataset", None)
    report["name_dataset"] = isinstance(train_dataset, NameDataset)
    report["dataset_len"] = len(train_dataset) if hasattr(train_dataset, "__len__") else None
    report["same_dataset"] = dataset is not None and train_dataset is dataset
    return report


def _plain(value):
    return list(value) if isinstance(value, tuple) else value if isinstance(value, (int, float, str, bool, type(None))) \
        else repr(value)


def setup_problems(report: dict, what: str, expected: dict, final_tokens: int, dataset: str,
                   dataset_len: int | None = None) -> list[str]:
    """What is wrong with a described setup; ``dataset`` is "name" (a NameDataset) or "given" (the one passed in)."""
    if not report.get("pair"):
        return [f"{what} should return (TrainerConfig, Trainer), got {report.get('returned')}"]
    config = report.get("config")
    if config is None:
        return [f"{what} should return a TrainerConfig first, got {report.get('config_type')}"]
    problems = []
    wrong = [k for k, v in expected.items() if config.get(k) != v]
    if wrong:
        problems.append(f"{what}: these TrainerConfig fields differ from the handout: {', '.join(wrong)}")
    if config.get("final_tokens") != final_tokens:
        problems.append(f"{what}: final_tokens is not what the handout gives")
    if report.get("trainer_type") != "Trainer":
        problems.append(f"{what} should return a Trainer second")
    if dataset == "name" and not report.get("name_dataset"):
        problems.append(f"{what} should train on a NameDataset of the finetuning file")
    elif dataset == "name" and dataset_len is not None and report.get("dataset_len") != dataset_len:
        problems.append("the NameDataset should read the file named by finetune_corpus_path")
    if dataset == "given" and not report.get("same_dataset"):
        problems.append(f"{what} should train on the pretraining dataset it is given")
    return problems


def _toy_world(tmp_dir) -> tuple[CharCorruptionDatasetBase, str]:
    from pathlib import Path

    path = Path(tmp_dir) / "toy_train.tsv"
    path.write_text("Where was Ada Quill born?\tMarlow\nWhere was Bo Renn born?\tOstheim\n", encoding="utf-8")
    return CharCorruptionDatasetBase(TOY_CORPUS, 128), str(path)


def finetune_setup(initialize_vanilla_model, finetune, reading_params_path: str | None, tmp_dir) -> dict:
    """Describe what finetune returns on a two-question toy world (see ``describe_setup``)."""
    pretrain_dataset, train_path = _toy_world(tmp_dir)
    mconf = GPTConfig(pretrain_dataset.vocab_size, 128, n_layer=1, n_head=2, n_embd=16)
    model = initialize_vanilla_model(mconf)
    if not isinstance(model, GPT):
        return {"pair": False, "returned": f"initialize_vanilla_model returning {type(model).__name__} (expected a GPT)"}
    result = finetune(reading_params_path, train_path, pretrain_dataset, 128, model)
    report = describe_setup(result)
    report["model"] = model
    report["trainer"] = result[1] if report["pair"] else None
    return report


def finetune_problems(report: dict, pretrained: bool) -> list[str]:
    what = "finetune after pretraining" if pretrained else "finetune without pretraining"
    expected = dict(FINETUNE_EXPECTED, max_epochs=10 if pretrained else 75)
    return setup_problems(report, what, expected, TOY_FINAL_TOKENS, "name", dataset_len=2)


def check_finetune_config(initialize_vanilla_model, finetune) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        problems = finetune_problems(finetune_setup(initialize_vanilla_model, finetune, None, tmp), pretrained=False)
    require(not problems, "; ".join(problems))
    print("finetune (without pretraining): all public checks passed")


def pretrain_setup(pretrain) -> dict:
    """Describe what pretrain returns for the toy corpus (see ``describe_setup``)."""
    pretrain_dataset = CharCorruptionDatasetBase(TOY_CORPUS, 128)
    model = GPT(GPTConfig(pretrain_dataset.vocab_size, 128, n_layer=1, n_head=2, n_embd=16))
    return describe_setup(pretrain(pretrain_dataset, 128, model), pretrain_dataset)


def pretrain_problems(report: dict) -> list[str]:
    return setup_problems(report, "pretrain", PRETRAIN_EXPECTED, TOY_FINAL_TOKENS, "given")


def check_pretrain_config(pretrain) -> None:
    problems = pretrain_problems(pretrain_setup(pretrain))
    require(not problems, "; ".join(problems))
    print("pretrain: all public checks passed")
