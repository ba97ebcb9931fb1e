"""A student in the real JupyterLab UI (headless Chromium), as `make student` starts it.

One module on purpose: its server and browser are module fixtures, started once, and its tests share one tab.
The Launcher test comes last, so the grading kernel is looked for after everything else (Validate too) ran.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from .conftest import solution_source
from .ui import assert_no_widget_text, cell, open_notebook, output, panel, run_all, run_cells, wait_for_widget

NOT_WRITTEN = "CharCorruptionDataset.__getitem__ is not written yet"
INSTRUCTOR_SIGNS = ("Create Assignment", "Formgrader", "Course List", "Assignment List", "grading")


def _image_drawn(img) -> bool:
    return img.evaluate("i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100")


def _validate(page) -> str:
    """Press the toolbar's Validate button; return the text of nbgrader's result dialog (left open)."""
    panel(page).locator(".validate-button").click()
    dialog = page.locator(".jp-Dialog", has_text="Validation Results")
    dialog.wait_for(timeout=90_000)
    return dialog.inner_text()


def _close_dialog(page) -> None:
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def test_span_check_and_validate_before_and_after_the_answer(lab, page):
    """On 03, do the check and Validate say plainly that the answer is unwritten, and pass once it is typed in?"""
    open_notebook(page, lab, "03_span_corruption.ipynb")
    run_cells(page, 1, 3)  # imports, the answer cell as released, the public check
    check = output(page, 3)
    check.get_by_text(NOT_WRITTEN).wait_for()
    check.scroll_into_view_if_needed()
    page.shot("1-check-unwritten")
    shown = check.inner_text()
    # the check's own message alone: no traceback, not the student stub's NotImplementedError from deep inside it
    assert f"Check failed: {NOT_WRITTEN}" in shown, shown[-800:]
    assert "Traceback" not in shown and "NotImplementedError" not in shown and ".py" not in shown, shown[-800:]

    text = _validate(page)  # nothing written yet: Validate names the failing check
    page.shot("2-validate-unwritten")
    assert page.locator(".jp-Dialog .validation-failed").count() == 1, text
    assert text.count("The following cell failed:") == 1 and "check_span_corruption_basic" in text, text
    assert NOT_WRITTEN in text
    _close_dialog(page)

    cell(page, 2).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    # insert_text types it as one input (as a paste would), so the editor's auto-indent leaves it alone
    page.keyboard.insert_text(solution_source("03_span_corruption.ipynb", "03-span-corruption"))
    page.shot("3-written")
    run_cells(page, 2, 2)
    check.get_by_text("span corruption: all public checks passed").wait_for()
    page.shot("4-check-passed")
    assert NOT_WRITTEN not in check.inner_text()
    assert not check.locator("[data-mime-type='application/vnd.jupyter.stderr']").count()

    text = _validate(page)  # it saves the notebook first, so it validates what the student typed
    page.shot("5-validate-passed")
    assert page.locator(".jp-Dialog .validation-success").count() == 1, text
    assert "Success! Your notebook passes all the tests." in text
    _close_dialog(page)


# what the blank 07 says, part by part: the answer cell, then its check (one line each)
UNWRITTEN_07 = ("q_copy is", "M and q_avg are", "q_single is", "q_1 and q_2 are", "c2_plain, K, Q and V are")
EXPLORER_WAITS = "(skipped: write q_single (part c) and q_1, q_2 (part d) first)"


def test_run_all_on_a_blank_notebook_reaches_its_explorer(lab, page):
    """On the blank 07, does Run All reach the explorer cell, with each unwritten part saying so in one line (its
    answer cell and its check) and no traceback anywhere?"""
    open_notebook(page, lab, "07_attention_exploration.ipynb")
    run_all(page)
    explorer = panel(page).locator(".jp-Cell").last.locator(".jp-Cell-outputArea")
    explorer.get_by_text(EXPLORER_WAITS).wait_for()
    page.shot("1-run-all-blank")
    shown = panel(page).inner_text()
    assert "Traceback" not in shown and ".py" not in shown, shown[-1500:]
    # text_content, not inner_text: the cells scrolled out of view are not painted, but their outputs are there
    errors = [t.strip() for t in panel(page).locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_text_contents()]
    wanted = [f"{start}{part} not written yet" for part in UNWRITTEN_07 for start in ("", "Check failed: ")]
    assert len(errors) == len(wanted), errors
    for error, start in zip(errors, wanted):
        assert error.startswith(start) and "\n" not in error, (error, start)  # one line each
        assert "Traceback" not in error and "File " not in error, error


def test_explorer_is_controls_and_redraws(lab, page):
    """Does 07's explorer render as two sliders over a plot, and does moving a slider redraw the plot?"""
    open_notebook(page, lab, "07_filled.ipynb")
    run_all(page)
    explorer = panel(page).locator(".jp-Cell").last.locator(".jp-Cell-outputArea")
    wait_for_widget(explorer, ".widget-slider", count=2)
    sliders = explorer.locator(".widget-slider")
    plot = explorer.locator("img").first
    plot.wait_for()
    page.shot("1-rendered")
    assert sliders.count() == 2
    assert_no_widget_text(explorer)
    assert "stretch of k_a" in explorer.inner_text()
    assert _image_drawn(plot)

    before = plot.get_attribute("src")
    sliders.first.locator(".noUi-handle").focus()
    for _ in range(6):  # the arrow keys move a noUiSlider's handle one step each
        page.keyboard.press("ArrowRight")
    page.wait_for_function("([img, src]) => img.isConnected ? img.src !== src : true",
                           arg=[plot.element_handle(), before], timeout=20_000, polling=200)
    redrawn = explorer.locator("img").first
    redrawn.wait_for()
    page.shot("2-moved")
    assert redrawn.get_attribute("src") != before
    assert "0.80" in explorer.locator(".widget-readout").first.inner_text()  # 0.5 + 6 steps of 0.05


