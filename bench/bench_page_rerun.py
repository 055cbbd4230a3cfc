"""Server CPU per rerun of every page when a visitor moves a sidebar slider (a new config each move).

Run: `python -m bench.bench_page_rerun` (prints the dict) or `python -m bench page_rerun`.
`python -m bench.bench_page_rerun --against DIR` also serves a second copy of the app (for example
`git archive main | tar -x -C DIR`) and measures both interleaved, block by block, so that the machine's
load hits both alike; the report then gives each side's medians and their ratio.

A real `streamlit run app.py` (the repo's .streamlit/config.toml) and one websocket client per page that
speaks Streamlit's protocol (`scripts/load_test.py`'s `Visitor`: it sends the full widget state with
each move, as a browser does, and renders nothing). The client opens the page, makes warm-up moves (a
page's first run imports its modules), then blocks of moves; the server process's CPU time (user +
system, all threads, from /proc, ticks of 10 ms) is read before and after each block. The moves are those a
visitor makes first (`MOVES`): the H slider on every page, and L on Compare and Scaling too (an H move rebuilds
more of Scaling than an L move), each step a config the server has not seen (each page and slider starts from a
config series of its own, as each step of the load test does; caches answer only what does not depend on it).

`python -m bench.bench_page_rerun --browser` measures the same moves as Chromium makes them (the slider focused
and moved with the arrow keys, as a visitor does), block by block interleaved with the websocket client's blocks
on the same server, so that the two methods compare on one machine at one load (`browser_vs_client`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

from bench.common import figure, python_yardstick, summary

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "scripts"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import load_test as lt  # noqa: E402

from bench.bench_live_rerun import cpu_seconds  # noqa: E402
from tests.e2e import harness as h  # noqa: E402

GOALS_MS = {"explorer": 50.0, "compare": 50.0, "paper": 50.0, "scaling": 100.0}
# The sliders moved on each page: H everywhere (the browser measurement of issue 34 moved H on every page and found
# Scaling at 130 ms where this bench, moving only L there, said 37), and L where the page charts depth.
MOVES: dict[str, tuple[str, ...]] = {"explorer": ("cfg_H",), "compare": ("cfg_H", "cfg_L"), "paper": ("cfg_H",),
                                     "scaling": ("cfg_H", "cfg_L")}
URL_PATHS = {"explorer": "/", "compare": "/compare", "paper": "/paper", "scaling": "/scaling"}
BLOCKS = 12  # blocks of moves per page (and per server)
PER_BLOCK = 5  # moves per block: 5 moves x ~40 ms = several clock ticks
WARMUP = 3
NOTES = [
    "Where a rerun's CPU went (py-spy on the server while the load-test client moved L on Scaling, "
    "before the changes, ~120 ms a rerun): building the 8 Plotly charts 33 % (Plotly's incremental API: "
    "`update_layout` / `update_yaxes` / `add_hline` go through its relayout machinery, 5-8 ms a chart where "
    "the same figure built from a dict takes 1 ms), the 12 parameter sweeps 13 % (st.cache_data pickled "
    "each frame again on every hit), Streamlit's `gc.collect(2)` after every run (`runner.postScriptGC`) "
    "~10 %, `st.plotly_chart` (to_dict, to_json, element id) ~8 %, the sidebar ~4 %, the rest "
    "Streamlit's message queue and websocket writes. Explorer, Compare and Paper were already under "
    "50 ms once the import heap was frozen (gc.freeze); only the GC setting below touches them.",
    "Changed: Scaling's charts are cached per distinct input (`ui.state.cached_figure`: a digest of the "
    "arguments' values, ~0.3 ms a chart, so a move rebuilds only the charts whose inputs changed), their layout and "
    "axes are set by assignment (identical figures, about half the build time), the sweep frames are "
    "shared (st.cache_resource) instead of unpickled per hit, and the server no longer runs a full "
    "collection after every run (`runner.postScriptGC = false`; the generational collector still runs).",
    "Second round on Scaling (py-spy on the server, L moves, ~120 ms a rerun before it): the ~11 charts an L "
    "move rebuilt 41 % (three quarters of a chart's build was Plotly validating the template embedded in each "
    "figure), the (E, H) heatmap's data 10 % (seven 2-D H x I sweeps of 49 configs each, filtered to the 7 on "
    "the diagonal), st.plotly_chart 13 %, the sidebar 5 %.",
    "Changed: each Scaling chart is a base keyed by what it plots only (`fs.*_base`, cached) plus the current "
    "config's marks added per run (`fs.mark_*` / `with_marks`: the base's dict is not validated again, the marks "
    "are; ~1 ms), so an L move rebuilds only the charts whose data depend on L; sweeps whose charted values do "
    "not depend on depth are keyed at L = G (`any_depth`), the embedding frame narrowed to its charted columns; "
    "the H lines and the (E, H) grid are counted directly (`hidden_frame`, `heatmap_frame`: count_params on "
    "26 and 42 configs); the charts a config change does rebuild (H and L lines, memory bars, the sequence and "
    "batch charts) are built from dicts validated once; the caches key configs and workloads by repr "
    "(`ui.state.CONFIG_HASH_FUNCS`, ~0.01 ms where Streamlit's hasher took ~0.2 ms a call). The 12 charts' JSON "
    "and every caption were checked identical to before for 20 configs and workloads.",
    "Before / after (this bench against main at b8f49c7, interleaved, AMD EPYC, 2 logical CPUs, load average "
    "0.7-0.8): Scaling 109 -> 56 ms per L move (median of the blocks' ratios 0.51); Explorer 53 -> 54, Compare "
    "38 -> 37, Paper 36 -> 35 ms (their pages not changed; each pays the shared sidebar, ~5 ms of py-spy "
    "samples: ~25 widgets of Streamlit's own per-widget work).",
    "Left on Scaling (~55 ms): Streamlit's per-element work (element ids, protobuf, the cross-thread hand-off "
    "and websocket writes, about a quarter), st.plotly_chart's to_dict and to_json of the 12 figures (~0.6 ms "
    "each, Plotly's json engine), the sidebar, Streamlit's hashing of the cached functions' arguments.",
    "Third round, on a host where the goals were missed (Intel Xeon, 2 vCPUs; the code of the AMD EPYC run that "
    "met them measured 75 ms on Explorer here, 1.1x of the later main, so the host and not a regression made the "
    "difference; the yardstick loop is no slower here, 0.4-0.6 s): py-spy on Explorer gave Plotly's validation of "
    "the four figures a rebuilt config needs 25 % (the architecture diagram alone 11.8 ms), on Paper Streamlit's "
    "marshalling of three pandas Stylers 56 % (display values written cell by cell), on Compare its Styler 30 %, "
    "and on every page the sidebar's ~25 widgets 12-24 % (each selectbox and number_input copies the whole session "
    "state, each element wakes the event loop through its self-pipe).",
    "Changed: Explorer's four figures and Scaling's rebuilt ones are written as dicts and wrapped without "
    "validation (`ui.plotly_dicts.figure`; tests require every chart a page sends to equal its validated self); "
    "Paper's tables use the browser's number formats (column_config) instead of Stylers. Before / after, "
    "interleaved against the previous main (median of the blocks' ratios; Intel Xeon, load 0.4-1.8): Explorer "
    "73 -> 53 ms (0.74), Paper 58 -> 44 ms (0.74; 80 -> 58 in a more loaded run, 0.72), Scaling 112 -> 105 ms "
    "(0.97), Compare unchanged (its Styler colours the deltas green and red, which column formats cannot).",
    "Fourth round, for the slower host of the issue (AMD EPYC, yardstick loop 0.95 s, where Explorer took 93 ms): "
    "py-spy on this Intel Xeon found, per rerun, Streamlit's hand-over of each message to the event loop (asyncio's "
    "call_soon_threadsafe writes to a self-pipe twice a message: 12 % of Explorer), Plotly deep-copying every chart "
    "into graph objects and back out again in st.plotly_chart (0.3-0.9 ms a chart, cached ones too), pandas Stylers "
    "(Compare's table 8 ms, Paper's estimate table 4 ms: Streamlit writes their display values cell by cell), "
    "pandas frames built and converted for small per-config tables (Explorer's breakdown 1.8 ms, the fit table's "
    "search 2.3 ms), and every @st.cache_resource in a page script decorated again on each rerun (Streamlit reads "
    "the function's source to key it).",
    "Changed: the server runs on uvloop (Streamlit picks it up when installed; interleaved A/B 0.85-0.97x); charts "
    "are sent as their dicts (`plotly_dicts.TrustedFigure`, cached figures held so); Compare's costs are numbers in "
    "one unit a column with coloured badges for the changes, Paper's tables Arrow tables made once; Explorer's "
    "tables are built from plain columns straight to Arrow and the fit search shares its estimates across device "
    "sizes; Scaling's takeaways come with their cached frames, a charted frame is digested once, the figure cache "
    "is a plain LRU; the pages' caches moved to ui/caches.py; fewer layout elements (Explorer 124 -> 96 messages).",
    "Not measured on the issue's AMD EPYC host. Two projections from this host disagree: the issue's measured "
    "figures there times the before/after ratios measured here (this round's with uvloop's) give Explorer ~32, "
    "Compare ~24, Paper ~33, Scaling ~70 ms, within the goals; ms per Python-yardstick second times its 0.95 s give "
    "68-82, 48-55, 61-68 and 125-143 ms (two runs), but that method put the issue's own Explorer at ~120 ms where 93 ms was measured. The fixed "
    "Streamlit page above is the yardstick to run there: a page's multiple of it is what should carry across hosts.",
    "Method: each page starts from a config series of its own (`load_test.start_query`), as each step of the "
    "load test does; before, Paper moved through Explorer's configs and Scaling through Compare's, and the "
    "shared `cached_result` answered part of their moves.",
]


def move_name(page: str, key: str) -> str:
    return f"{page} {key}"


def moves(pages: list[str]) -> list[tuple[str, str]]:
    """(page, slider key) of every move measured on ``pages``."""
    return [(page, key) for page in pages for key in MOVES[page]]


async def _open(url: str, page: str, series: int) -> lt.Visitor:
    v = lt.Visitor(url.replace("http", "ws") + "/_stcore/stream", page, 0, timeout=120.0, series=series)
    await v.connect()
    await v.open_page(lt.PAGES[page][0])
    return v


async def _block(v: lt.Visitor, pid: int, key: str, n: int) -> float:
    """Milliseconds of server CPU per move over ``n`` moves."""
    c0 = cpu_seconds(pid)
    for _ in range(n):
        await v.move(key)
    return (cpu_seconds(pid) - c0) * 1e3 / n


async def _measure(servers: dict[str, tuple[str, int]], pages: list[str], blocks: int, per_block: int
                   ) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {name: {} for name in servers}
    for i, (page, key) in enumerate(moves(pages)):
        # a config series of its own per page and slider (load_test.start_query): Paper moves H from the same start
        # as Explorer, Scaling L as Compare, and their shared caches (cached_result) would answer those moves
        visitors = {name: await _open(url, page, 1 + i) for name, (url, _) in servers.items()}
        try:
            for name, v in visitors.items():
                await _block(v, servers[name][1], key, WARMUP)
            for _ in range(blocks):  # interleaved: a block on each server in turn
                for name, v in visitors.items():
                    out[name].setdefault(move_name(page, key), []).append(
                        await _block(v, servers[name][1], key, per_block))
            for v in visitors.values():
                if v.errors:
                    raise RuntimeError(f"{page}: {v.errors[:3]}")
        finally:
            for v in visitors.values():
                await v.close()
    return out


def measure(roots: dict[str, Path], pages: list[str], blocks: int = BLOCKS, per_block: int = PER_BLOCK
            ) -> dict[str, dict[str, list[float]]]:
    """Per server (name -> app folder) and page, the server CPU ms per rerun of each block."""
    procs, servers = [], {}
    try:
        for name, root in roots.items():
            port = h.free_port()
            log = h.ARTIFACTS / f"bench_page_rerun_{name}.log"
            saved, h.ROOT = h.ROOT, root
            try:
                proc = h.start_server(port, log)
            finally:
                h.ROOT = saved
            procs.append(proc)
            url = f"http://127.0.0.1:{port}"
            h.wait_healthy(url, proc, timeout=120)
            servers[name] = (url, proc.pid)
        return asyncio.run(_measure(servers, pages, blocks, per_block))
    finally:
        for proc in procs:
            h.stop_server(proc)


BROWSER_BLOCKS = 6
SETTLE_S = 0.3  # after a run ends, both clients wait this long before the next move (what the browser sends after)


def browser_vs_client(pages: list[str], blocks: int = BROWSER_BLOCKS, per_block: int = PER_BLOCK
                      ) -> dict[str, dict[str, list[float]]]:
    """Server CPU ms per move, per block: {"browser": {move: [...]}, "client": {move: [...]}} on one server, the
    two clients' blocks alternating. The browser is Chromium with the slider focused and moved with the arrow keys
    (reversing at the slider's end), waiting for each run to finish; the client is the websocket `Visitor`. Each
    starts from a config series of its own, so neither answers the other's moves from the caches."""
    import threading

    from playwright.sync_api import sync_playwright

    from bench.bench_live_rerun import _settle

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    def run(coro):
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    port = h.free_port()
    url = f"http://127.0.0.1:{port}"
    proc = h.start_server(port, h.ARTIFACTS / "bench_page_rerun_browser.log")
    out: dict[str, dict[str, list[float]]] = {"browser": {}, "client": {}}
    try:
        h.wait_healthy(url, proc, timeout=120)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(**h.launch_kwargs())
            try:
                for i, (page, key) in enumerate(moves(pages)):
                    tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                    tab.goto(f"{url}{URL_PATHS[page]}?{lt.start_query(0, 20 + 2 * i)}")
                    _settle(tab)
                    thumb = tab.locator(f".st-key-{key} input[type='range']")
                    visitor = run(_open(url, page, 21 + 2 * i))
                    direction = "ArrowRight"
                    try:
                        for _ in range(WARMUP):
                            direction = _browser_move(tab, thumb, direction)
                            run(_client_move(visitor, key))
                        for _ in range(blocks):
                            c0 = cpu_seconds(proc.pid)
                            for _ in range(per_block):
                                direction = _browser_move(tab, thumb, direction)
                            out["browser"].setdefault(move_name(page, key), []).append(
                                (cpu_seconds(proc.pid) - c0) * 1e3 / per_block)
                            c0 = cpu_seconds(proc.pid)
                            for _ in range(per_block):
                                run(_client_move(visitor, key))
                            out["client"].setdefault(move_name(page, key), []).append(
                                (cpu_seconds(proc.pid) - c0) * 1e3 / per_block)
                        if visitor.errors:
                            raise RuntimeError(f"{page}: {visitor.errors[:3]}")
                    finally:
                        run(visitor.close())
                        tab.context.close()
            finally:
                browser.close()
    finally:
        h.stop_server(proc)
        loop.call_soon_threadsafe(loop.stop)
    return out


def _browser_move(tab, thumb, direction: str) -> str:
    """One arrow-key move of the focused slider, waiting for its run; the direction of the next move (reversed at
    the slider's end)."""
    from bench.bench_live_rerun import _settle

    before = thumb.input_value()
    thumb.focus()
    thumb.press(direction)
    _settle(tab, SETTLE_S)
    if thumb.input_value() == before:
        return "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
    return direction


async def _client_move(visitor: lt.Visitor, key: str) -> None:
    await visitor.move(key)
    await asyncio.sleep(SETTLE_S)


def run_browser(pages: list[str]) -> dict:
    """The browser's moves beside the websocket client's, with the fixed Streamlit page as the host's yardstick."""
    load0 = os.getloadavg()[0]
    fixed = summary(streamlit_yardstick())
    data = browser_vs_client(pages)
    load1 = os.getloadavg()[0]
    figures = [figure(f"machine yardstick: {STREAMLIT_YARDSTICK_NAME}", fixed, "ms")]
    for move in data["browser"]:
        page, key = move.split()
        b, c = summary(data["browser"][move]), summary(data["client"][move])
        ratios = [x / y for x, y in zip(data["browser"][move], data["client"][move], strict=True) if y]
        goal = GOALS_MS[page]
        figures.append(figure(
            f"{page.capitalize()} rerun after a {key.removeprefix('cfg_')} move made in Chromium, server CPU", b, "ms",
            goal=f"<= {goal:.0f}", met=b["median"] <= goal,
            reason=f"median of {len(data['browser'][move])} blocks of {PER_BLOCK} arrow-key moves; the websocket "
                   f"client's blocks between them: {c['median']:.0f} ms (browser / client, median of the blocks' "
                   f"ratios: {statistics.median(ratios):.2f}); {b['median'] / fixed['median']:.1f}x the fixed "
                   "page's rerun"))
    return {"title": "Page reruns as the browser makes them (server CPU)", "figures": figures, "raw_ms": data,
            "notes": [f"CPU {_cpu()}; load average (1 min) {load0:.1f} at the start, {load1:.1f} at the end.",
                      f"Both clients wait {SETTLE_S} s after each run, so the server's idle work between moves "
                      "counts alike in both."]}


# A fixed Streamlit page (no project code): its rerun's server CPU is a yardstick of the host for what a rerun is
# made of (Streamlit's per-element work, protobuf, the event loop's hand-offs and websocket writes: syscalls, which
# a plain Python loop does not time). A page's ms divided by it compares hosts better than the Python loop does.
# Never change it (figures of different versions do not compare); make a new one with a new name instead.
STREAMLIT_YARDSTICK_APP = """
import streamlit as st

with st.sidebar:
    st.slider("H", 64, 8192, 768, step=64, key="cfg_H")
    for i in range(10):
        st.number_input(f"n{i}", 0, 1000, i, key=f"n{i}")
    for i in range(10):
        st.selectbox(f"s{i}", ["a", "b", "c"], key=f"s{i}")
h = st.session_state["cfg_H"]
for i in range(60):
    st.markdown(f"**{i}**: H = {h * i:,}")
left, right = st.columns(2)
left.dataframe({"a": list(range(20)), "b": [h] * 20})
right.json({"H": h})
"""
STREAMLIT_YARDSTICK_NAME = "fixed Streamlit page v1 (21 widgets, 60 markdown elements, a table), server CPU per rerun"


def streamlit_yardstick(blocks: int = BLOCKS, per_block: int = PER_BLOCK) -> list[float]:
    """Server CPU ms per rerun of `STREAMLIT_YARDSTICK_APP`, per block of slider moves (served with this repo's
    .streamlit/config.toml, as the app is)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="streamlit_yardstick_") as tmp:
        root = Path(tmp)
        (root / "app.py").write_text(STREAMLIT_YARDSTICK_APP)
        (root / ".streamlit").mkdir()
        shutil.copy(ROOT / ".streamlit" / "config.toml", root / ".streamlit" / "config.toml")
        port = h.free_port()
        saved, h.ROOT = h.ROOT, root
        try:
            proc = h.start_server(port, h.ARTIFACTS / "bench_page_rerun_yardstick.log")
        finally:
            h.ROOT = saved
        try:
            url = f"http://127.0.0.1:{port}"
            h.wait_healthy(url, proc, timeout=120)

            async def go() -> list[float]:
                v = await _open(url, "explorer", 0)  # the page at "/", its slider keyed cfg_H
                try:
                    await _block(v, proc.pid, "cfg_H", WARMUP)
                    return [await _block(v, proc.pid, "cfg_H", per_block) for _ in range(blocks)]
                finally:
                    await v.close()

            return asyncio.run(go())
        finally:
            h.stop_server(proc)


def _cpu() -> str:
    from bench.common import machine

    info = machine()
    return f"{info['cpu']}, {info['logical_cpus']} logical CPUs"


def run(against: Path | None = None, pages: list[str] | None = None, label: str | None = None) -> dict:
    """``against`` and ``label`` default to $BENCH_PAGE_RERUN_AGAINST (a folder) and
    $BENCH_PAGE_RERUN_LABEL (what it is, e.g. "before the change, commit 6cc8daf"), so that
    `python -m bench page_rerun` can measure a before/after too."""
    if not Path("/proc/self/stat").exists():
        raise RuntimeError("needs Linux /proc to read the server's CPU time")
    if against is None and os.environ.get("BENCH_PAGE_RERUN_AGAINST"):
        against = Path(os.environ["BENCH_PAGE_RERUN_AGAINST"])
    label = label or os.environ.get("BENCH_PAGE_RERUN_LABEL") or "the other copy"
    pages = pages or list(GOALS_MS)
    roots = {"this": ROOT} | ({"other": against} if against else {})
    load0 = os.getloadavg()[0]
    yard_s = python_yardstick()
    fixed = summary(streamlit_yardstick())
    data = measure(roots, pages)
    load1 = os.getloadavg()[0]
    figures = [figure("machine yardstick: 10 M iterations of a plain Python loop (CPU time, best of 3)",
                      yard_s * 1e3, "ms",
                      reason="a rerun's ms divided by this figure in seconds compares hosts: a slower 2-vCPU AMD "
                      "EPYC host ran a plain 10 M-iteration loop in about 0.95 s and its Explorer rerun took 93 ms, "
                      "about 98 ms per yardstick second"),
               figure(f"machine yardstick: {STREAMLIT_YARDSTICK_NAME}", fixed, "ms",
                      reason="the same kind of work as a page's rerun, without this project's code: a page's ms "
                      "divided by this one (below, per page) compares hosts, including what a rerun spends in "
                      "system calls")]
    for page, key in moves(pages):
        move = move_name(page, key)
        stats = summary(data["this"][move])
        goal = GOALS_MS[page]
        note = f"median of {BLOCKS} blocks of {PER_BLOCK} moves of {key}"
        if against:
            other = summary(data["other"][move])
            ratios = [a / b for a, b in zip(data["this"][move], data["other"][move], strict=True) if b]
            note += (f"; {label}, interleaved: {other['median']:.0f} ms (now / then, median of the blocks' "
                     f"ratios: {statistics.median(ratios):.2f})")
        note += (f"; {stats['median'] / yard_s:.0f} ms per yardstick second; "
                 f"{stats['median'] / fixed['median']:.1f}x the fixed page's rerun")
        figures.append(figure(f"{page.capitalize()} rerun after a {key.removeprefix('cfg_')} move (new config), server CPU",
                              stats,
                              "ms", goal=f"<= {goal:.0f}", met=stats["median"] <= goal, reason=note))
    return {
        "title": "Page reruns (server CPU)",
        "figures": figures,
        "raw_ms": data,
        "notes": ["A real server and one websocket client per page speaking Streamlit's protocol (no browser); "
                  "server CPU time (all threads) from /proc per block of moves, divided by the moves. Every "
                  "move is a config the server has not computed before.",
                  f"CPU {_cpu()}; load average (1 min) {load0:.1f} at the start, {load1:.1f} at the end (a shared host: "
                  "CPU time, not wall time, is the figure; with a second copy the blocks alternate between "
                  "the two servers so the load hits both alike).",
                  *NOTES],
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, help="a second copy of the app to measure interleaved")
    ap.add_argument("--label", help="what the second copy is, for the report")
    ap.add_argument("--pages", default=",".join(GOALS_MS), help="comma-separated pages")
    ap.add_argument("--browser", action="store_true",
                    help="measure the moves as Chromium makes them, beside the websocket client's")
    args = ap.parse_args()
    pages = args.pages.split(",")
    print(json.dumps(run_browser(pages) if args.browser else run(args.against, pages, args.label), indent=2))
