"""Every chart readable on a 390 x 844 phone: titles inside the chart, legends clear of the title and of
the plot area, bar labels, heatmap numbers and subplot titles not running into each other, Plotly's toolbar clear
of the title; tables wider than the screen show that they scroll; the Paper page's formulas fit; Compare's pin
names leave the bars their room.

Read from the rendered page (bounding boxes in the browser); a screenshot of each chart goes to
`test-artifacts/phone-<page>-<n>.png`."""

from __future__ import annotations

import itertools
import urllib.parse

import plotly.graph_objects as go
import pytest

from albert_core import PRESETS
from ui import urls
from ui.train import live_chart

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
    ("train", "/train"),
    ("quality", "/quality"),
    ("quality-mixed", "/quality?qm=glue&qmix=1"),
]
DESKTOP = {"width": 1400, "height": 1000}
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


# Where Plotly's toolbar is once the pointer is on the chart (it shows on hover, or on a tap on a phone), and whether
# its first button is really there to be pressed (not clipped, not under another element).
TOOLBAR_JS = """(el) => {
  const box = e => { const b = e.getBoundingClientRect();
                     return {l: b.left, t: b.top, r: b.right, b: b.bottom, w: b.width, h: b.height}; };
  const bar = el.querySelector('.modebar'), button = el.querySelector('.modebar-btn');
  if (!bar || !button) return null;
  const b = box(button), hit = document.elementFromPoint((b.l + b.r) / 2, (b.t + b.b) / 2);
  return {bar: box(bar), opacity: parseFloat(getComputedStyle(bar).opacity), pressable: button.contains(hit),
          title: Array.from(el.querySelectorAll('.g-gtitle text.gtitle')).filter(e => (e.textContent || '').trim())
                      .map(box)};
}"""


def toolbar_problems(page, chart, name: str) -> list[str]:
    """Hover ``chart`` and say where its toolbar gets in the way (empty list: it does not)."""
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(chart.locator(".modebar")).to_have_css("opacity", "1")
    state = chart.evaluate(TOOLBAR_JS)
    problems = []
    if state is None:
        return [f"{name}: no toolbar"]
    if any(_overlap(state["bar"], t) for t in state["title"]):
        problems.append(f"{name}: the toolbar covers the title")
    if not state["pressable"]:
        problems.append(f"{name}: the toolbar's buttons are hidden")
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
    if name == "live_model":  # its two charts (layer smoothness, attention) come once the model has run the text
        expect(charts.nth(1)).to_be_attached(timeout=RUN_TIMEOUT_MS)
        wait_for_app(phone)
    elif name != "paper":  # paper: tables only
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
        problems += toolbar_problems(phone, chart, f"{name} / {label}")
        ARTIFACTS.mkdir(exist_ok=True)
        chart.screenshot(path=str(ARTIFACTS / f"phone-{name}-{i}.png"))
    assert not problems, "\n".join(problems)


def test_toolbar_clear_of_titles_on_a_desktop(page, app_url):
    """At 1400 px the Scaling page draws its charts two to a row: a long title reached the toolbar there too."""
    page.goto(app_url + "/scaling")
    wait_for_app(page)
    charts = page.locator(".js-plotly-plot")
    expect(charts.nth(11)).to_be_attached()
    problems = []
    for i in range(charts.count()):
        label = charts.nth(i).locator(".g-gtitle text.gtitle").first.text_content()
        problems += toolbar_problems(page, charts.nth(i), f"scaling / {label}")
    assert not problems, "\n".join(problems)


KATEX_JS = """els => els.filter(e => e.offsetParent !== null).map(e => {
  const b = e.getBoundingClientRect();
  return {text: e.textContent, overflow: e.scrollWidth - e.clientWidth, left: b.left, right: b.right}; })"""


