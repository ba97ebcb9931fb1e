"""Whether an error is a process running out of memory, in the sandbox's or the grader's own words.

Past the address-space limit Python raises MemoryError, but torch's CPU allocator raises a plain
RuntimeError of its own words; both are the same "ran out of memory" to a student. Only torch's own
RuntimeError is read (its exact type and its first argument, a str), so no ``__str__`` of a
student's class runs here.
"""
from __future__ import annotations

ALLOCATOR_REFUSED = "can't allocate memory"  # in torch's message when its CPU allocator is refused memory


def ran_out_of_memory(err: BaseException) -> bool:
    """Is ``err`` a MemoryError, or torch's allocator refused memory?"""
    if isinstance(err, MemoryError):
        return True
    first = err.args[0] if type(err) is RuntimeError and len(err.args) == 1 else None
    return isinstance(first, str) and ALLOCATOR_REFUSED in first
