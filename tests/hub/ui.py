"""What the hub's people do in the browser, as Playwright steps: log in, the Assignments tab, a notebook, formgrader."""
from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect


# --- the hub ---
def submit_login(page, hub_url: str, user: str, password: str) -> None:
    """Fill the hub's login form and send it; the hub then spawns the user's server (not waited for here)."""
    page.goto(f"{hub_url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")


def wait_for_lab(page, timeout: float = 180_000) -> None:
    """Wait until the user's JupyterLab has come up after the spawn and shows its file browser."""
    page.wait_for_url(re.compile(r"/user/[^/]+/lab"), timeout=timeout)
    page.locator(".jp-DirListing-content").first.wait_for(timeout=timeout)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=timeout)


# --- a student's Assignments tab ---
def open_assignments(page) -> None:
    """Nbgrader > Assignment List: the Assignments tab, refreshed."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    page.locator("#assignments").wait_for()
    refresh_assignments(page)


def refresh_assignments(page) -> None:
    page.locator("#refresh_assignments_list").click()
    page.wait_for_function("""() => [...document.querySelectorAll('#assignments .list_loading')]
                              .every(e => e.hidden)""", timeout=60_000, polling=200)


def assignment_row(page, section: str, assignment: str):
    """The row of ``assignment`` in one section of the tab: released, fetched or submitted."""
    name = page.locator(".item_name", has_text=assignment)
    return page.locator(f"#{section}_assignments_list > .list_item", has=name)


def fetch(page, assignment: str) -> None:
    assignment_row(page, "released", assignment).get_by_role("button", name="Fetch").click()
    assignment_row(page, "fetched", assignment).wait_for(timeout=60_000)


def submit(page, assignment: str) -> None:
    """Press Submit on the downloaded assignment; wait until the tab lists one more submission (a time stamp)."""
    stamps = "#submitted_assignments_list .nested_list_item"
    before = page.locator(stamps).count()
    assignment_row(page, "fetched", assignment).get_by_role("button", name="Submit").click()
    page.wait_for_function(f"() => document.querySelectorAll({stamps!r}).length > {before}", timeout=60_000,
                           polling=250)


def fetch_feedback(page, assignment: str) -> None:
    """Press Fetch Feedback on the submitted assignment, then its "(view feedback)" link: the file browser then
    shows the feedback folder."""
    row = assignment_row(page, "submitted", assignment).last
    row.get_by_text("(feedback available to fetch)").wait_for(timeout=30_000)
    row.get_by_role("button", name="Fetch Feedback").click()
    view = assignment_row(page, "submitted", assignment).last.get_by_text("(view feedback)")
    view.wait_for(timeout=60_000)
    view.click()
    page.locator(".jp-FileBrowser .jp-BreadCrumbs", has_text="feedback").wait_for()


def read_html_file(page, name: str) -> str:
    """Open ``name`` from the file browser's current folder in JupyterLab's HTML viewer; return the text it shows."""
    page.locator(".jp-DirListing-item", has_text=name).first.dblclick()
    page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current", has_text=name).wait_for()
    body = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").locator("body")
    body.wait_for()
    # the viewer puts an empty document in its frame before the file's: wait for the file's text
    expect(body).not_to_have_text("", timeout=30_000)
    return body.inner_text()


# --- a notebook ---
def notebook_panel(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")


def open_notebook(page, path: str) -> None:
    """Open ``path`` (relative to the server's root) from the file browser, as a student would."""
    *folders, name = path.split("/")
    page.locator(".jp-FileBrowser .jp-BreadCrumbs-home").click()
    for folder in folders:
        page.locator(".jp-DirListing-item", has_text=folder).first.dblclick()
        page.locator(".jp-FileBrowser .jp-BreadCrumbs", has_text=folder).wait_for()
    page.locator(".jp-DirListing-item", has_text=name).first.dblclick()
    page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current", has_text=name).wait_for()
    notebook_panel(page).locator(".jp-Cell").first.wait_for()


def replace_cell_source(page, index: int, source: str) -> None:
    """Type ``source`` over cell ``index`` (insert_text types it as one input, so auto-indent leaves it alone)."""
    cell = notebook_panel(page).locator(".jp-Notebook .jp-Cell").nth(index)
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")  # command mode: the next keys are not typed into the cell


def save(page, attempts: int = 3) -> None:
    """File > Save, as Ctrl+S; wait for the server's answer to the save, then for the tab to show no unsaved changes.

    (The server writes the file in place, so reading it before the answer may find it empty.) A notebook just opened
    may turn dirty again right after its save, when its new kernel reports the notebook's language (JupyterLab writes
    that into the metadata): then save again, as the student who sees the tab's dot would."""
    dirty = page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current.jp-mod-dirty")
    for attempt in range(1, attempts + 1):
        page.locator(".lm-DockPanel .lm-TabBar-tab.lm-mod-current").click()  # the notebook has the keyboard
        with page.expect_response(lambda r: r.request.method == "PUT" and "/api/contents/" in r.url, timeout=60_000):
            page.keyboard.press("Control+s")
        try:
            dirty.wait_for(state="detached", timeout=15_000)
            return
        except PlaywrightTimeoutError:
            if attempt == attempts:
                raise


def validate(page) -> tuple[bool, str]:
    """The notebook toolbar's Validate (it saves first): (passed, the text of nbgrader's result dialog)."""
    notebook_panel(page).locator(".validate-button").click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=120_000)
    text = dialog.inner_text()
    passed = page.locator(".jp-Dialog .validation-success").count() == 1
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")
    return passed, text


