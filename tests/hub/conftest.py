"""One hub (hub/jupyterhub_config.py, as `make hub` runs it), one headless Chromium and three logged-in users,
shared by the module; screenshots of every user's page and the hub's log go to outputs/hub/ when a test fails."""
from __future__ import annotations

import shutil

import pytest

from course_lib.layout import REPO

from . import hub_server, ui

SHOTS = REPO / "outputs" / "hub"
# The test's assignment keeps four of the eight notebooks: the two the students answer in (03, 07), the one with the
# written answer graded by hand (06), and 02, whose run cells carry training runs' points (neither student trains:
# their feedback says why those points are lost). Each notebook costs every student a grading kernel's start, an
# import cell and its cells in nbgrader's autograde (about 7 s of work on 2 cores) and a feedback page; the other four
# go the same way through every step and would add about a minute to the test.
COURSE_NOTEBOOKS = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb",
                    "06_considerations_in_pretrained_knowledge.ipynb", "07_attention_exploration.ipynb")
# the course's late policy in these tests: 10% of the points earned per started day late (each late student here is
# late by less than a day, whatever the machine's pace)
LATE_POLICY = 'c.CourseLatePenalty.penalty_method = "per_day"\nc.CourseLatePenalty.percent = 10.0\n'
# Debian's Chromium, quiet and offline, as tests/browser/conftest.py starts it (Playwright's download is unreachable)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _skip_unless_possible() -> None:
    why = hub_server.why_not()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="session")
def machine_ready():
    """The machine set up for the test users (tools/hub_setup.sh, once), or the test skipped saying why it cannot be."""
    _skip_unless_possible()
    hub_server.set_up_machine()


@pytest.fixture(scope="module")
def hub():
    """The machine set up for the test users (tools/hub_setup.sh) and a hub of their own, stopped at the end."""
    _skip_unless_possible()
    hub_server.forget_last_run()
    hub_server.set_up_machine()  # the users if new, the course folder afresh
    hub_server.trim_course(COURSE_NOTEBOOKS)
    hub_server.configure_course(LATE_POLICY)
    running = hub_server.start_hub(SHOTS / "hub.log")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(hub_server.CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def people(hub, browser):
    """user -> a logged-in page on their JupyterLab, each in a browser context of its own (its own cookies).
    The three log in back to back, so the hub spawns their servers side by side."""
    passwords = hub_server.passwords()
    pages = {}
    for user in hub.users:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
        page = context.new_page()
        page.set_default_timeout(30_000)
        assert user in passwords, f"no password for {user} in {hub_server.PASSWORDS} (tools/hub_setup.sh sets one " \
            "for an account it makes, and only then)"
        ui.submit_login(page, hub.url, user, passwords[user])
        pages[user] = page
    for page in pages.values():
        ui.wait_for_lab(page)
    yield pages
    for page in pages.values():
        page.context.close()


@pytest.fixture(scope="module")
def journey():
    """The first step of the module that failed: the later steps skip, they would only fail after it."""
    return {"failed": None}


@pytest.fixture
def step(request, journey):
    """A step of the assignment's life (test_assignment_life.py uses it on every test): skipped after an earlier step
    failed; when it fails, every user's page is screenshot and the hub's log kept, in outputs/hub/."""
    if journey["failed"]:
        pytest.skip(f"an earlier step failed: {journey['failed']}")
    yield
    report = getattr(request.node, "rep_call", None)
    if report is None or not report.failed:
        return
    journey["failed"] = request.node.name
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.removeprefix("test_")
    pages = request.getfixturevalue("people") if "people" in request.fixturenames else {}
    for user, page in pages.items():
        try:
            page.screenshot(path=str(SHOTS / f"{name}-{user}.png"))
        except Exception as err:  # a closed or crashed page: say so, keep the other screenshots
            print(f"no screenshot of {user}: {err}")
    if "hub" in request.fixturenames:
        shutil.copy(request.getfixturevalue("hub").log, SHOTS / f"{name}-hub.log")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so the step fixture can screenshot a failure."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report

