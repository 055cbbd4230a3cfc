"""The Train page in a real browser: the reference curves are there at once, and a tiny run started
from the page streams its curve while it trains (the chart grows without a click)."""

from __future__ import annotations

import random
import time

import pytest

from albert_core.lab.reference import load_reference

from .conftest import wait_for_app
from .harness import ARTIFACTS, EXCEPTION

expect = pytest.importorskip("playwright.sync_api").expect
expect.set_options(timeout=30_000)

FRAME = ".st-key-fig_train_runs iframe"  # the streaming chart (ui/train/live_chart.py): Plotly inside a component
# the chart element's identity (tagged on first sight) and the points of the training curve in it
CHART_STATE = """frames => frames.map(f => {
    const el = f.contentDocument && f.contentDocument.querySelector('.js-plotly-plot');
    if (!el) return null;
    el.dataset.seen = el.dataset.seen || String(Math.random());
    const t = (el.data || []).find(t => t.name === 'ALBERT · training');
    return [el.dataset.seen, t ? t.x.length : 0, t ? (t.visible === 'legendonly') : null];
})"""


def _fill(page, key: str, value: str) -> None:
    box = page.locator(f".st-key-{key} input")
    box.fill(value)
    box.press("Enter")
    wait_for_app(page)


def test_a_tiny_run_streams_its_curve(open_app):
    page = open_app("/train")
    expect(page.locator("h1", has_text="Train")).to_be_visible()
    if load_reference():  # shipped reference curves, no click needed (test_app_train checks they ship)
        expect(page.locator("[class*='st-key-chart_exp_'] .js-plotly-plot").first).to_be_visible()
    _fill(page, "train_steps", "1500")  # long enough that it cannot finish before the Cancel below
    _fill(page, "train_seeds", str(random.randrange(10**6, 10**7)))  # a fresh run, never a cache hit
    for name in ("BERT",):  # the default is BERT and ALBERT: keep only the ALBERT twin
        page.locator(".st-key-train_twins").get_by_role("button", name=name, exact=True).click()
        wait_for_app(page)
    expect(page.locator(".st-key-train_submit button")).to_have_accessible_name("Train 1 run")
    page.locator(".st-key-train_submit button").click()

    chart = page.frame_locator(FRAME).locator(".js-plotly-plot")
    expect(chart).to_be_visible(timeout=120_000)

    def state() -> list:
        return page.locator(FRAME).evaluate_all(CHART_STATE)

    # what a visitor sees while the panel polls once a second: one chart, the same element all along (not a new
    # one mounted on every rerun), whose curve grows and never empties
    seen = [state()]
    deadline = time.monotonic() + 240  # a loaded shared CI host: steps can take seconds each
    while time.monotonic() < deadline and len({s[0][1] for s in seen if s and s[0]}) < 3:  # grew at least twice
        time.sleep(0.25)
        seen.append(state())
    assert all(len(s) == 1 and s[0] is not None for s in seen), seen  # one chart, always drawn
    assert len({s[0][0] for s in seen}) == 1, seen  # the same element
    points = [s[0][1] for s in seen]
    assert len(set(points)) >= 3 and points == sorted(points), points  # grows, never empties
    # a run hidden in the legend stays hidden while the polls add points (Plotly's uirevision)
    page.frame_locator(FRAME).locator(".legendtext", has_text="ALBERT · training").first.click(force=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (state()[0] or [None, 0, False])[2]:
        time.sleep(0.25)
    before = state()[0]
    assert before[2] is True, before
    grown = time.monotonic() + 60
    while time.monotonic() < grown and state()[0][1] == before[1]:
        time.sleep(0.25)
    after = state()[0]
    assert after[0] == before[0] and after[1] > before[1] and after[2] is True, (before, after)
    expect(page.locator("[data-testid='stProgress']").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page-train-running.png"), full_page=True)
    # Cancel frees the shared server's worker for the other tests; the page says where the run stopped
    page.locator("[class*='st-key-train_cancel_'] button").first.click()
    # .first: for a moment after the run ends, the fragment's alert and the full rerun's can both be on the page
    expect(page.locator("[data-testid='stAlert']", has_text="cancelled at step").first).to_be_visible(timeout=60_000)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_runs_stay_the_browsers_own_after_a_reload_and_in_another_tab_and_read_only_elsewhere(open_app, browser,
                                                                                          app_url):
    """Issue #34: after a reload a visitor's runs said "another visitor started it", without Cancel. The owner
    is the browser (a cookie), so a reload and a second tab still hold Cancel; another browser sees the run
    read-only; Cancel in the second tab stops it."""
    page = open_app("/train")
    _fill(page, "train_steps", "1500")  # long enough that it cannot finish before the Cancel below
    _fill(page, "train_seeds", str(random.randrange(10**6, 10**7)))  # a fresh run, never a cache hit
    page.locator(".st-key-train_twins").get_by_role("button", name="BERT", exact=True).click()
    wait_for_app(page)
    page.locator(".st-key-train_submit button").click()
    cancel = page.get_by_role("button", name="Cancel", exact=True)
    expect(cancel).to_have_count(1)

    page.reload()  # the same tab, a new session
    wait_for_app(page)
    expect(cancel).to_have_count(1)
    expect(page.get_by_text("read-only: another visitor started it")).to_have_count(0)
    tab = page.context.new_page()  # the link in a second tab of the same browser
    tab.goto(page.url)
    wait_for_app(tab)
    expect(tab.get_by_role("button", name="Cancel", exact=True)).to_have_count(1)
    cookie = [c for c in page.context.cookies() if c["name"] == "albert_lab_owner"]
    assert len(cookie) == 1 and cookie[0]["sameSite"] == "Strict" and cookie[0]["value"] not in page.url

    other = browser.new_context(viewport={"width": 1400, "height": 1000})  # another visitor's browser
    try:
        stranger = other.new_page()
        stranger.goto(page.url)
        wait_for_app(stranger)
        expect(stranger.get_by_text("read-only: another visitor started it").first).to_be_visible()
        expect(stranger.get_by_role("button", name="Cancel", exact=True)).to_have_count(0)
        expect(stranger.get_by_role("button", name="Train your own copy")).to_have_count(1)
    finally:
        other.close()

    tab.get_by_role("button", name="Cancel", exact=True).click()  # Cancel in the second tab stops the run
    expect(tab.locator("[data-testid='stAlert']", has_text="cancelled").first).to_be_visible(timeout=60_000)
    page.reload()
    wait_for_app(page)
    expect(page.locator("[data-testid='stAlert']", has_text="cancelled").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
