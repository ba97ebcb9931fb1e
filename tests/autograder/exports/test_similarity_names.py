"""The code a graded cell's answer runs: the global names each statement defines, changes and reads, followed from the
answers' names to the helpers they call, in any cell."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.exports.similarity_names import Names, defined_by, followed, names_of


def test_a_statement_reads_only_its_global_names():
    """Does a function read the globals it uses, but neither its parameters, its locals nor a comprehension's
    variable, and does a class read its base and what its body calls?"""
    found = names_of("def f(a, b=LIMIT):\n    c = helper(a) + [t for t in b if t > bound]\n    return c")
    assert found == Names(frozenset({"f"}), frozenset({"LIMIT", "helper", "bound"}))
    assert names_of("class D(Base):\n    x = make(3)\n    def g(self):\n        return self.x").uses == {
        "Base", "make"}


def test_setting_an_attribute_or_item_changes_the_name():
    """Do ``D.f = g``, ``D.table[k] += 1`` and ``setattr(D, 'f', g)`` count as changing D (and read g)?"""
    for statement in ("D.f = g", "D.table[k] += 1", "setattr(D, 'f', g)"):
        assert "D" in names_of(statement).defines, statement
    assert "g" in names_of("D.f = g").uses


def test_what_is_not_python_has_no_names():
    """Is text that does not parse (a cell kept as text) a statement with no names?"""
    assert names_of("%%%% not python (") == Names()


def test_an_answer_is_followed_to_its_helpers_and_later_changes():
    """Does a graded cell's code take in, wherever they stand, the statements defining or changing its answers and,
    transitively, the helpers those call, but not code that only uses the answers?"""
    statements = ["class Data(Base):\n    pass",  # 0: the graded cell
                  "def _get(self, i):\n    return _cut(self.data[i])",  # 1: a helper, later
                  "Data.__getitem__ = _get",  # 2: set on the answer
                  "def _cut(text):\n    return text[:SIZE]",  # 3: what the helper calls
                  "SIZE = 8",  # 4
                  "d = Data()\nprint(d[0])",  # 5: scratch that uses the answer
                  "def unrelated():\n    return 1"]  # 6
    names = [names_of(s) for s in statements]
    assert followed(names, {0}, frozenset({"Data"})) == [0, 1, 2, 3, 4]


def test_the_answers_of_a_release_cell_are_the_names_it_defines():
    """Are a release cell's answers the names its statements bind (placeholders and functions alike)?"""
    assert defined_by(["q_1 = q_2 = None", "def permuted_output(P, X):\n    raise NotImplementedError()"]) == {
        "q_1", "q_2", "permuted_output"}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_has_names_or_none(text):
    """Does any text (a student's, through the unwrapped statements) give Names without raising?"""
    assert isinstance(names_of(text), Names)
