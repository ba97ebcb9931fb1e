"""nbconvert's accessibility pass on a rendered page, without building the page's tree.

``HTMLExporter.from_notebook_node`` ends by parsing the whole page with BeautifulSoup to give every
``<img>`` without one an ``alt`` text and every cell's input and output ``tabindex="0"``, then writes the
tree out again. On a feedback page (about 150 KB, most of it the template's CSS) that was about a quarter
of the generate_feedback step's CPU (py-spy, issue 50 item 8). ``accessible`` makes the same changes
from the start tags Python's ``html.parser`` finds (the tokenizer BeautifulSoup's ``html.parser``
builder uses, so a tag inside a script, a style or a comment is left alone as it is there), inserting the
attributes into the page's own text: the page keeps the template's bytes everywhere else.

The selectors are nbconvert's: ``img:not([alt])``; ``.jp-Notebook div.jp-Cell-inputWrapper`` and
``.jp-Notebook div.jp-OutputArea-output``, where what is inside what is BeautifulSoup's nesting (a void
element closes as it opens, an end tag closes the latest open element of its name and those after it).
"""
from __future__ import annotations

import contextlib
import html
import re
from html.parser import HTMLParser
from typing import Callable, Iterator

from bs4.builder import HTMLTreeBuilder

MISSING_ALT = "No description has been provided for this image"  # nbconvert's own words
FOCUSABLE = ("jp-Cell-inputWrapper", "jp-OutputArea-output")  # div classes nbconvert makes focusable
VOID = frozenset(HTMLTreeBuilder.DEFAULT_EMPTY_ELEMENT_TAGS)  # the elements BeautifulSoup never leaves open
TAG_NAME = re.compile(r"<([a-zA-Z][^\t\n\r\f />\x00]*)")  # html.parser's own pattern for a start tag's name


def _classes(attrs: list[tuple[str, str | None]]) -> list[str]:
    """The class names of a start tag (the last class attribute, as BeautifulSoup keeps it)."""
    values = [value or "" for name, value in attrs if name == "class"]
    return values[-1].split() if values else []


class _StartTags(HTMLParser):
    """Where each start tag to change begins (an offset into the page) and the attribute to give it."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=False)  # as BeautifulSoup's builder: character references untouched
        self.page = page
        self.line_starts: list[int] | None = None  # each line's first offset, found at the first change
        self.open: list[tuple[str, bool]] = []  # the open elements, outermost first: (name, of class jp-Notebook)
        self.changes: list[tuple[int, str, str]] = []  # (offset of the tag's '<', the tag's text, its new text)
        self.missing_alt = 0  # images given nbconvert's alt text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._change(tag, attrs)
        if tag not in VOID:  # BeautifulSoup closes a void element as it opens it
            self.open.append((tag, "jp-Notebook" in _classes(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._change(tag, attrs)  # <x/>: opened and closed at once, as BeautifulSoup does

    def handle_endtag(self, tag: str) -> None:
        """Close the latest open ``tag`` and those opened after it (BeautifulSoup's ``_popToTag``); none: nothing."""
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth][0] == tag:
                del self.open[depth:]
                return

    def _change(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img" and "alt" not in {name for name, _ in attrs}:
            self.missing_alt += 1
            self._set(attrs, "alt", MISSING_ALT)
        elif (tag == "div" and any(c in _classes(attrs) for c in FOCUSABLE)
              and any(notebook for _, notebook in self.open)):  # inside a .jp-Notebook element
            self._set(attrs, "tabindex", "0")

    def _set(self, attrs: list[tuple[str, str | None]], name: str, value: str) -> None:
        line, column = self.getpos()
        text = self.get_starttag_text() or ""
        if self.line_starts is None:  # getpos counts lines from 1, and only "\n" ends one
            self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.page)]
        offset = self.line_starts[line - 1] + column
        tag = TAG_NAME.match(text).group(1)  # as the tokenizer read it (its case kept)
        if name not in {n for n, _ in attrs}:  # the attribute put first, the tag's own text kept after the name
            self.changes.append((offset, text, f'<{tag} {name}="{value}"{text[1 + len(tag):]}'))
            return
        # the attribute is there with another value: the tag written again from its attributes
        rest = "".join(f' {n}="{html.escape(v, quote=True)}"' if v is not None else f" {n}"
                       for n, v in attrs if n != name)
        closing = "/>" if text.rstrip().endswith("/>") else ">"
        self.changes.append((offset, text, f'<{tag} {name}="{value}"{rest}{closing}'))


def accessible(page: str) -> tuple[str, int]:
    """``page`` with nbconvert's alt texts and tabindex set; how many images had no alt text."""
    tags = _StartTags(page)
    tags.feed(page)
    tags.close()
    pieces, at = [], 0
    for offset, old, new in tags.changes:
        if page.startswith(old, offset):  # the tokenizer's offset and text agree (always, for a parsed tag)
            pieces += [page[at:offset], new]
            at = offset + len(old)
    return "".join(pieces) + page[at:], tags.missing_alt


class _PageSoup:
    """What nbconvert's ``from_notebook_node`` asks of BeautifulSoup, with the changes already made: nothing to
    select, the changed page as its text."""

    def __init__(self, page: str, warn: Callable[[int], None]) -> None:
        self.page, missing = accessible(page)
        if missing:
            warn(missing)

    def select(self, selector: str) -> list:
        return []

    def __str__(self) -> str:
        return self.page


@contextlib.contextmanager
def without_soup(log) -> Iterator[None]:
    """Within: nbconvert's HTMLExporter makes its accessibility changes with ``accessible``. For a page's unit only
    (a process making one page): the name is nbconvert's module's, seen by every thread."""
    import nbconvert.exporters.html as nbconvert_html

    def warn(missing: int) -> None:
        log.warning("Alternative text is missing on %s image(s).", missing)

    kept = nbconvert_html.BeautifulSoup
    nbconvert_html.BeautifulSoup = lambda page, features=None: _PageSoup(page, warn)
    try:
        yield
    finally:
        nbconvert_html.BeautifulSoup = kept
