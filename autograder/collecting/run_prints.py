"""Run prints that survive small changes: made in a student's collect unit, compared in the driver.

A byte hash misses a classmate's run copied with one value nudged by 1e-6. These prints do not:
  - each params file's weight matrices (the course model's parameters of two or more dimensions, by
    the names the grader's decoding loads), each as a *count sketch*: every value, less the tensor's
    mean, is added with a random sign into one of ``SKETCH_WIDTH`` random buckets (the same for
    every student: drawn from the tensor's name). The cosine of two sketches estimates the cosine of
    the two tensors: near 1 for a copy with small noise, near 0 (within about
    ``1/sqrt(SKETCH_WIDTH)``) for two students who trained from their own seeds. A sketch is linear
    in its tensor, so the sketch of an average of params files is the average of their sketches;
  - each block's *circuits*, sketched the same way: products of its matrices that reordering the
    MLP's hidden units, the attention heads and each head's dimensions (together, as a copier
    reorders them to keep the function) leaves as they are: ``query^T key`` (the attention's
    scores, summed over heads), ``proj value`` (what the heads write), ``mlp.2 mlp.0`` (the MLP's
    units summed) and, for the synthesizer, ``w1_h^T w2`` summed over heads. Each is read through
    the token embedding ``E`` on its residual-stream sides (``E C E^T``, ``E C`` for the
    synthesizer's), so the residual stream's basis cancels too: a copy with every residual axis
    permuted alike (LayerNorm is elementwise, so it computes the same function) has the same
    circuits. The vocabulary's order is the course's, the same for everyone, and ``E`` starts
    from each student's own seed, so two students' own runs still compare near 0
    (benchmarks/FINDINGS.md, "Study-group snippets weighed by pairs, run circuits read through the
    embedding"). A square circuit's diagonal mean is taken out, as a multiple of the identity is
    no one's own;
  - each predictions file's answers, one 8-byte hash per line (read as the grader reads them);
  - the seed each training run's log records.
The params file is the student's: it is loaded with ``torch.load(weights_only=True)`` (tensors,
never code) inside this unit only, and anything unreadable in it just has no sketch. A print is a
few kilobytes: ``MAX_MATRICES`` sketches of the weights and three circuits a block at most.
"""
from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from autograder.inside import bounded_json
from course_lib.data_files import read_predictions

SKETCH_WIDTH = 128  # buckets a sketch: unrelated tensors' cosines spread about 1/sqrt(128)
CHUNK = 1 << 20  # values sketched at a time (bounds scratch memory, whatever the tensor's size)
MAX_LINES = 20_000  # predictions lines hashed (a split has hundreds; longer scores nothing anyway)
MAX_MATRICES = 256  # matrices sketched (handout's model: 27); more is no course model, so no sketch
MAX_ENTRIES = 4096  # a loadable params zip's entries (one per tensor; the course's models: < 100)
MAX_PICKLE = 2 ** 20  # bytes of its pickle (the course's models: a few KB) loaded
LINE_HASH = 8  # bytes of one answer's hash
MAX_WIDTH = 2048  # a circuit's matrices' largest side (handout's model: 1024); wider ones have no circuit
MAX_CIRCUIT_FLOPS = 4 * 10 ** 9  # multiply-adds of a file's circuits, embedding's reading included


@dataclass(frozen=True)
class ParamsSketch:
    """One params file's weight matrices and circuits, sketched."""

    tensors: tuple[tuple[str, bytes], ...]  # "<name> <shape>" -> its count sketch (float32s)
    circuits: tuple[tuple[str, bytes], ...] = ()  # "blocks.<i>.<circuit> <shape>" -> its count sketch

    def matrix(self, circuits: bool = False) -> dict[str, np.ndarray]:
        """Each tensor's (or circuit's) sketch as a unit vector (a constant tensor, all zeros, is left out)."""
        return {key: vector / np.linalg.norm(vector) for key, vector in self.raw(circuits).items()}

    def raw(self, circuits: bool = False) -> dict[str, np.ndarray]:
        """Each tensor's (or circuit's) sketch as it was made (the sketches of an average average), none all zeros."""
        out = {}
        for key, raw in self.circuits if circuits else self.tensors:
            vector = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
            if vector.shape == (SKETCH_WIDTH,) and np.linalg.norm(vector) > 0:
                out[key] = vector
        return out


