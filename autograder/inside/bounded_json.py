"""JSON someone else wrote, parsed within a budget: its values are counted before any is built.

Python's ``json`` builds every value of a document at once, and the smallest values cost the
most: 48 MB of empty objects became 2.6 GB of dicts (about 54 bytes per byte). So a document's
values (objects, arrays, strings, numbers, literals) are counted first, and only a document
within the budget is parsed: a bound from the bytes every value but the first follows (``within``)
when that suffices, else one regular expression run over the bytes that stops at the budget. Any
value costs at most about 100 bytes once built, so a parse takes at most the document (and its
text) plus ``max_values`` times that: a notebook of the course's 20 MB cap within 1,000,000
values stays under about 150 MB whatever it holds (nbformat's validation on top of it: under
1 GB, measured in benchmarks/unit_memory.py). Nesting deeper than
Python's recursion limit is refused as too deep (``json``'s own check). Standard library only (the
wire's ``loads`` uses it, and ``inside`` is what the sandbox can import).
"""
from __future__ import annotations

import json
import re

# values in one document: the course's notebooks hold 300 to 1,700 (one per 20 bytes); a run's printed lines (a value
# each, nbformat's list of lines) under nbgrader's 16 MB output cap stay within it
MAX_VALUES = 1_000_000
# one JSON value's start: a string (whole, escapes included; an unclosed one runs to the end, so no position is scanned
# twice and the count is linear in the bytes), an object or array's opening, or a bare number or literal
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
    """Does ``data`` hold at most ``limit`` values? Every value but the first follows a ``[``, ``{``, ``,`` or ``:``
    (json's own parser builds none that does not), so when those bytes are few, anywhere, the answer is yes without
    the regular expression's pass (a job's answer of tensors, mostly base64, has a few hundred: its count took 60 to
    90 ms a span check); the expression counts the rest."""
    if 1 + sum(data.count(c) for c in (b",", b":", b"[", b"{")) <= limit:
        return True
    return count_values(data, limit) is not None


def loads(data: bytes, max_values: int = MAX_VALUES) -> object:
    """``data`` parsed as UTF-8 JSON when it holds at most ``max_values`` values; JsonRefused otherwise."""
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