LABEL_STEP_JS = r"""(els, labels) => {
  const shown = els.filter(e => e.offsetParent !== null);
  const spans = shown.flatMap(e => Array.from(e.querySelectorAll('.text')));
  const [a, b] = labels.map(l => spans.find(s => s.textContent.replace(/\s+/g, ' ').trim() === l));
  const size = parseFloat(getComputedStyle(a.closest('.katex')).fontSize);
  return (b.getBoundingClientRect().top - a.getBoundingClientRect().top) / size; }"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_formulas_fit_the_screen(browser, app_url, viewport):
    """Every formula on the Paper page fits the screen, nothing scrolled out of sight: on a phone the per-component
    block puts each label above its closed form and value; on a desktop it keeps them in one row each."""
    context = browser.new_context(viewport=viewport)
    try:
        page = context.new_page()
        page.goto(app_url + "/paper")
        wait_for_app(page)
        expect(page.locator(".katex-display").nth(7)).to_be_attached()  # KaTeX typesets after the page's run
        shown = page.locator(".katex-display").evaluate_all(KATEX_JS)
        assert len(shown) >= 8
        assert not [k for k in shown if k["overflow"] > 2 or k["right"] > viewport["width"]]
        (block,) = [k for k in shown if "word embeddings" in k["text"]]  # shown once, in one of its layouts
        values = {"3,840,000", "1,771,776", "590,592"}  # V·E at E = 128; 3(H²+H) and H²+H at H = 768
        assert all(v in block["text"] for v in values), block["text"]
        # the distance from one component's label to the next, in lines of the formula's font: about one line
        # when label, closed form and value share a row; two and more when the label has a line of its own
        step = page.locator(".katex-display").evaluate_all(LABEL_STEP_JS, ["word embeddings", "position embeddings"])
        assert step >= 2 if viewport is PHONE else step < 1.8, step
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"formulas-{viewport['width']}.png"), full_page=True)
    finally:
        context.close()


TABLES_JS = """els => els.map(el => {
  const s = el.querySelector('.dvn-scroller'), cue = getComputedStyle(el, '::after');
  return s && {wider: s.scrollWidth - s.clientWidth, cue: cue.content === 'none' ? 0 : parseFloat(cue.opacity)}; })"""


@pytest.mark.parametrize("path", ["/paper", "/hardware"])
def test_wide_tables_show_that_they_scroll(phone, app_url, path):
    """A table with columns beyond the screen (the paper's Difference and Note, the Hardware tables) shows a cue at
    its right edge until it is scrolled to its end; a table that fits shows none."""
    phone.goto(app_url + path)
    wait_for_app(phone)
    tables = phone.locator("[data-testid='stDataFrame']")
    expect(phone.locator("[data-testid='stDataFrame'] .dvn-scroller").first).to_be_attached()
    states = tables.evaluate_all(TABLES_JS)
    wide = [i for i, t in enumerate(states) if t and t["wider"] > 1]
    assert wide, states  # the phone hides columns of these pages' tables
    assert all(states[i]["cue"] > 0.9 for i in wide), states
    assert all(t["cue"] == 0 for t in states if t and t["wider"] <= 1), states
    table = tables.nth(wide[0])
    table.scroll_into_view_if_needed()
    table.locator(".dvn-scroller").evaluate("s => { s.scrollLeft = s.scrollWidth; }")
    phone.wait_for_function("el => parseFloat(getComputedStyle(el, '::after').opacity) < 0.1",
                            arg=table.element_handle())  # at its end: nothing more to the right


def test_compare_long_pin_names_leave_the_bars_room(phone, app_url):
    """A config's generated name (and a visitor's long one) is wrapped whole on the bars' axis (issue 42: cut names
    told twins apart only by colour), which keeps the bars most of a phone's width; the full name is in the hover."""
    custom = PRESETS["albert-base"].replace(vocab_size=50_000, num_heads=16)
    long_name = urls.pin_name(urls.encode_pin(custom))
    assert len(long_name) > 40  # "ALBERT H=768 L=12 E=128 all-shared V=50000 heads=16"
    pins = [urls.encode_pin(custom), "albert-base", urls.encode_pin(PRESETS["bert-base"], "a long name of my own"),
            "electra-small-discriminator"]
    phone.goto(app_url + "/compare?pin=" + urllib.parse.quote(urls.encode_pins(pins), safe=",.~"))
    wait_for_app(phone)
    chart = phone.locator(".st-key-compare_bars .js-plotly-plot")
    expect(chart.locator(".main-svg").first).to_be_visible()
    chart.scroll_into_view_if_needed()
    boxes = chart.evaluate(BOXES_JS)
    assert not chart_problems("compare", boxes)
    widths = [a["w"] for a in boxes["area"]]
    assert len(widths) == 3 and min(widths) >= 0.55 * boxes["chart"]["w"], (widths, boxes["chart"]["w"])
    bar = chart.locator(".trace.bars .point path").first  # the first pin's bar, in the first panel
    bar_box = bar.bounding_box()
    phone.mouse.move(bar_box["x"] + 3, bar_box["y"] + bar_box["height"] / 2)
    expect(chart.locator(".hoverlayer .hovertext")).to_contain_text(long_name)


