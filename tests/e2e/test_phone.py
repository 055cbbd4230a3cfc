"""Every chart readable on a 390 x 844 phone: titles inside the chart, legends clear of the title and of
the plot area, bar labels, heatmap numbers and subplot titles not running into each other.

Read from the rendered SVG (bounding boxes in the browser); a screenshot of each chart goes to
`test-artifacts/phone-<page>-<n>.png`."""

from __future__ import annotations

import itertools

import pytest

from .conftest import RUN_TIMEOUT_MS, wait_for_app
from .harness import ARTIFACTS, EXCEPTION

expect = pytest.importorskip("playwright.sync_api").expect
expect.set_options(timeout=30_000)  # shared CI machines are slow; a passing check returns at once

PHONE = {"width": 390, "height": 844}
PHONE_PAGES = [
    ("explorer", "/"),
    ("explorer-bert", "/?family=bert"),
    ("scaling", "/scaling"),
    ("compare", "/compare?pin=albert-base,bert-base,albert-xxlarge,bert-large"),
    ("paper", "/paper"),
    ("live_model", "/live_model"),
    ("hardware", "/hardware"),
]
# The boxes of one chart's parts, in page pixels (only parts drawn with a size).
BOXES_JS = """(el) => {
  const box = e => { const b = e.getBoundingClientRect();
                     return {l: b.left, t: b.top, r: b.right, b: b.bottom, w: b.width, h: b.height}; };
  const all = s => Array.from(el.querySelectorAll(s)).map(box).filter(b => b.w > 0.5 && b.h > 0.5);
  const texts = s => Array.from(el.querySelectorAll(s)).filter(e => (e.textContent || '').trim())
                          .map(box).filter(b => b.w > 0.5 && b.h > 0.5);
  const svg = el.querySelector('.main-svg');
  return {
    chart: box(svg || el),
    title: texts('.g-gtitle text.gtitle'),
    legend: all('g.legend > rect.bg'),
    area: all('.draglayer .nsewdrag'),
    ticks: texts('.xtick text, .ytick text'),
    small: Array.from(el.querySelectorAll('text.bartext, .heatmaplayer text'))
             .filter(e => (e.textContent || '').trim())
             .map(e => parseFloat(getComputedStyle(e).fontSize)).filter(s => s < 9),
    bars: texts('text.bartext'),
    heat: texts('.heatmaplayer text, .hm text'),
    notes: texts('g.annotation-text-g text'),
    axis_titles: texts('.infolayer g[class$="title"] text.xtitle, .infolayer g[class$="title"] text.ytitle, '
                       + 'text.xtitle, text.ytitle, text.x2title, text.y2title'),
  };
}"""


def _overlap(a: dict, b: dict, slack: float = 1.0) -> bool:
    return min(a["r"], b["r"]) - max(a["l"], b["l"]) > slack and min(a["b"], b["b"]) - max(a["t"], b["t"]) > slack


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return inner["l"] >= outer["l"] - slack and inner["r"] <= outer["r"] + slack


def chart_problems(name: str, boxes: dict) -> list[str]:
    """What makes one chart unreadable (empty list: readable)."""
    problems = []
    chart = boxes["chart"]
    for t in boxes["title"]:
        if not _inside(t, chart):
            problems.append(f"{name}: title cut ({t['l']:.0f}..{t['r']:.0f} outside {chart['l']:.0f}..{chart['r']:.0f})")
    for leg in boxes["legend"]:
        if any(_overlap(leg, t) for t in boxes["title"]):
            problems.append(f"{name}: legend overlaps the title")
        if any(_overlap(leg, a, 3) for a in boxes["area"]):
            problems.append(f"{name}: legend overlaps the plot area")
        if any(_overlap(leg, t) for t in boxes["ticks"]):
            problems.append(f"{name}: legend overlaps the axis labels")
    if boxes["small"]:
        problems.append(f"{name}: {len(boxes['small'])} labels shrunk below 9 px")
    for kind in ("bars", "heat", "notes"):
        for a, b in itertools.combinations(boxes[kind], 2):
            if _overlap(a, b):
                problems.append(f"{name}: {kind} labels overlap")
                break
    for a in boxes["axis_titles"]:
        if not (_inside(a, chart) and a["t"] >= chart["t"] - 1 and a["b"] <= chart["b"] + 1):
            problems.append(f"{name}: axis title cut")
    for n in boxes["notes"]:
        if not _inside(n, chart):
            problems.append(f"{name}: annotation cut")
        if any(_overlap(n, t) for t in boxes["ticks"]):
            problems.append(f"{name}: annotation overlaps the axis labels")
    return problems


@pytest.fixture
def phone(browser, app_url):
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    context.set_default_timeout(RUN_TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("name, path", PHONE_PAGES, ids=[p[0] for p in PHONE_PAGES])
def test_every_chart_is_readable_on_a_phone(phone, app_url, name, path):
    phone.goto(app_url + path)
    wait_for_app(phone)
    expect(phone.locator(EXCEPTION)).to_have_count(0)
    charts = phone.locator(".js-plotly-plot")
    if name not in ("live_model", "paper"):  # paper: tables only; live: charts after the visitor runs it
        expect(charts.first).to_be_attached()
    problems = []
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        expect(chart.locator(".main-svg").first).to_be_visible()
        boxes = chart.evaluate(BOXES_JS)
        assert boxes["chart"]["w"] <= PHONE["width"], f"chart {i} is wider than the phone"
        label = (boxes["title"] and chart.locator(".g-gtitle text.gtitle").first.text_content()) or f"chart {i}"
        problems += chart_problems(f"{name} / {label}", boxes)
        ARTIFACTS.mkdir(exist_ok=True)
        chart.screenshot(path=str(ARTIFACTS / f"phone-{name}-{i}.png"))
    assert not problems, "\n".join(problems)


def test_formulas_fit_a_phone(phone, app_url):
    """Paper's formulas are broken into lines that fit 390 px; only the parameter table (label, closed form and
    value side by side) is wider, and scrolls sideways (KaTeX's own overflow) instead of being cut."""
    phone.goto(app_url + "/paper")
    wait_for_app(phone)
    expect(phone.locator(".katex-display").nth(7)).to_be_attached()  # KaTeX typesets after the page's run
    sizes = phone.locator(".katex-display").evaluate_all(
        "els => els.map(e => [e.scrollWidth, e.clientWidth, getComputedStyle(e).overflowX,"
        " e.closest('.st-key-paper_formulas') !== null])")
    assert len(sizes) >= 8
    assert not [s for s in sizes if s[0] > s[1] + 2 and not s[3]], sizes
    assert all(s[2] == "auto" for s in sizes if s[3])  # the wide one scrolls
