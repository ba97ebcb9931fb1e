"""The sandbox's answers on the wire: JSON with tensors as raw bytes, never a pickle.

``encode`` runs in the sandbox; ``decode`` runs in the grader on bytes the
submission may have forged, so it accepts only plain JSON values and tensors
of a few dtypes whose byte count matches their shape.
"""
from __future__ import annotations

import base64
import json
import math

import torch

from . import bounded_json

TENSOR_KEY = "__tensor__"
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool,
          "uint8": torch.uint8}
# dtypes that travel narrow and reach the grader widened: uint8 (the span probes' character ids, a quarter of the
# bytes of int32) arrives as float64, as the sandbox once widened every uint8 before sending it, so a judge sees
# what it always saw
WIDENED = {torch.uint8: torch.float64}
MAX_ELEMENTS = 50_000_000  # one tensor; the answer's size is capped before it is parsed anyway
# values in one answer (a tensor is one string; a right answer has thousands): bounds parse memory
MAX_VALUES = bounded_json.MAX_VALUES


class WireError(ValueError):
    """An answer that is not a well-formed encoding."""


def encode(value) -> object:
    """Tensors to {"__tensor__": [dtype, shape, base64]}, tuples to lists, recursively."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        name = str(tensor.dtype).removeprefix("torch.")
        if name not in DTYPES:
            tensor, name = tensor.double(), "float64"
        # (flattened first: a 0-d tensor cannot be viewed as bytes, and its answer once failed to encode)
        data = tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        return {TENSOR_KEY: [name, list(tensor.shape), base64.b64encode(data).decode("ascii")]}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)[:200]  # an object the probe could not turn into plain data


def dumps(value) -> bytes:
    """``value`` encoded (``encode``) as UTF-8 JSON bytes."""
    return json.dumps(encode(value)).encode("utf-8")


def _tensor(spec) -> torch.Tensor:
    if not (isinstance(spec, list) and len(spec) == 3):
        raise WireError("a tensor must be [dtype, shape, data]")
    name, shape, data = spec
    if name not in DTYPES or not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise WireError("a tensor has an unknown dtype or a bad shape")
    count = math.prod(shape)
    if count > MAX_ELEMENTS or not isinstance(data, str):
        raise WireError("a tensor is too large")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    dtype = DTYPES[name]
    if len(raw) != count * torch.empty((), dtype=dtype).element_size():
        raise WireError("a tensor's data does not match its shape")
    if count == 0:
        return torch.empty(shape, dtype=WIDENED.get(dtype, dtype))
    tensor = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape)
    return tensor.to(WIDENED[dtype]) if dtype in WIDENED else tensor.clone()


def decode(value) -> object:
    """``encode``'s output back to values, each tensor checked; WireError if malformed."""
    if isinstance(value, dict):
        if set(value) == {TENSOR_KEY}:
            return _tensor(value[TENSOR_KEY])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def loads(data: bytes) -> object:
    """Parse an answer within ``bounded_json``'s value budget; WireError for anything malformed."""
    try:
        return decode(bounded_json.loads(data, MAX_VALUES))
    except WireError:
        raise
    except bounded_json.JsonRefused as err:
        raise WireError(f"not a well-formed answer ({err})") from None
    except (ValueError, TypeError, RecursionError, base64.binascii.Error) as err:
        raise WireError(f"not a well-formed answer ({type(err).__name__})") from None
