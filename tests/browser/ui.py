"""What a student does in JupyterLab, as Playwright steps: open a notebook, run cells, read outputs."""
from __future__ import annotations

import re
import time

# what shows instead of controls when a widget fails: its repr (no widget manager), tqdm's text bar, an error box
WIDGET_AS_TEXT = ("Error displaying widget", "interactive(children", "FloatSlider(", "HBox(children", "FloatProgress(",
                  "%|")
# a cell still queued or running shows [*] in its prompt
_BUSY = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputArea-prompt')]
                  .every(p => !p.textContent.includes('*'))"""


def panel(page):
    """The notebook in the active tab."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")


def open_notebook(page, lab: dict, name: str) -> None:
    """Double-click ``name`` in the file browser; wait for its cells and for its kernel to be up and idle."""
    page.locator(".jp-DirListing-item", has_text=name).dblclick()
    page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current", has_text=name).wait_for()
    panel(page).locator(".jp-Cell").first.wait_for()
    # Shift+Enter before the kernel is connected is dropped: wait for the server's session, then the status bar
    deadline = time.monotonic() + 60
    while not _kernel_idle(page, lab, name):
        assert time.monotonic() < deadline, f"no idle kernel for {name} after 60 s"
        page.wait_for_timeout(250)
    page.locator(".jp-StatusBar-Widget", has_text="Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)


def _kernel_idle(page, lab: dict, name: str) -> bool:
    sessions = page.request.get(f"{lab['base']}/api/sessions?token={lab['token']}").json()
    return any(s["path"].endswith(name) and s["kernel"]["execution_state"] == "idle" for s in sessions)


def cell(page, index: int):
    return panel(page).locator(".jp-Notebook .jp-Cell").nth(index)


def output(page, index: int):
    return cell(page, index).locator(".jp-Cell-outputArea")


def run_cells(page, first: int, count: int, timeout: float = 60_000) -> None:
    """Select cell ``first`` and press Shift+Enter ``count`` times (each runs a cell and moves on), then wait."""
    cell(page, first).locator(".jp-InputPrompt").click()  # the prompt: selects without entering the editor
    for _ in range(count):
        page.keyboard.press("Shift+Enter")
    wait_done(page, timeout)


def run_all(page, timeout: float = 90_000) -> None:
    """Run > Run All Cells, from the menu bar, then wait until no cell is queued or running."""
    page.locator(".lm-MenuBar-itemLabel").get_by_text("Run", exact=True).click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()
    wait_done(page, timeout)


def wait_done(page, timeout: float = 60_000) -> None:
    page.wait_for_timeout(300)  # let the queued cells show [*] first
    page.wait_for_function(_BUSY, timeout=timeout, polling=200)  # not every frame: the CPU is scarce


def wait_for_widget(out, controls: str, count: int = 1) -> None:
    """Wait until ``out`` shows ``count`` elements matching ``controls``, or a widget that rendered as text."""
    as_text = out.get_by_text(re.compile("|".join(re.escape(sign) for sign in WIDGET_AS_TEXT)))
    out.locator(controls).nth(count - 1).or_(as_text.first).wait_for()
    assert_no_widget_text(out)


def assert_no_widget_text(out) -> None:
    """A widget that failed to render shows as its repr or as an error box instead of controls."""
    text = out.inner_text()
    for sign in WIDGET_AS_TEXT:
        assert sign not in text, f"a widget rendered as text: {sign!r} in {text[:300]!r}"
