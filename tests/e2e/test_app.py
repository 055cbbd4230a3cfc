"""The app in a real browser: every page renders without an exception, sliders change the numbers, a
link reproduces the view, bad URLs warn, downloads deliver the right files.

Oracles are transformers' exact counts (tests/helpers/facts.py), not the app's own code."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from albert_core.configuration.hf_config import config_from_hf
from albert_core.configuration.presets import PRESETS
from tests.helpers.facts import EXACT_COUNTS

from .conftest import wait_for_app
from .harness import ARTIFACTS, EXCEPTION, ROOT, free_port, start_server, stop_server, wait_healthy

expect = pytest.importorskip("playwright.sync_api").expect
expect.set_options(timeout=30_000)  # shared CI machines are slow; a passing check returns at once

# (page file, URL path): the default page is served at "/".
PAGES = [
    ("ui/explorer/page.py", "/"),
    ("ui/scaling/page.py", "/scaling"),
    ("ui/live/page.py", "/live_model"),
    ("ui/compare/page.py", "/compare"),
    ("ui/paper/page.py", "/paper"),
]
ALBERT_LARGE_PRETRAINING = EXACT_COUNTS["albert-large"][1]  # AlbertForPreTraining at albert-large's shape
# the metric whose label is "Total parameters" (Playwright's :has with a text match)
TOTAL_PARAMS = ("[data-testid='stMetric']:has([data-testid='stMetricLabel']:has-text('Total parameters')) "
                "[data-testid='stMetricValue']")
H_SLIDER = ".st-key-cfg_H input[type='range']"  # Streamlit 1.67's slider thumb (react-aria)


def slider(page, key: str):
    """The focusable range input of a keyed slider: arrow keys move it one step."""
    return page.locator(f".st-key-{key} input[type='range']")


@pytest.mark.parametrize("file, path", PAGES, ids=[p[1].strip("/") or "explorer" for p in PAGES])
def test_page_loads_without_exception(open_app, file, path):
    assert (ROOT / file).is_file()
    page = open_app(path)
    expect(page.locator("[data-testid='stSidebar']")).to_be_visible()
    expect(page.locator("h1").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    name = path.strip("/") or "explorer"
    page.screenshot(path=str(ARTIFACTS / f"page-{name}.png"), full_page=True)


def test_slider_keyboard_changes_the_numbers_and_the_url(open_app):
    page = open_app("/")
    before = page.locator(TOTAL_PARAMS).inner_text()
    thumb = page.locator(H_SLIDER)
    start = int(thumb.input_value())
    thumb.focus()
    thumb.press("ArrowRight")  # one step: H += 64
    wait_for_app(page)
    expect(thumb).to_have_value(str(start + 64))
    expect(page.locator(TOTAL_PARAMS)).not_to_have_text(before)
    expect(page).to_have_url(re.compile(rf"[?&]H={start + 64}(&|$)"))
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_copied_link_reproduces_the_view_in_a_fresh_context(open_app, browser, app_url):
    page = open_app("/?H=1024&heads=16&L=24&I=4096")
    expect(page.locator(TOTAL_PARAMS)).to_have_text("17.68M")  # albert-large's shape
    layers = slider(page, "cfg_L")
    layers.focus()
    layers.press("ArrowLeft")  # L = 23: a view no preset has
    wait_for_app(page)
    expect(layers).to_have_value("23")
    shown = page.locator(TOTAL_PARAMS).inner_text()
    page.get_by_text("Copy link to this view").click()
    link = page.locator("[data-testid='stSidebar'] [data-testid='stCode'] code").inner_text().strip()
    query = parse_qs(urlparse(link).query)
    assert query["L"] == ["23"] and query["H"] == ["1024"]
    assert query == parse_qs(urlparse(page.url).query)  # the address bar holds the same view

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        other = fresh.new_page()
        other.goto(link)
        wait_for_app(other)
        expect(other.locator(TOTAL_PARAMS)).to_have_text(shown)
        expect(slider(other, "cfg_L")).to_have_value("23")
        expect(slider(other, "cfg_H")).to_have_value("1024")
        expect(other.locator("[data-testid='stAlert']")).to_have_count(0)  # a good link warns about nothing
    finally:
        fresh.close()


def test_invalid_url_values_warn_and_stay_plain_text(open_app):
    page = open_app("/?H=abc&L=-3&V=1e9&sharing=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&heads=NaN")
    alerts = page.locator("[data-testid='stAlert']")
    for key in ("H", "L", "V", "sharing", "heads"):
        expect(alerts.filter(has_text=f"URL value {key}=")).to_have_count(1)
    expect(alerts.locator("img")).to_have_count(0)  # markup from the URL is shown, never rendered
    expect(page.locator(TOTAL_PARAMS)).to_have_text("11.68M")  # every bad value fell back to the default
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _download(page, key: str) -> tuple[str, str]:
    button = page.locator(f".st-key-{key} button:visible").first  # Streamlit also renders a hidden copy
    with page.expect_download() as info:
        button.click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_text(encoding="utf-8")


def test_downloads_deliver_the_right_files(open_app):
    page = open_app("/?H=1024&heads=16&L=24&I=4096&head=pretraining")
    wait_for_app(page)
    name, text = _download(page, "dl_hf_config")
    assert name == "config.json"
    data = json.loads(text)
    assert data["model_type"] == "albert" and data["architectures"] == ["AlbertForPreTraining"]
    assert config_from_hf(data) == PRESETS["albert-large"].replace(head="pretraining")

    name, text = _download(page, "dl_breakdown_csv")
    assert name.endswith(".csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and "params" in rows[0]
    total = sum(int(r["params"]) for r in rows if r.get("name", r.get("component")) != "total")
    assert total == ALBERT_LARGE_PRETRAINING

    name, text = _download(page, "dl_report_json")
    assert name.endswith(".json")
    report = json.loads(text)
    assert report["params"]["total"] == ALBERT_LARGE_PRETRAINING


def test_first_visitors_after_a_restart_keep_the_view(browser):
    """Regression: with a folder named `pages/` beside app.py Streamlit started in legacy multipage mode, and
    the first session's first rerun used to drop every widget value (all fields jumped to their minimum). Two
    visitors arrive together, as after a restart of a busy deployment."""
    port = free_port()
    proc = start_server(port, ARTIFACTS / "e2e-restart.log")
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        pages = [c.new_page() for c in contexts]
        for i, page in enumerate(pages):
            page.goto(url + f"/?V={30_000 + i}", wait_until="commit")
        for page in pages:
            wait_for_app(page)
        for page in pages:
            layers = slider(page, "cfg_L")
            layers.focus()
            layers.press("ArrowLeft")
            wait_for_app(page)
            expect(layers).to_have_value("11", timeout=10_000)
            expect(page).to_have_url(re.compile(r"[?&]L=11(&|$)"), timeout=10_000)  # the server saw it
            expect(page.locator(TOTAL_PARAMS)).to_have_text("11.68M")  # fully shared: L leaves params alone
    finally:
        for c in contexts:
            c.close()
        stop_server(proc)


@pytest.mark.parametrize("path", ["/", "/explorer", "/explorer?H=1024&heads=16", "/compare", "/paper"])
def test_every_page_has_its_own_working_url(open_app, path):
    page = open_app(path)
    wait_for_app(page)
    expect(page.locator("h1").first).to_be_visible()
    expect(page.get_by_text("Page not found")).to_have_count(0)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    if path.startswith("/explorer"):
        expect(page.locator("h1").first).to_have_text("Explorer")
        assert urlparse(page.url).path == "/explorer"
    if "H=1024" in path:
        expect(page.locator(TOTAL_PARAMS)).not_to_have_text("11.68M")


# every number input of the sidebar, as a visitor sees it from the first paint on
SIDEBAR_NUMBERS_JS = """() => ['cfg_V', 'cfg_E', 'cfg_P', 'wl_batch', 'wl_seq'].map(k => {
    const e = document.querySelector(`.st-key-${k} input`); return e ? e.value : null; })"""


def test_the_sidebar_never_shows_a_number_it_does_not_use(page, app_url):
    """A fresh load drew every sidebar number input with its minimum (V 1, E 1, P 1, batch 1) for one paint
    before the value from the link or the defaults (issue 19's "V 1 and E 1 beside finished metrics")."""
    page.add_init_script(f"""
        window.__numbers = [];
        const watch = () => {{ window.__numbers.push(JSON.stringify(({SIDEBAR_NUMBERS_JS})())); requestAnimationFrame(watch); }};
        requestAnimationFrame(watch);""")
    page.goto(app_url + "/?V=20000&E=64&batch=4&seq=256")
    wait_for_app(page)
    expect(page.locator(".st-key-cfg_V input")).to_have_value("20000")
    page.wait_for_timeout(1000)
    drawn = {tuple(json.loads(s)) for s in page.evaluate("window.__numbers")}
    drawn = {d for d in drawn if any(v is not None for v in d)}  # from the first frame the inputs exist
    assert drawn == {("20000", "64", "512", "4", "256")}, drawn


def test_a_fresh_browser_gets_the_numbers_first_then_every_chart_once(browser, app_url):
    """The first run of a browser's session sends the Explorer's numbers with an empty box where each chart goes;
    a fragment's timer asks for the run that draws the charts, once: afterwards the page is quiet (the timer
    stopped), every chart is drawn and no box is left (issue 34; the time to the first number is measured by
    `python -m bench.bench_app --first-page`)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        sent: list[int] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(len(payload))))
        page.goto(app_url + "/")
        expect(page.locator(TOTAL_PARAMS)).to_have_text("11.68M")
        expect(page.locator(".js-plotly-plot .main-svg").nth(3)).to_be_attached()  # the four charts
        wait_for_app(page)
        expect(page.locator("[class*='_pending']")).to_have_count(0)
        before = len(sent)
        page.wait_for_timeout(3_000)  # several of the timer's periods
        assert len(sent) == before, "the browser kept asking for runs after the charts came"
        assert page.locator(".js-plotly-plot").count() == 4
    finally:
        context.close()
