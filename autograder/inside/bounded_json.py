"""JSON someone else wrote, parsed within a budget: its values are counted before any is built.

Python's ``json`` builds every value of a document at once, and the smallest values cost the most
(empty objects: about 54 bytes of dicts per byte). So a document's values (objects, arrays,
strings, numbers, literals) are counted first, and only a document within the budget is parsed: a
bound from the bytes every value but the first follows (``within``) when that suffices, else one
regular expression run over the bytes that stops at the budget. A value costs at most about 100
bytes once built, so a parse takes at most the document (and its text) plus ``max_values`` times
that: a notebook at the course's 20 MB cap within 1,000,000 values stays under about 150 MB
whatever it holds (benchmarks/unit_memory.py measures each step's worst case). Nesting deeper than
Python's recursion limit is refused as too deep (``json``'s own check). Standard library only: the
wire's ``loads`` uses it, and ``inside`` is what the sandbox can import.
"""
from __future__ import annotations

import json
import re

# values in one document: the course's notebooks hold 300 to 1,700 (one per 20 bytes), and a run's
# printed lines (a value each) under nbgrader's 16 MB output cap stay within it
MAX_VALUES = 1_000_000
# a JSON value's start: a whole string (an unclosed one runs to the end, so the scan stays linear),
# an object's or array's opening, or a bare number or literal
_VALUE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[{]|[^\s\[\]{},:"]+')


class JsonRefused(ValueError):
    """A document not parsed, with the reason in the grader's words."""


def count_values(data: bytes, limit: int) -> int | None:
    """How many values ``data`` holds (object keys count as values), or None past ``limit``."""
    count = 0
    for count, _ in enumerate(_VALUE.finditer(data), start=1):
        if count > limit:
            return None
    return count


def within(data: bytes, limit: int) -> bool:
    """Does ``data`` hold at most ``limit`` values? Every value but the first follows a ``[``,
    ``{``, ``,`` or ``:`` (json's parser builds none that does not), so when those bytes are few,
    anywhere, the answer is yes without the regular expression's pass (a job's answer of tensors,
    mostly base64, has a few hundred); the expression counts the rest."""
    if 1 + sum(data.count(c) for c in (b",", b":", b"[", b"{")) <= limit:
        return True
    return count_values(data, limit) is not None


def loads(data: bytes, max_values: int = MAX_VALUES) -> object:
    """``data`` parsed as UTF-8 JSON if it holds at most ``max_values`` values; else JsonRefused."""
    if not within(data, max_values):
        raise JsonRefused(f"holds more than {max_values:,} JSON values")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise JsonRefused("not UTF-8 text") from None
    except RecursionError:
        raise JsonRefused("JSON nested too deeply") from None
    except json.JSONDecodeError as err:
        raise JsonRefused(f"not valid JSON (line {err.lineno}, column {err.colno})") from None
