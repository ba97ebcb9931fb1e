"""What every check of course_lib shares: outputs as the wire delivers them, tolerances, and the type a value had.

A probe's output reaches a judge as plain data: tensors, lists, dicts, numbers and strings. Anything else
becomes a string holding its repr on the way (``plain`` here, the grader's wire in ``autograder.inside.wire``),
so a judge that wants to say what it found reads the type back from that string (``type_found``).
"""
from __future__ import annotations

import re

import torch

PLAIN = (bool, int, float, str, type(None))
DELTA = 1e-11  # false-rejection budget per statistical event; <= 90 per check, so <= 1e-9
TOLERANCE = dict(atol=1e-4, rtol=1e-4)  # float32 arithmetic in another order than the judge's
REPR_LIMIT = 200  # characters of an object's repr that travel in its place


def plain(value):
    """An output as the grader's wire delivers it: tuples become lists, tensors are detached CPU copies."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value if isinstance(value, PLAIN) else repr(value)[:REPR_LIMIT]


def sent(inputs):
    """What of a check's inputs its probe gets: every "expected..." entry (the judge's own copy of the answer) left
    out, at any depth, so the student's code never sees it."""
    if isinstance(inputs, dict):
        return {k: sent(v) for k, v in inputs.items() if not str(k).startswith("expected")}
    if isinstance(inputs, list):
        return [sent(v) for v in inputs]
    return inputs


# reprs of non-tensors handed in: numpy arrays and scalars ("array([...])", "np.float32(1.0)"),
# objects with no repr of their own ("<mod.Class object at 0x..>"), constructors ("Fraction(1, 2)")
_NUMPY_ARRAY = re.compile(r"(?:array|masked_array|matrix)\(")
_NUMPY_SCALAR = re.compile(r"np\.(\w+)\(")
_DEFAULT = re.compile(r"<(?:[\w.]+\.)?(\w+) object at 0x[0-9a-fA-F]+>")
_CONSTRUCTOR = re.compile(r"([A-Za-z_][\w.]*)\(")
_SET = re.compile(r"\{.*\}", re.S)
_COMPLEX = re.compile(r"\(?-?[\d.e+-]*[+-]?[\d.e]+j\)?")


def type_found(value) -> str:
    """The type of what a probe sent back, for messages ("found numpy.ndarray"): a string that is an object's
    repr (what the wire makes of a value it cannot carry) names that object's type, not str."""
    if not isinstance(value, str):
        return type(value).__name__
    if _SET.fullmatch(value):
        return "set"
    if _COMPLEX.fullmatch(value):
        return "complex"
    # neither a repr nor one cut at REPR_LIMIT: a plain string
    if not (value.endswith((")", ">")) or len(value) == REPR_LIMIT):
        return "str"
    if _NUMPY_ARRAY.match(value):
        return "numpy.ndarray"
    for pattern, prefix in ((_NUMPY_SCALAR, "numpy."), (_DEFAULT, ""), (_CONSTRUCTOR, "")):
        match = pattern.match(value)
        if match:
            return prefix + match.group(1)
    return "str"


def close(a, b: torch.Tensor, atol: float, rtol: float = 0.0) -> bool:
    """``a`` is a finite tensor of ``b``'s shape, within atol + rtol |b| of it in float64."""
    return isinstance(a, torch.Tensor) and a.shape == b.shape and bool(
        torch.isfinite(a).all()) and torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol)
