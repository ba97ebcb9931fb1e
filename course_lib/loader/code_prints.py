"""Prints of notebook code: the same for the same code in any kernel, another once the code changes.

A run's log records the print of each graded part it called (``course_lib.runs.record``), so that a later check
can tell a run made by older code. A print is made of the compiled code, not its text: a comment or a blank line
changes nothing; a statement, a constant or a default argument does. What a part calls, builds or subclasses among
the notebooks' own definitions (a helper function, the SynthesizerAttention a model is built with, a constant)
is part of its print; library code (torch, course_lib) is not.
"""
from __future__ import annotations

import hashlib
import re
import sys
import types

SIMPLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset)  # values a print holds by their repr


def is_notebook_code(obj) -> bool:
    """Defined in a notebook: a kernel's ``__main__`` or a module the loader made, not a library."""
    name = getattr(obj, "__module__", None) or ""
    if name in sys.builtin_module_names:
        return False
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    return origin is None or str(origin).endswith(".ipynb")


def _shown(value) -> bytes:
    """A value's repr without memory addresses (which differ between kernels), bounded."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))[:500].encode("utf-8", "backslashreplace")


def _names(code: types.CodeType) -> set[str]:
    """Every global or attribute name the code and the functions nested in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _code(code: types.CodeType, out: list[bytes]) -> None:
    """The compiled code without its file name and line numbers."""
    out += [code.co_code, " ".join(code.co_names).encode(), " ".join(code.co_varnames).encode()]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code(const, out)
        else:
            out.append(_shown(const))


def _collect(obj, seen: set[int], out: list[bytes]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        for accessor in (obj.fget, obj.fset, obj.fdel):
            if accessor is not None:
                _collect(accessor, seen, out)
        return
    if isinstance(obj, types.FunctionType):
        out += [obj.__qualname__.encode(), _shown(obj.__defaults__), _shown(obj.__kwdefaults__)]
        _code(obj.__code__, out)
        for name in sorted(_names(obj.__code__)):
            value = obj.__globals__.get(name)
            if isinstance(value, (types.FunctionType, type)) and is_notebook_code(value):
                _collect(value, seen, out)
            elif isinstance(value, SIMPLE) and name in obj.__globals__ and not name.startswith("_"):
                out.append(name.encode() + b"=" + _shown(value))
    elif isinstance(obj, type):
        out.append(f"class {obj.__qualname__}({', '.join(b.__qualname__ for b in obj.__bases__)})".encode())
        for name, member in sorted(vars(obj).items()):
            if isinstance(member, (types.FunctionType, staticmethod, classmethod, property)):
                _collect(member, seen, out)
            elif isinstance(member, SIMPLE) and not (name.startswith("__") and name.endswith("__")):
                out.append(name.encode() + b"=" + _shown(member))
        for base in obj.__bases__:
            if is_notebook_code(base):
                _collect(base, seen, out)
    else:  # a callable object of another kind: its type's code
        _collect(type(obj), seen, out)


def code_print(obj) -> str:
    """The print of a function or class and of the notebook code it uses (16 hex digits)."""
    out: list[bytes] = []
    _collect(obj, set(), out)
    digest = hashlib.sha256()
    for chunk in out:
        digest.update(len(chunk).to_bytes(8, "big") + chunk)
    return digest.hexdigest()[:16]