# --- formgrader (the instructor's) ---
def formgrader(page, server_url: str, path: str = "manage_assignments") -> None:
    page.goto(f"{server_url}/formgrader/{path}")
    page.locator("#main-table, .container").first.wait_for()


def assignment_action(page, assignment: str, column: str, timeout: float = 120_000, expect_error: bool = False) -> str:
    """Press the button in ``column`` (assign, release, collect, generate-feedback, release-feedback) of the
    assignment's row in Manage Assignments; return the log nbgrader showed; raise if it showed an error (or, with
    ``expect_error``, if it did not)."""
    row = page.locator("#main-table tr", has=page.locator("td.name", has_text=re.compile(rf"^\s*{assignment}\s*$")))
    row.locator(f"td.{column} a").click()
    outcome = page.locator("#success-modal, #error-modal")
    outcome.wait_for(timeout=timeout)
    text = outcome.inner_text()
    failed = page.locator("#error-modal").count() > 0
    outcome.locator(".modal-footer button").click()
    outcome.wait_for(state="detached")
    if failed != expect_error:
        raise AssertionError(f"formgrader's {column} of {assignment} {'failed' if failed else 'succeeded'}:\n"
                             f"{text[-3000:]}")
    return text


def submission_link(page, server_url: str, assignment: str, notebook: str, student: str) -> str:
    """The formgrader page of ``student``'s ``notebook``, found in Manual Grading's list of submissions."""
    formgrader(page, server_url, f"gradebook/{assignment}/{notebook}")
    link = page.locator("td.name a.name-shown", has_text=re.compile(rf"^{re.escape(student)}$"))
    link.wait_for(state="attached")
    return link.get_attribute("href")


def grade_by_hand(page, href: str, grade_id: str, points: float, comment: str) -> None:
    """On a submission's formgrader page: type points and a comment for ``grade_id``, each saved (formgrader PUTs
    it when the field changes) before this returns."""
    page.goto(href if href.startswith("http") else page.url.split("/user/")[0] + href)
    # the fields save only once formgrader has loaded the grades and comments and bound its views to them
    page.wait_for_function("() => window.formgrader && formgrader.grades && formgrader.grades.loaded"
                           " && formgrader.comments && formgrader.comments.loaded", polling=200)
    for field, value, api in ((f'input.score[id="{grade_id}"]', str(points), "/formgrader/api/grade/"),
                              (f'textarea.comment[id="{grade_id}-comment"]', comment, "/formgrader/api/comment/")):
        box = page.locator(field)
        box.wait_for()
        with page.expect_response(lambda r, api=api: api in r.url and r.request.method == "PUT") as saved:
            box.fill(value)
            box.press("Tab")  # the change event saves it
        assert saved.value.ok, f"formgrader did not save {field}: HTTP {saved.value.status}"