def test_position_heatmap_is_an_image(lab, page):
    """Does 08's heatmap of the sinusoidal embeddings render as an image?"""
    open_notebook(page, lab, "08_filled.ipynb")
    run_all(page)
    heatmap = panel(page).locator(".jp-Cell").last.locator(".jp-Cell-outputArea img")
    heatmap.wait_for()
    page.shot("1-heatmap")
    assert _image_drawn(heatmap)
    assert "skipped" not in panel(page).locator(".jp-Cell").last.inner_text()


def test_tour_progress_bar_and_loss_plot(lab, page):
    """Does 01's training cell show a progress bar widget and a loss plot (smoke preset)?"""
    open_notebook(page, lab, "01_setup_and_tour.ipynb")
    run_cells(page, 1, 5)  # up to the training cell; sampling is not what this checks
    train = output(page, 5)
    wait_for_widget(train, ".widget-hprogress, .widget-progress")
    train.locator("img").first.wait_for()
    page.shot("1-trained")
    assert_no_widget_text(train)
    assert "train" in train.inner_text()  # tqdm's description beside the bar
    assert _image_drawn(train.locator("img").first)
    assert "Traceback" not in panel(page).inner_text()


def test_launcher_has_the_student_kernel_only(lab, page):
    """Does the student's Launcher offer Python 3 only, with no grading kernel and no nbgrader instructor tools?"""
    page.locator("[data-command='launcher:create']").first.click()
    launcher = page.locator(".jp-Launcher-body").last
    launcher.wait_for()
    page.shot("1-launcher")
    for section in ("Notebook", "Console"):  # a kernel spec on the path shows as a card in both
        cards = launcher.locator(".jp-Launcher-section", has_text=section).first.locator(".jp-LauncherCard")
        assert [" ".join(text.split()) for text in cards.all_inner_texts()] == ["Python 3 (ipykernel)"], section
    sidebars = [t or "" for t in page.locator(".jp-SideBar .lm-TabBar-tab").evaluate_all(
        "tabs => tabs.map(t => t.title || t.getAttribute('data-id'))")]
    shown = launcher.inner_text() + " ".join(sidebars)
    for sign in INSTRUCTOR_SIGNS:
        assert sign.lower() not in shown.lower(), f"the student sees {sign!r}"
    assert page.locator(".lm-MenuBar-itemLabel").all_inner_texts() == \
        ["File", "Edit", "View", "Run", "Kernel", "Tabs", "Settings", "Help"]  # no nbgrader menu

    specs = json.load(urllib.request.urlopen(f"{lab['base']}/api/kernelspecs?token={lab['token']}"))
    assert list(specs["kernelspecs"]) == ["python3"]
    try:
        urllib.request.urlopen(f"{lab['base']}/formgrader?token={lab['token']}")
        raise AssertionError("formgrader answers in the student's session")
    except urllib.error.HTTPError as err:
        assert err.code == 404
