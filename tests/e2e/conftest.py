"""Real-browser tests: ONE `streamlit run app.py` per session and Debian's Chromium driven by Playwright.

Without a browser the tests skip with the reason, unless ALBERT_EXPLORER_REQUIRE_BROWSER=1 (CI), where
a missing browser fails them. Screenshots go to `test-artifacts/` (gitignored).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import (
    APP_BUSY,
    APP_DONE,
    ARTIFACTS,
    chromium_path,
    free_port,
    launch_kwargs,
    start_server,
    stop_server,
    wait_healthy,
)

RUN_TIMEOUT_MS = 60_000  # generous: CI machines are shared and the Live model page runs a real model


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.e2e)


def wait_for_app(page, start_ms: int = 1_000) -> None:
    """Wait until Streamlit finished the script run: a run an input just requested usually starts
    within a few ms, so give it up to ``start_ms`` to start, then wait for it to end."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):  # the run was already over (or nothing changed)
        page.wait_for_selector(APP_BUSY, state="attached", timeout=start_ms)
    page.wait_for_selector(APP_DONE, state="attached", timeout=RUN_TIMEOUT_MS)


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def browser() -> Iterator:
    if chromium_path() is None:
        reason = "no Chromium at /usr/bin/chromium: browser tests need Debian's chromium (apt-get install chromium)"
        if os.environ.get("ALBERT_EXPLORER_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " and ALBERT_EXPLORER_REQUIRE_BROWSER=1")
        pytest.skip(reason)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(**launch_kwargs())
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def app_url(browser) -> Iterator[str]:
    """Base URL of one Streamlit server shared by the whole session (started after the browser check,
    so a skipped run starts nothing)."""
    port = free_port()
    proc = start_server(port, ARTIFACTS / "e2e-server.log")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        warm_up(browser, url)
        yield url
    finally:
        stop_server(proc)


def warm_up(browser, url: str) -> None:
    """Run one session to the end so test order does not matter: the first session of a fresh server
    is special (see test_first_visitor_after_a_restart_keeps_the_view)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + "/")
        wait_for_app(page)
    finally:
        context.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.set_default_timeout(RUN_TIMEOUT_MS)
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))  # a script alert() would be XSS
    pg.dialogs = dialogs
    yield pg
    context.close()
    assert not dialogs, f"the page opened JavaScript dialogs: {dialogs}"


@pytest.fixture
def open_app(page, app_url):
    """Open a path (e.g. '/scaling?H=1024') and wait for the first run to finish."""

    def go(path: str = "/"):
        page.goto(app_url + path)
        wait_for_app(page)
        return page

    return go