def test_streaming_chart_toolbar_clear_of_its_title(browser, app_url, tmp_path):
    """The Train page's streaming chart (its own page in a frame) keeps its toolbar clear of the title too, and asks
    for a frame tall enough for the chart and the toolbar's strip."""
    index = live_chart.component_dir(tmp_path) / "index.html"
    fig = go.Figure(go.Scatter(x=[0, 100, 200], y=[7.0, 5.5, 5.0], name="ALBERT · training")).update_layout(
        title=dict(text="Validation MLM loss · your runs", x=0, xanchor="left"), height=380,
        margin=dict(l=10, r=10, t=50, b=10))  # the Train page's small margins (ui/train/figures.py)
    context = browser.new_context(viewport={"width": PHONE["width"] - 32, "height": 600})  # the frame on a phone
    try:
        frame = context.new_page()
        frame.goto(index.as_uri())
        frame.evaluate("""fig => { window.asked = [];
            window.addEventListener('message', e => {
                if (e.data.type === 'streamlit:setFrameHeight') window.asked.push(e.data.height); });
            window.postMessage({type: 'streamlit:render', args: {figure: fig, revision: 'r'}}, '*'); }""",
                       fig.to_json())
        chart = frame.locator(".js-plotly-plot")
        expect(chart.locator(".g-gtitle text.gtitle")).to_be_visible()
        assert not toolbar_problems(frame, chart, "streaming chart")
        asked = frame.evaluate("window.asked")
        bottom = chart.evaluate("el => el.getBoundingClientRect().bottom + window.scrollY")
        assert asked and asked[-1] >= bottom, (asked, bottom)  # nothing of the chart below the frame's edge
    finally:
        context.close()


# The text a table's toolbar could cover: headings, sentences, metric labels and values.
TABLE_TOOLBAR_JS = """(el) => {
  const box = e => { const b = e.getBoundingClientRect(); return {l: b.left, t: b.top, r: b.right, b: b.bottom}; };
  const bar = el.closest('[data-testid=stElementContainer]').querySelector('[data-testid=stElementToolbar]');
  if (!bar || bar.getBoundingClientRect().width === 0) return null;
  const t = box(bar);
  const texts = Array.from(document.querySelectorAll(
      'h1, h2, h3, h4, p, li, [data-testid=stMetricValue], [data-testid=stMetricLabel], [data-testid=stMetricDelta]'))
    .filter(e => !bar.contains(e) && !el.contains(e) && (e.innerText || '').trim() && e.getClientRects().length)
    .filter(e => { const range = document.createRange(); range.selectNodeContents(e);  // the text's own boxes
                   return Array.from(range.getClientRects()).some(b => b.width > 0 && b.left < t.r && t.l < b.right
                                                                   && b.top < t.b && t.t < b.bottom); })
    .map(e => (e.innerText || '').trim().slice(0, 40));
  return {bar: t, covered: texts};
}"""


@pytest.mark.parametrize("path", ["/explorer?preset=modernbert-base", "/hardware", "/compare"])
def test_a_tables_toolbar_covers_no_heading_sentence_or_value(phone, app_url, path):
    """Issue 42: on a phone the dataframe toolbar (shown on a tap) covered the heading, the sentence or the metric
    value above a table on the Explorer, Hardware and Compare pages; it sits in a strip above the table."""
    from albert_core.configuration.presets import ALL_PRESETS

    if "preset=" in path:  # the Explorer of an encoder after BERT: its ALBERTize table too
        path = "/explorer?" + urllib.parse.urlencode(urls.config_to_query(ALL_PRESETS["modernbert-base"]))
    phone.goto(app_url + path)
    wait_for_app(phone)
    tables = phone.locator("[data-testid='stDataFrame']")
    expect(phone.locator("[data-testid='stDataFrame'] .dvn-scroller").first).to_be_attached()
    phone.wait_for_timeout(1000)  # the grids drawn after the run
    problems, seen = [], 0
    for i in range(tables.count()):
        table = tables.nth(i)
        if not table.is_visible():  # in a closed expander
            continue
        table.scroll_into_view_if_needed()  # a phone has no hover: the toolbar is always shown
        phone.wait_for_timeout(300)
        state = table.evaluate(TABLE_TOOLBAR_JS)
        if state is None:
            continue
        seen += 1
        problems += [f"table {i}: the toolbar covers {text!r}" for text in state["covered"]]
    assert seen and not problems, problems
