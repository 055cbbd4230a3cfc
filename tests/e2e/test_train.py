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

CHART = ".st-key-fig_train_runs .js-plotly-plot"
POINTS = """el => {
    const t = (el.data || []).find(t => t.name === 'ALBERT · training');
    return t ? t.x.length : 0;
}"""


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

    expect(page.locator(CHART).last).to_be_visible(timeout=120_000)

    def drawn() -> int:
        # while a fragment reruns, a new chart element can sit in the page before Plotly has drawn into it, beside
        # the drawn one: the points a visitor sees are those of the most complete chart on the page
        return max([0, *page.locator(CHART).evaluate_all(f"els => els.map({POINTS})")])

    seen = [drawn()]
    deadline = time.monotonic() + 240  # a loaded shared CI host: steps can take seconds each
    while time.monotonic() < deadline and len(set(seen)) < 3:  # the curve grew at least twice
        time.sleep(0.5)
        seen.append(drawn())
    assert len(set(seen)) >= 3 and seen == sorted(seen), seen  # grows, never shrinks
    expect(page.locator("[data-testid='stProgress']").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page-train-running.png"), full_page=True)
    # Cancel frees the shared server's worker for the other tests; the page says where the run stopped
    page.locator("[class*='st-key-train_cancel_'] button").first.click()
    # .first: for a moment after the run ends, the fragment's alert and the full rerun's can both be on the page
    expect(page.locator("[data-testid='stAlert']", has_text="cancelled at step").first).to_be_visible(timeout=60_000)
    expect(page.locator(EXCEPTION)).to_have_count(0)