@lru_cache(maxsize=1)
def weight_pattern() -> re.Pattern:
    """The names of the course model's weight matrices, any number of blocks, either attention:
    built from the course's own model classes, so it follows a layer renamed or added there."""
    from course_lib.gpt.attention import CausalSelfAttention, SynthesizerAttentionBase
    from course_lib.gpt.model import GPT, GPTConfig

    config = GPTConfig(vocab_size=8, block_size=4, n_layer=1, n_head=1, n_embd=4)
    names = {name for attention in (CausalSelfAttention, SynthesizerAttentionBase)
             for name, p in GPT(config, attention_class=attention).named_parameters() if p.dim() >= 2}
    alternatives = sorted(re.escape(n).replace(r"blocks\.0\.", r"blocks\.\d+\.") for n in names)
    return re.compile("^(?:" + "|".join(alternatives) + ")$")


def _sketch(name: str, values) -> bytes:
    """The count sketch of one tensor (flattened, less its mean), float32 bytes."""
    import torch

    flat = values.detach().reshape(-1).to(torch.float64)
    flat = flat - flat.mean()
    generator = torch.Generator().manual_seed(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") >> 1)
    sketch = torch.zeros(SKETCH_WIDTH, dtype=torch.float64)
    for start in range(0, flat.numel(), CHUNK):
        part = flat[start:start + CHUNK]
        buckets = torch.randint(0, SKETCH_WIDTH, (part.numel(),), generator=generator)
        signs = torch.randint(0, 2, (part.numel(),), generator=generator, dtype=torch.float64) * 2 - 1
        sketch.index_add_(0, buckets, part * signs)
    return sketch.to(torch.float32).numpy().tobytes()


def _loadable(path: Path) -> bool:
    """Whether a params file is a zip of torch.save's own shape and size (its central directory
    read, nothing unpickled): a million tiny tensors or a pickle of nested lists would take the
    collect unit's whole time to load."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False  # not torch.save's zip format (which it has written since torch 1.6)
    pickles = [e for e in entries if e.filename.endswith("/data.pkl")]
    return len(entries) <= MAX_ENTRIES and len(pickles) == 1 and pickles[0].file_size <= MAX_PICKLE


def sketch_params(path: Path) -> ParamsSketch | None:
    """The sketch of a params file's weight matrices; None without a state_dict of weights."""
    import torch  # lazily: the command starting the collect units needs none; COLLECT preloads it

    from course_lib.gpt.checkpoint import strip_wrappers

    try:
        if not _loadable(path):
            return None
        state = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            return None
        pattern = weight_pattern()
        weights = [(name, value) for name, value in sorted(strip_wrappers(state).items())
                   if isinstance(value, torch.Tensor) and value.is_floating_point() and pattern.match(name)
                   and value.numel() > 0]
        if len(weights) > MAX_MATRICES:
            return None
        tensors, made = _sketched(weights), _sketched(circuits(dict(weights)))
    except Exception:  # noqa: BLE001 (a student's file: whatever is unreadable has no sketch)
        return None
    return ParamsSketch(tensors, made) if tensors else None


def _sketched(named) -> tuple[tuple[str, bytes], ...]:
    """(key, sketch) of each (name, tensor), keyed by name and shape."""
    return tuple((key, _sketch(key, value)) for key, value in ((_key(n, v), v) for n, v in named))


def _key(name: str, value) -> str:
    return f"{name} {'x'.join(map(str, value.shape))}"


def _square(product):
    """A square circuit less its diagonal's mean (a multiple of the identity is no one's own)."""
    import torch

    return product - torch.eye(len(product), dtype=product.dtype) * product.diagonal().mean()


def _matrices(*tensors) -> bool:
    return all(t is not None and t.dim() == 2 for t in tensors)


def circuits(weights: dict) -> Iterator[tuple[str, object]]:
    """Each block's circuits (``blocks.<i>.qk``, ``.ov``, ``.mlp``, ``.synth``) from its weight matrices, read through
    the token embedding on their residual sides, as float64 tensors made one at a time (a vocab x vocab each: one is
    held at once); without an embedding none, and a block whose shapes do not fit, or a file past ``MAX_WIDTH`` or
    ``MAX_CIRCUIT_FLOPS``, has fewer."""
    import torch

    embedding = weights.get("tok_emb.weight")
    if not _matrices(embedding) or max(embedding.shape) > MAX_WIDTH:
        return
    vocab = embedding.shape[0]
    embedding = embedding.to(torch.float64)
    blocks = sorted({int(name.split(".")[1]) for name in weights if name.startswith("blocks.")})
    plan = []  # (name, the two factors, how to combine them)
    for b in blocks:
        query, key, value, proj, w1, w2, up, down = (weights.get(f"blocks.{b}.{n}") for n in (
            "attn.query.weight", "attn.key.weight", "attn.value.weight", "attn.proj.weight", "attn.w1.weight",
            "attn.w2", "mlp.0.weight", "mlp.2.weight"))
        plan += [(name, left, right, combine) for name, left, right, combine in (
            (f"blocks.{b}.qk", query, key, lambda q, k: _read(embedding, q.T @ k)),
            (f"blocks.{b}.ov", proj, value, lambda p, v: _read(embedding, p @ v)),
            (f"blocks.{b}.mlp", down, up, lambda d, u: _read(embedding, d @ u))) if _matrices(left, right)]
        if _matrices(w1, w2) and w2.shape[0] and w1.shape[0] % w2.shape[0] == 0:
            plan.append((f"blocks.{b}.synth", w1.reshape(-1, w2.shape[0], w1.shape[1]), w2,
                         lambda a, s: embedding @ torch.einsum("hsd,sl->dl", a, s)))
    flops = 0
    for name, left, right, combine in plan:
        if max(*left.shape, *right.shape) > MAX_WIDTH:
            continue
        sides = (left.shape[-1], left.shape[-2], right.shape[-1]) if name.endswith(".qk") else (
            *left.shape, right.shape[-1])
        # the product, then the embedding's reading of it (vocab x residual x (residual + vocab), or x length)
        read = vocab * right.shape[-1] * (left.shape[-1] if name.endswith(".synth") else sides[0] + vocab)
        flops += int(np.prod(sides, dtype=np.float64)) + read
        if flops > MAX_CIRCUIT_FLOPS:
            break
        try:
            found = combine(left.to(torch.float64), right.to(torch.float64))
        except RuntimeError:  # the shapes do not multiply: no course model
            continue
        yield name, found


def _read(embedding, product):
    """A residual-to-residual circuit as the token embedding reads it (``E C E^T``: vocab x vocab), which permuting the
    residual stream's axes leaves as it is, less its diagonal's mean."""
    return _square(embedding @ product @ embedding.T)


def answer_hash(answer: str) -> bytes:
    """One answer's hash (the line stripped), as predictions and gold answers are compared."""
    return hashlib.blake2b(answer.strip().encode("utf-8", "surrogatepass"), digest_size=LINE_HASH).digest()


def hash_answers(answers: list[str]) -> bytes:
    """The answers' hashes, concatenated (the first MAX_LINES)."""
    return b"".join(answer_hash(a) for a in answers[:MAX_LINES])


def hash_predictions(path: Path) -> bytes | None:
    """Each line's hash, the file read as the grader reads it
    (``course_lib.data_files.read_predictions``: a byte-order mark and CRLF are not text; each line
    stripped); None when it is not UTF-8 text. Blank lines after the last answer are trimmed where
    the number of questions is known (``trimmed``)."""
    try:
        return hash_answers(read_predictions(path))
    except (OSError, ValueError):
        return None


def trimmed(hashes: bytes, questions: int) -> bytes:
    """``hashes`` without the blank lines past the ``questions``-th, as
    ``course_lib.data_files.read_handed_in_predictions`` reads them."""
    blank = answer_hash("")
    while len(hashes) > questions * LINE_HASH and hashes[-LINE_HASH:] == blank:
        hashes = hashes[:-LINE_HASH]
    return hashes


def recorded_seed(path: Path) -> int | None:
    """The seed a run's log records: an int from the student's JSON, parsed within budget."""
    try:
        seed = bounded_json.loads(path.read_bytes()).get("seed")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2 ** 63 else None
