"""The decode: questions answered by trusted model code with submitted params; no student code is loaded.

The decode job runs it on its own (the audit's retrained params); the score of record runs it first
in the probe job, in a child forked before any student code (``decode_first``).
"""
from __future__ import annotations


def decode(request: dict) -> dict:
    """Predictions of each run part's params with trusted model code (no student code is loaded)."""
    import torch

    from course_lib.gpt.checkpoint import fit_state_dict
    from course_lib.gpt.datasets import CharCorruptionDatasetBase
    from course_lib.gpt.model import GPT, GPTConfig
    from course_lib.loader.load import load_notebooks

    from .synthesizer_cache import with_cache

    torch.manual_seed(0)
    with open(request["wiki"], encoding="utf-8") as f:
        vocab = CharCorruptionDatasetBase(f.read(), request["block_size"]).vocab
    classes = {"vanilla": None}
    if request.get("synthesizer_reference"):
        reference = load_notebooks([request["synthesizer_reference"]], module_name="reference_synthesizer")
        classes["synthesizer"] = with_cache(reference.SynthesizerAttention)
    out = {}
    for part in request["parts"]:
        config = GPTConfig(len(vocab), request["block_size"], **request["model"])
        kwargs = {} if classes[part["attention"]] is None else {"attention_class": classes[part["attention"]]}
        model = GPT(config, **kwargs)
        try:
            state, misfit = fit_state_dict(model, torch.load(part["params"], map_location="cpu", weights_only=True))
        except Exception as err:  # unreadable, or unsafe (a pickle that runs code): that part only
            out[part["name"]] = {"error": {"kind": "unreadable", "type": type(err).__name__}}
            continue
        if misfit is not None:  # numbers and the trusted model's own names only
            out[part["name"]] = {"error": {"kind": misfit.kind, "name": misfit.name, "got": list(misfit.got),
                                           "want": list(misfit.want)}}
            continue
        model.load_state_dict(state, strict=True)
        model.eval()
        out[part["name"]] = _answers(model, vocab, part["questions"], request.get("batch_size", 256))
    return out


def _answers(model, vocab, questions: dict[str, list[str]], batch_size: int) -> dict[str, list[str]]:
    """Each split's answers from one decode of all the splits' questions: questions of one length are decoded
    together whatever their split (each row sees only its own positions), so the model runs once a length, not once
    a length and a split."""
    from course_lib.gpt.evaluation import predict_places

    every = [q for split in questions.values() for q in split]
    answers = iter(predict_places(model, vocab, every, batch_size))
    return {split: [next(answers) for _ in split_questions] for split, split_questions in questions.items()}
