"""Load test (not part of CI): server capacity, measured with websocket clients that speak Streamlit's protocol.

No browser: each simulated visitor is one websocket to `/_stcore/stream` that sends the same `BackMsg`
a browser sends (a `rerun_script` with the query string, the page and the state of every widget on the
page) and reads the `ForwardMsg`s back until the run's `script_finished`. So the latency is the
server's: from sending a widget change to receiving the last message of the rerun it caused, with no
rendering in it, and the client costs a few ms of CPU per rerun (reported as `client_cpu_s`).

For each number of sessions (default 1, 10, 20) and each page, S sessions open the page at once (a
different config each: the server sees many distinct configs), then each one moves a widget of that
page `--moves` times, closed-loop (the next move as soon as the previous rerun has finished). Between
the page loads and the end of the moves the server's CPU time is read (psutil, every Streamlit
process), so `server_cpu_s_per_rerun` is the moves' cost only. The server's RSS is sampled all the
time. Everything is bounded: per rerun (`--rerun-timeout`), per step and overall (`--time-limit`);
clients connect to loopback only.

    .venv/bin/python scripts/load_test.py --sessions 1,10,20 --pages all --json docs/load-test.json
    .venv/bin/python scripts/load_test.py --sessions 1,10 --pages explorer --moves 3     # a quick look
    .venv/bin/python scripts/load_test.py --processes 1,2 --pages explorer,scaling        # 1 vs 2 behind nginx

With `--processes N` (N >= 2) it serves the app with `deploy/serve_many.sh` (N Streamlit processes
behind nginx, sticky by cookie) and measures through nginx. Goals: 0 errors, p95 < 1 s at 10 sessions.

Beside the steps, on the first server: `--lab-visitors N` Train-page visitors (`--probe`: their runs probed),
`--attackers M` repeating issue 18's hostile lab requests, `--live-visitors K` Live-model visitors on family
presets moving the sidebar's L (each move builds a model), and `--envelope 1200MiB` makes the peak RSS per process
a goal (docs/load-test.md, "the memory envelope"):

    .venv/bin/python scripts/load_test.py --sessions 10 --pages all --processes 1 --memory-budget 512MiB \
        --live-visitors 3 --lab-visitors 2 --probe --attackers 2 --envelope 1200MiB
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Page -> (url path, widget keys its visitors move). The sidebar (config) is on every page; the Live
# model page moves its own layer / head inputs (a sidebar change there rebuilds the model).
PAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "explorer": ("", ("cfg_H",)),  # the default page: its URL is "/"
    "compare": ("compare", ("cfg_L",)),
    "paper": ("paper", ("cfg_H",)),
    "scaling": ("scaling", ("cfg_L",)),
    "live_model": ("live_model", ("live_layer", "live_head")),
}
GOALS = {"errors": 0, "p95_s": 1.0, "p95_sessions": 10, "rss_bytes": 1.5e9}
WIDGETS = ("slider", "selectbox", "number_input", "checkbox", "radio", "text_input", "text_area", "multiselect")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


# ----------------------------------------------------------------------------- protocol (pure)

def widget_state(kind: str, proto: Any):
    """The `WidgetState` a browser reports for a widget element as the server last sent it, or None
    for a widget whose state this client does not model (the server then keeps its previous value)."""
    from streamlit.proto.NumberInput_pb2 import NumberInput
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=proto.id)
    if kind == "slider":
        if proto.options:  # select_slider: not used by this app
            return None
        state.double_array_value.data.extend(proto.value if proto.set_value else proto.default)
    elif kind == "number_input":
        value = proto.value if proto.set_value else proto.default
        if proto.data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    elif kind in ("checkbox",):
        state.bool_value = proto.value if proto.set_value else proto.default
    elif kind in ("text_input", "text_area"):
        state.string_value = proto.value if proto.set_value else proto.default
    elif kind in ("selectbox", "radio"):
        if proto.set_value:
            state.string_value = proto.raw_value
        elif 0 <= proto.default < len(proto.options):
            state.string_value = proto.options[proto.default]
        else:
            return None
    elif kind == "multiselect":
        values = proto.raw_values if proto.set_value else [proto.options[i] for i in proto.default]
        state.string_array_value.data.extend(values)
    else:
        return None
    return state


def merge_states(states: dict[str, Any], sent: dict[str, tuple[str, Any]], full_run: bool) -> dict[str, Any]:
    """The widget states a browser holds after a run that sent the widgets ``sent`` (id -> (kind, proto)).

    As Streamlit's frontend does: a widget it already shows keeps the value the visitor gave it unless
    the server sets one (``set_value``, e.g. from session state); a new widget id starts at the value
    or default the server sent. After a full run only the widgets it sent remain; a fragment run
    replaces only its own."""
    out = {} if full_run else dict(states)
    for wid, (kind, proto) in sent.items():
        if wid in states and not proto.set_value:
            out[wid] = states[wid]
            continue
        state = widget_state(kind, proto)
        if state is not None:
            out[wid] = state
    return out


CACHE_ENTRIES = 200  # messages a visitor keeps for references (the server only refers to ones reported)


def remember(cache: dict[str, bytes], key: str, raw: bytes, limit: int = CACHE_ENTRIES) -> None:
    """Keep ``raw`` under ``key`` as the most recently used entry; drop the least recently used ones
    beyond ``limit``."""
    cache.pop(key, None)
    cache[key] = raw
    while len(cache) > limit:
        del cache[next(iter(cache))]


def user_key(widget_id: str) -> str | None:
    """The user key of a widget id (`$$ID-<hash>-<key>`), None for a widget without a key."""
    head, sep, key = widget_id.partition("-")
    if not sep or not head.startswith("$$ID"):
        return None
    key = key.partition("-")[2]
    return key or None


def next_value(kind: str, proto: Any, current: Any, direction: int) -> tuple[Any, int]:
    """A visitor's next move on a widget from ``current``: one step in ``direction`` (+1 / -1), turning
    back at the ends. Returns (value, direction). Sliders and number inputs step; selectboxes and
    radios go to the neighbouring option."""
    if kind in ("slider", "number_input"):
        step = proto.step or 1
        lo, hi = proto.min, proto.max
        if kind == "number_input" and not (proto.has_min and proto.has_max):
            lo, hi = float("-inf"), float("inf")
        value = current + direction * step
        if not lo <= value <= hi:
            direction = -direction
            value = current + direction * step
        if not lo <= value <= hi:  # a one-value range: nothing to move
            raise ValueError(f"widget {proto.id!r}: no room to move from {current}")
        return value, direction
    if kind in ("selectbox", "radio"):
        options = list(proto.options)
        if len(options) < 2:
            raise ValueError(f"widget {proto.id!r}: fewer than two options")
        i = options.index(current) + direction
        if not 0 <= i < len(options):
            direction = -direction
            i = options.index(current) + direction
        return options[i], direction
    raise ValueError(f"widget kind {kind!r} cannot be moved by the load test")


def state_value(kind: str, state) -> Any:
    """The scalar a move changes, read from a `WidgetState`."""
    if kind == "slider":
        return state.double_array_value.data[0]
    if kind == "number_input":
        return state.int_value if state.WhichOneof("value") == "int_value" else state.double_value
    return state.string_value


def set_state_value(kind: str, state, value: Any) -> None:
    if kind == "slider":
        del state.double_array_value.data[:]
        state.double_array_value.data.append(value)
    elif kind == "checkbox":
        state.bool_value = bool(value)
    elif kind == "number_input" and state.WhichOneof("value") == "int_value":
        state.int_value = int(value)
    elif kind == "number_input":
        state.double_value = value
    else:
        state.string_value = value


def start_query(index: int, series: int = 0) -> str:
    """A different config per session: hidden size 256 + 64 i (heads H/64, I = 4H), within the sliders.
    ``series`` sets the token types T = 2 + series: it changes no page's work, but keeps the configs of
    one step (or page) apart from every other's, so that no move is answered from the caches another
    step, page or the warm-up filled (Paper moves H from the same start as Explorer, Scaling L as Compare)."""
    hidden = 256 + 64 * (index % 12)
    return f"H={hidden}&heads={hidden // 64}&I={4 * hidden}&T={2 + series}"


def check_loopback(url: str) -> None:
    host = urlparse(url).hostname
    if host not in LOOPBACK:
        raise ValueError(f"--url must be on loopback (127.0.0.1, localhost or ::1), not {host!r}")


# ----------------------------------------------------------------------------- one visitor

@dataclass
class Widget:
    kind: str
    proto: Any
    fragment_id: str


@dataclass
class Visitor:
    """One websocket session driven like a browser tab."""

    ws_url: str
    page: str
    index: int
    timeout: float
    series: int = 0  # start_query's: which step (or page) this session belongs to
    cookie: str = field(default_factory=lambda: uuid.uuid4().hex)
    query_string: str = ""
    page_script_hash: str = ""
    widgets: dict[str, Widget] = field(default_factory=dict)
    states: dict[str, Any] = field(default_factory=dict)
    directions: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)  # st.error / st.warning texts the pages showed
    buttons: dict[str, Widget] = field(default_factory=dict)
    attempts: int = 0
    stopped: bool = False
    busy_moves: int = 0  # moves not made: the page answered "the server is busy" instead of drawing the widget
    ws: Any = None
    # Large messages the server marked cacheable, by hash: reported back with each rerun, as the
    # browser does, so the server may send a reference instead of an unchanged message.
    cache: dict[str, bytes] = field(default_factory=dict)
    cache_refs: int = 0

    async def connect(self) -> None:
        import websockets

        # The cookie stands for the one a browser gets from the proxy on its first page load
        # (deploy/nginx.conf.template keys its sticky upstream on it); a direct server ignores it.
        self.ws = await websockets.connect(
            self.ws_url, subprotocols=["streamlit"], max_size=64 * 2**20, open_timeout=self.timeout,
            additional_headers={"Cookie": f"albert_backend={self.cookie}"}, compression=None,
            ping_interval=None,
        )

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()

    async def rerun(self, fragment_id: str = "", page_name: str = "") -> float:
        """Send one rerun request with the current widget states; seconds until its script_finished."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        cs.page_script_hash = self.page_script_hash
        cs.page_name = page_name
        cs.fragment_id = fragment_id
        cs.widget_states.widgets.extend(self.states.values())
        cs.cached_message_hashes.extend(self.cache)
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        seen: dict[str, Widget] = {}
        deadline = t0 + self.timeout
        status = None
        while status is None:
            status = self._receive(await asyncio.wait_for(self.ws.recv(), max(0.01, deadline - time.perf_counter())),
                                   seen)
        elapsed = time.perf_counter() - t0
        self._finish_run(seen, status)
        return elapsed

    def _receive(self, raw: bytes, seen: dict[str, Widget]) -> int | None:
        """Handle one ForwardMsg (widgets into ``seen``); the run's finish status when it ends the run."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        fwd = ForwardMsg()
        fwd.ParseFromString(raw)
        kind = fwd.WhichOneof("type")
        if kind == "ref_hash":  # an unchanged cached message: use the copy received before
            ref = fwd.ref_hash
            if ref not in self.cache:
                self.errors.append(f"reference to a message never received: {ref[:12]}")
                return None
            self.cache_refs += 1
            remember(self.cache, ref, self.cache[ref])
            fwd = ForwardMsg()
            fwd.ParseFromString(self.cache[ref])
            kind = fwd.WhichOneof("type")
        elif fwd.metadata.cacheable and fwd.hash:
            remember(self.cache, fwd.hash, raw)
        if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
            element = fwd.delta.new_element
            which = element.WhichOneof("type")
            if which == "exception":
                self.errors.append(f"exception on the page: {element.exception.type}: "
                                   f"{element.exception.message[:120]}")
            elif which in WIDGETS:
                proto = getattr(element, which)
                seen[proto.id] = Widget(which, proto, fwd.delta.fragment_id)
            elif which == "button":
                self.buttons[element.button.id] = Widget(which, element.button, fwd.delta.fragment_id)
            elif which == "alert" and element.alert.format in (1, 2):  # ERROR, WARNING
                self.alerts.append(element.alert.body[:200])
        elif kind == "page_info_changed":
            self.query_string = fwd.page_info_changed.query_string
        elif kind == "navigation":
            self.page_script_hash = fwd.navigation.page_script_hash
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {fwd.page_not_found.page_name!r}")
        elif kind == "script_finished":
            # FINISHED_EARLY_FOR_RERUN: the app asked for a rerun itself; wait for that one.
            if fwd.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                self.errors.append("script compile error")
            return None if fwd.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN else fwd.script_finished
        return None

    def _finish_run(self, seen: dict[str, Widget], status: int) -> None:
        """After a full run the page's widgets are the ones it sent; a fragment run replaces its own."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        full_run = status != ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
        if full_run:
            self.widgets.clear()
        self.widgets.update(seen)
        self.states = merge_states(self.states, {wid: (w.kind, w.proto) for wid, w in seen.items()}, full_run)

    async def drain(self, quiet: float = 0.3, limit: float = 10.0) -> None:
        """Handle messages until the server has been quiet for ``quiet`` seconds (at most ``limit`` in
        all): a follow-up run the app started itself must not be timed as the next move, and its
        widgets count."""
        end = time.perf_counter() + limit
        seen: dict[str, Widget] = {}
        with contextlib.suppress(TimeoutError):
            while time.perf_counter() < end:
                status = self._receive(await asyncio.wait_for(self.ws.recv(), quiet), seen)
                if status is not None:
                    self._finish_run(seen, status)
                    seen = {}

    async def open_page(self, url_path: str) -> None:
        """Load the page as a browser does: the first rerun names the page and carries the URL's query."""
        self.query_string = start_query(self.index, self.series)
        await self.rerun(page_name=url_path)
        await self.drain()

    def find(self, key: str) -> str:
        for wid in self.widgets:
            if user_key(wid) == key:
                return wid
        raise KeyError(f"no widget with key {key!r} on the page")

    def set_value(self, key: str, value: Any) -> None:
        """Type or choose ``value`` in the widget with user key ``key`` (sent with the next rerun)."""
        wid = self.find(key)
        set_state_value(self.widgets[wid].kind, self.states[wid], value)

    async def press(self, key: str) -> float:
        """Click the button with user key ``key``: one rerun carrying its trigger, as a browser sends it."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = next((b for b in self.buttons if user_key(b) == key), None)
        if wid is None:
            raise KeyError(f"no button with key {key!r} on the page")
        if self.buttons[wid].proto.disabled:
            self.alerts.append(f"button {key!r} disabled")
        self.states[wid] = WidgetState(id=wid, trigger_value=True)
        try:
            return await self.rerun()
        finally:
            self.states.pop(wid, None)

    async def move(self, key: str) -> float:
        wid = self.find(key)
        w = self.widgets[wid]
        state = self.states[wid]
        value, self.directions[wid] = next_value(w.kind, w.proto, state_value(w.kind, state),
                                                 self.directions.get(wid, 1))
        set_state_value(w.kind, state, value)
        return await self.rerun(fragment_id=w.fragment_id)


# ----------------------------------------------------------------------------- server side

class ServerProbe:
    """CPU time and peak RSS of the serving processes (Streamlit and, behind a proxy, nginx)."""

    def __init__(self, pids: list[int], every: float = 0.2):
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.every = every
        self.peak = 0  # since the last reset (each measured step resets it)
        self.overall = 0  # the whole run's
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        import psutil

        total = 0
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        self.peak = max(self.peak, total)
        self.overall = max(self.overall, total)
        return total

    def cpu_each(self) -> list[float]:
        """CPU seconds (user + system) used so far by each process."""
        import psutil

        out = []
        for p in self.procs:
            try:
                t = p.cpu_times()
                out.append(t.user + t.system + t.children_user + t.children_system)
            except psutil.Error:
                out.append(0.0)
        return out

    def cpu(self) -> float:
        return sum(self.cpu_each())

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.rss()

    def __enter__(self) -> ServerProbe:
        self.rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Server:
    url: str
    pids: list[int]
    stop: Any


def start_servers(processes: int, log_dir: Path, env: dict[str, str] | None = None) -> Server:
    """One `streamlit run` (processes == 1) or `deploy/serve_many.sh` (N processes behind nginx)."""
    import psutil

    from tests.e2e.harness import free_port, start_server, stop_server, wait_healthy

    port = free_port()
    if processes == 1:
        proc = start_server(port, log_dir / "load-test-server.log", extra_env=env)
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, timeout=120)
        return Server(url, [proc.pid], lambda: stop_server(proc))
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        raise FileNotFoundError("nginx is not installed (apt-get install -y nginx)")
    run_dir = log_dir / f"serve-many-{processes}"
    backends: list[int] = []
    while len(backends) < processes:
        if (p := free_port()) not in backends and p != port:
            backends.append(p)
    run_env = {**os.environ, **(env or {}), "PYTHON": sys.executable, "RUN_DIR": str(run_dir),
               "BACKEND_PORTS": " ".join(map(str, backends))}
    log = open(log_dir / f"serve-many-{processes}.log", "w")  # noqa: SIM115 - closed in stop()
    proc = subprocess.Popen(["bash", str(ROOT / "deploy" / "serve_many.sh"), str(processes), str(port)],
                            cwd=ROOT, env=run_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for p in backends:  # nginx answers as soon as one backend is up: wait for each of them
            wait_healthy(f"http://127.0.0.1:{p}", proc, timeout=180)
        wait_healthy(url, proc, timeout=60)
    except Exception:
        _stop_group(proc)
        log.close()
        raise
    pids = [k.pid for k in psutil.Process(proc.pid).children(recursive=True)
            if "streamlit" in " ".join(k.cmdline()) or k.name().startswith("nginx")]

    def stop() -> None:
        _stop_group(proc)
        log.close()

    return Server(url, pids, stop)


def _stop_group(proc: subprocess.Popen) -> None:
    """Stop serve_many.sh: it traps TERM and stops its Streamlit processes and nginx."""
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        proc.wait()


# ----------------------------------------------------------------------------- lab visitors and attackers

# A lab visitor opens Train, types seeds of its own (runs nobody else asked for) and presses Train; the
# attackers repeat issue 18's hostile requests: a sidebar size whose vocabulary the lab ships no tokenizer
# for (checked from a table before any work, never trained in the click), and five seeds of 3,000 steps
# (more runs than one visitor's share of the queue).
ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "unshipped vocabulary": ("family=albert&V=20000&E=16&H=64&L=1&heads=1&I=256&P=128&batch=1&seq=64&sharing=all",
                             {"train_size": "The sidebar's size"}),
    "five seeds": ("", {"train_seeds": "11, 12, 13, 14, 15", "train_steps": 3000}),
}
# --vocabularies: one visitor per vocabulary size asks for short runs at the sidebar's size with that V, a
# vocabulary the lab ships no tokenizer for: the worker trains the tokenizers and tokenizes the corpus once per
# vocabulary (the process-wide caches keep a few), which is the memory this measures.
VOCABULARY_QUERY = "family=albert&V={v}&E=16&H=64&L=1&heads=1&I=256&P=128&batch=1&seq=64&sharing=all"
VOCABULARY_RUN = {"train_size": "The sidebar's size", "train_steps": 100}
MAX_VOCABULARIES = 8
WATCH_EVERY_S = 5.0  # a lab visitor's page reruns this often while its runs train (it keeps "watching")


async def lab_visitor(ws_url: str, index: int, timeout: float, done: asyncio.Event, query: str,
                      values: dict[str, Any]) -> Visitor:
    """One visitor of the Train page: open it (with ``query``), set ``values``, press Train, then rerun
    the page every `WATCH_EVERY_S` until ``done``. Errors and the page's error/warning texts are kept."""
    v = Visitor(ws_url, "train", 1000 + index, timeout)
    try:
        await v.connect()
        v.query_string = query
        await v.rerun(page_name="train")
        await v.drain()
        for key, value in values.items():
            w = v.widgets[v.find(key)]
            if w.kind in ("radio", "selectbox"):  # a choice by the start of its label
                value = next(o for o in w.proto.options if o.startswith(value))
            v.set_value(key, value)
            await v.rerun()
            await v.drain()
        v.latencies.append(await v.press("train_submit"))
        await v.drain()
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), WATCH_EVERY_S)
            v.latencies.append(await v.rerun())
            await v.drain(limit=2.0)
    except Exception as exc:  # noqa: BLE001 - counted
        v.errors.append(f"lab visitor {index}: {_short(exc)}")
    finally:
        await v.close()
    return v


def lab_plans(visitors: int, attackers: int, vocabularies: Sequence[int] = (), probe: bool = False
              ) -> list[tuple[str, dict[str, Any]]]:
    """(query, widget values) of each lab visitor: ``visitors`` with two seeds of their own (the page's default
    twins and steps; with ``probe`` each run then fine-tuned on movie reviews, the downstream probe), ``attackers``
    repeating the `ATTACKS` in turn, one per entry of ``vocabularies``."""
    own = {"train_probe": True} if probe else {}
    plans = [("", {"train_seeds": f"{100 + 2 * i}, {101 + 2 * i}", **own}) for i in range(visitors)]
    names = list(ATTACKS)
    plans += [ATTACKS[names[j % len(names)]] for j in range(attackers)]
    plans += [(VOCABULARY_QUERY.format(v=v), {**VOCABULARY_RUN, "train_seeds": str(200 + j)})
              for j, v in enumerate(vocabularies)]
    return plans


async def lab_scenario(ws_url: str, visitors: int, attackers: int, timeout: float, done: asyncio.Event,
                       vocabularies: Sequence[int] = (), probe: bool = False) -> dict:
    """The `lab_plans` visitors, all at once, until ``done``."""
    plans = lab_plans(visitors, attackers, vocabularies, probe)
    names = list(ATTACKS)
    out = await asyncio.gather(*(lab_visitor(ws_url, i, timeout, done, q, vals) for i, (q, vals) in enumerate(plans)))
    return {
        "lab_visitors": visitors, "probe": probe, "attackers": attackers, "vocabularies": list(vocabularies),
        "attacks": [names[j % len(names)] for j in range(attackers)], **_summary(out),
    }


def _summary(visitors: Sequence[Visitor]) -> dict[str, Any]:
    lat = [x for v in visitors for x in v.latencies]
    return {
        "errors": sum(len(v.errors) for v in visitors),
        "error_samples": sorted({e for v in visitors for e in v.errors})[:5],
        "page_messages": sorted({a for v in visitors for a in v.alerts}),
        "reruns": len(lat), "p50_s": round(statistics.median(lat), 3) if lat else None,
        "p95_s": round(percentile(lat, 0.95), 3) if lat else None, "max_s": round(max(lat), 3) if lat else None,
    }


# Live-model visitors on family presets (issue 40): each opens the Live model page on a preset of its own and moves
# the sidebar's L every LIVE_PAUSE_S after its previous rerun has finished, so every move builds, runs, times and
# measures (the saved-activation pass) a model of its own: the visitors whose models once outlived them. The presets
# are ones the Docker image's 512 MiB budget builds (BERT-base takes most of it).
LIVE_PRESETS = ("ettin-encoder-17m", "electra-small-discriminator", "albert-base", "bert-base", "ettin-encoder-32m")
LIVE_PAUSE_S = 2.0


def live_query(preset: str) -> str:
    """The Live model page's URL query of ``preset`` (the sidebar's config travels in the URL)."""
    from urllib.parse import urlencode

    from albert_core.configuration.presets import ALL_PRESETS
    from ui.urls import config_to_query

    return urlencode(config_to_query(ALL_PRESETS[preset]))


async def live_visitor(ws_url: str, index: int, timeout: float, done: asyncio.Event, preset: str) -> Visitor:
    """One Live-model visitor on ``preset``: open the page, then move L until ``done`` (a pause after each rerun)."""
    v = Visitor(ws_url, "live_model", 2000 + index, timeout)
    try:
        await v.connect()
        v.query_string = live_query(preset)
        await v.rerun(page_name="live_model")
        await v.drain()
        while not done.is_set():
            v.latencies.append(await v.move("cfg_L"))
            await v.drain(limit=2.0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), LIVE_PAUSE_S)
    except Exception as exc:  # noqa: BLE001 - counted
        v.errors.append(f"live visitor {index} ({preset}): {_short(exc)}")
    finally:
        await v.close()
    return v


async def live_scenario(ws_url: str, visitors: int, timeout: float, done: asyncio.Event) -> dict:
    """``visitors`` Live-model visitors on `LIVE_PRESETS` in turn, all at once, until ``done``."""
    presets = [LIVE_PRESETS[i % len(LIVE_PRESETS)] for i in range(visitors)]
    out = await asyncio.gather(*(live_visitor(ws_url, i, timeout, done, p) for i, p in enumerate(presets)))
    return {"live_visitors": visitors, "presets": presets, "moves_each": [len(v.latencies) for v in out],
            **_summary(out)}


# ----------------------------------------------------------------------------- measurement

def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 1]) of a non-empty list."""
    if not values:
        raise ValueError("percentile of no values")
    xs = sorted(values)
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0][:160] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def run_step(ws_url: str, page: str, sessions: int, moves: int, timeout: float, budget: float,
                   probe: ServerProbe | None, series: int = 0) -> dict[str, Any]:
    """S sessions open ``page`` together (configs of `start_query`'s ``series``), then move its widgets
    ``moves`` times each."""
    url_path, keys = PAGES[page]
    visitors = [Visitor(ws_url, page, i, timeout, series=series) for i in range(sessions)]
    t_start = time.perf_counter()

    async def load(v: Visitor) -> None:
        try:
            await v.connect()
            await v.open_page(url_path)
        except Exception as exc:  # noqa: BLE001 - counted, the step goes on without this session
            v.errors.append(f"page load: {_short(exc)}")

    soft_end = t_start + budget  # no move starts after this; moves under way finish (each <= timeout)

    async def drive(v: Visitor) -> None:
        for i in range(moves):
            if time.perf_counter() > soft_end:
                return
            v.attempts += 1
            try:
                v.latencies.append(await v.move(keys[i % len(keys)]))
            except KeyError as exc:
                if any("server is busy" in a for a in v.alerts):  # the designed answer to a full budget, not an error
                    v.busy_moves, v.stopped = moves - i, True
                    return
                v.errors.append(f"move {i}: {_short(exc)}")
                v.stopped = True
                return
            except Exception as exc:  # noqa: BLE001
                v.errors.append(f"move {i}: {_short(exc)}")
                if isinstance(exc, (TimeoutError, KeyError)) or v.ws.close_code is not None:
                    v.stopped = True  # the session's state is unknown now: stop it
                    return

    try:
        await asyncio.gather(*(load(v) for v in visitors))  # each bounded by its own timeouts
        loaded = [v for v in visitors if not v.errors]
        load_s = time.perf_counter() - t_start
        rss0 = probe.rss() if probe else 0
        each0, client0, t0 = (probe.cpu_each() if probe else []), time.process_time(), time.perf_counter()
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.gather(*(drive(v) for v in loaded)),
                                   max(1.0, soft_end - time.perf_counter()) + timeout)
        except TimeoutError:
            timed_out = True  # only if a rerun hangs past its own timeout: reported as an error below
        errors_extra = [f"step did not end within {budget + timeout:.0f} s"] if timed_out else []
        wall = time.perf_counter() - t0
        split = [b - a for a, b in zip(each0, probe.cpu_each(), strict=True)] if probe else []
        cpu = sum(split) if probe else None
        client_cpu = time.process_time() - client0
    finally:
        await asyncio.gather(*(v.close() for v in visitors))
    lat = [x for v in visitors for x in v.latencies]
    errors = [e for v in visitors for e in v.errors] + errors_extra
    n = len(lat)
    return {
        "sessions": sessions,
        "reruns": n,
        "planned": moves * sessions,
        # moves left when the step's share of --time-limit ran out: not errors, but not measured either
        "unfinished": sum(moves - v.attempts for v in loaded if not v.stopped),
        # moves a session could not make because its page said "the server is busy" (the Live model page when the
        # memory budget or the live-work gate is full: the model was not built, so there is no layer to move)
        "busy": sum(v.busy_moves for v in visitors),
        "busy_messages": sorted({a for v in visitors for a in v.alerts if "server is busy" in a})[:3],
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "p50_s": round(statistics.median(lat), 3) if lat else None,
        "p95_s": round(percentile(lat, 0.95), 3) if lat else None,
        "max_s": round(max(lat), 3) if lat else None,
        "page_load_s": round(load_s, 2),
        "wall_s": round(wall, 2),
        "reruns_per_s": round(n / wall, 2) if n and wall else None,
        "server_cpu_s_per_rerun": round(cpu / n, 4) if n and cpu is not None else None,
        "client_cpu_s_per_rerun": round(client_cpu / n, 4) if n else None,
        "cached_message_references": sum(v.cache_refs for v in visitors),
        # CPU seconds of each served process (Streamlit processes, then nginx): the balance behind a proxy
        "server_cpu_split_s": [round(x, 2) for x in split],
        "server_rss_start_bytes": rss0,
        "server_rss_peak_bytes": probe.peak if probe else None,
        "latencies_s": lat,  # dropped from the report by measure(); run_load pools them
    }


def capacity(cpu_per_rerun: float, cores: int, processes: int, seconds_between_reruns: float,
             utilisation: float) -> dict[str, float]:
    """Visitors a host can serve: each Streamlit process runs its scripts under one GIL, so it uses at
    most one core; P processes use min(P, cores). At a target utilisation u (headroom for bursts and
    queueing), throughput = min(P, cores) * u / cpu_per_rerun reruns per second, and a visitor who
    causes one rerun every T seconds needs 1/T of it."""
    if cpu_per_rerun <= 0 or seconds_between_reruns <= 0 or not 0 < utilisation <= 1:
        raise ValueError("cpu_per_rerun and seconds_between_reruns must be > 0, utilisation in (0, 1]")
    usable = min(processes, cores)
    reruns_per_s = usable * utilisation / cpu_per_rerun
    return {"cores_used": usable, "reruns_per_s": round(reruns_per_s, 2),
            "visitors": int(round(reruns_per_s * seconds_between_reruns, 6))}  # floor, free of float noise


def capacity_table(results: list[dict[str, Any]], cores: int, rates: list[float], utilisation: float) -> list[dict]:
    """For each page: the server CPU per rerun (median over the measured steps of one process) and the
    visitors a `cores`-vCPU host serves with one process and with `cores` processes."""
    rows = []
    single = [r for r in results if r["processes"] == 1]
    for page in PAGES:
        xs = [s["pages"][page]["server_cpu_s_per_rerun"] for r in single for s in r["steps"]
              if page in s["pages"] and s["pages"][page].get("server_cpu_s_per_rerun")]
        if not xs:
            continue
        cpu = statistics.median(xs)
        row = {"page": page, "server_cpu_s_per_rerun": round(cpu, 4)}
        for t in rates:
            for p in (1, cores):
                row[f"visitors_{p}proc_every_{t:g}s"] = capacity(cpu, cores, p, t, utilisation)["visitors"]
        rows.append(row)
    return rows


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), model)
    return {"cpu_model": model, "cores": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def format_tables(report: dict[str, Any]) -> str:
    """Markdown tables: one row per (processes, sessions, page), then the capacity arithmetic."""
    lines = ["| processes | sessions | page | reruns | errors | p50 s | p95 s | max s | server CPU s/rerun | "
             "client CPU s/rerun | RSS peak MiB |", "|" + "---|" * 11]
    for r in report["results"]:
        for s in r["steps"]:
            for page, m in s["pages"].items():
                rss = m.get("server_rss_peak_bytes")
                lines.append("| " + " | ".join(str(x) for x in (
                    r["processes"], s["sessions"], page,
                    f"{m['reruns']}/{m['planned']}" + (f" ({m['busy']} busy)" if m.get("busy") else ""), m["errors"],
                    m["p50_s"], m["p95_s"], m["max_s"], m["server_cpu_s_per_rerun"], m["client_cpu_s_per_rerun"],
                    round(rss / 2**20) if rss else None)) + " |")
    cap = report.get("capacity") or []
    if cap:
        keys = [k for k in cap[0] if k.startswith("visitors_")]
        lines += ["", "| page | server CPU s/rerun | " + " | ".join(keys) + " |", "|" + "---|" * (2 + len(keys))]
        for row in cap:
            lines.append(f"| {row['page']} | {row['server_cpu_s_per_rerun']} | "
                         + " | ".join(str(row[k]) for k in keys) + " |")
    return "\n".join(lines)


def parse_list(text: str, allowed: dict | None = None, kind=int) -> list:
    """`1,10,20` -> [1, 10, 20]; `all` -> every allowed name."""
    if allowed is not None and text == "all":
        return list(allowed)
    items = [kind(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"empty list: {text!r}")
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise ValueError(f"unknown page(s) {bad}; known: {', '.join(allowed)} or all")
    return items


NOT_RUN = {"reruns": 0, "errors": 0, "error_samples": ["not run: --time-limit reached"], "p50_s": None,
           "p95_s": None, "max_s": None, "server_cpu_s_per_rerun": None, "client_cpu_s_per_rerun": None,
           "server_rss_peak_bytes": None}


async def measure(targets: list[tuple[str, ServerProbe | None]], sessions: list[int], pages: list[str], moves: int,
                  timeout: float, deadline: float, keep_latencies: bool = False) -> list[list[dict[str, Any]]]:
    """Every (sessions, page) step on each target in turn (interleaved: targets see the same machine
    load); returns each target's steps."""
    ws_urls = [url.replace("http", "ws", 1).rstrip("/") + "/_stcore/stream" for url, _ in targets]
    # Warm-up: one visitor opens every page (imports, first-run caches), in
    # series 0; each measured (sessions, page) step has a series of its own (see start_query), the same
    # on every target: a measured move is then never answered by the warm-up's or another step's caches.
    for ws_url in ws_urls:
        for page in pages:
            await run_step(ws_url, page, 1, 1, timeout, max(5.0, deadline - time.monotonic()), None)
    series = {(s, page): 1 + i for i, (s, page) in enumerate((s, page) for s in sessions for page in pages)}
    out: list[list[dict[str, Any]]] = [[] for _ in targets]
    weight_left = sum(sessions) * len(pages) * len(targets)  # each step's share of the time left ~ its sessions
    for s in sessions:
        for steps in out:
            steps.append({"sessions": s, "pages": {}})
        for page in pages:
            for t, ((_, probe), ws_url) in enumerate(zip(targets, ws_urls, strict=True)):
                left = deadline - time.monotonic()
                share, weight_left = s / weight_left, weight_left - s
                if left < 5:
                    out[t][-1]["pages"][page] = {"sessions": s, "planned": s * moves, "unfinished": s * moves,
                                                 **NOT_RUN}
                    continue
                if probe:
                    probe.peak = probe.rss()
                budget = min(left, max(20.0, left * share))
                m = await run_step(ws_url, page, s, moves, timeout, budget, probe, series[(s, page)])
                if not keep_latencies:
                    del m["latencies_s"]
                out[t][-1]["pages"][page] = m
                brief = {k: m[k] for k in ("reruns", "unfinished", "busy", "errors", "p50_s", "p95_s",
                                           "server_cpu_s_per_rerun", "error_samples")}
                print(f"  target {t}  {s:>3} sessions  {page:<10} {json.dumps(brief)}", flush=True)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.e2e.harness import ARTIFACTS

    started = time.monotonic()
    report: dict[str, Any] = {
        "tool": "scripts/load_test.py (websocket clients speaking Streamlit's protocol, closed loop)",
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine_start": machine(),
        "moves_per_session": args.moves, "note": args.note, "results": [],
    }
    with contextlib.ExitStack() as stack:
        targets = []
        for processes in args.processes:
            if args.url:
                targets.append((args.url, ServerProbe(args.server_pid) if args.server_pid else None))
                continue
            print(f"starting {processes} Streamlit process(es)...", flush=True)
            server = start_servers(processes, ARTIFACTS, env=server_env(args))
            stack.callback(server.stop)
            targets.append((server.url, ServerProbe(server.pids)))
        for _, probe in targets:
            if probe:
                stack.enter_context(probe)
        deadline = time.monotonic() + args.time_limit
        if args.lab_visitors or args.attackers or args.vocabularies or args.live_visitors:
            all_steps, report["lab"], report["live_visitors"] = asyncio.run(measure_with_lab(targets, args, deadline))
        else:
            all_steps = asyncio.run(measure(targets, args.sessions, args.pages, args.moves, args.rerun_timeout,
                                            deadline))
        for processes, (_, probe), steps in zip(args.processes, targets, all_steps, strict=True):
            report["results"].append({"processes": processes, "url_kind": "nginx" if processes > 1 else "direct",
                                      "steps": steps, "server_rss_after_bytes": probe.rss() if probe else None,
                                      "server_rss_overall_peak_bytes": probe.overall if probe else None})
    report["machine_end"] = machine()
    report["wall_s"] = round(time.monotonic() - started, 1)
    cores = args.cores
    report["capacity_assumptions"] = {
        "host_vcpus": cores, "utilisation": args.utilisation, "seconds_between_reruns_per_visitor": args.rates,
        "rule": "visitors = min(processes, vCPUs) * utilisation / server_cpu_s_per_rerun * seconds_between_reruns",
    }
    report["capacity"] = capacity_table(report["results"], cores, args.rates, args.utilisation)
    report["goals_met"] = {
        "0 errors": all(m["errors"] == 0 for r in report["results"] for s in r["steps"] for m in s["pages"].values()),
        "every planned rerun measured or answered busy": all(
            m["reruns"] + m.get("busy", 0) == m["planned"] for r in report["results"] for s in r["steps"]
            for m in s["pages"].values()),
    }
    report["goals_met"].update(p95_goals(report["results"]))
    if args.envelope:
        report["envelope_bytes"] = args.envelope
        report["goals_met"].update(envelope_goal(report["results"], args.envelope))
    return report


def envelope_goal(results: list[dict[str, Any]], envelope: int) -> dict[str, bool]:
    """Every serving setup's peak RSS over the whole run within ``envelope`` bytes per Streamlit process (behind
    nginx: the processes' sum, nginx included, within that many envelopes)."""
    key = f"peak RSS within {envelope / 2**20:,.0f} MiB per process"
    peaks = [(r["server_rss_overall_peak_bytes"], r["processes"]) for r in results]
    return {key: bool(peaks) and all(p is not None and p <= n * envelope for p, n in peaks)}


async def measure_with_lab(targets: list[tuple[str, ServerProbe | None]], args: argparse.Namespace,
                           deadline: float) -> tuple[list[list[dict[str, Any]]], dict, dict | None]:
    """`measure` with the lab scenario and the Live-model visitors on the first target at the same time (from the
    first page load to the end of the last step, and at least --lab-seconds)."""
    ws_url = targets[0][0].replace("http", "ws", 1).rstrip("/") + "/_stcore/stream"
    done = asyncio.Event()
    lab = asyncio.ensure_future(lab_scenario(ws_url, args.lab_visitors, args.attackers, args.rerun_timeout, done,
                                             args.vocabularies, args.probe))
    live = (asyncio.ensure_future(live_scenario(ws_url, args.live_visitors, args.rerun_timeout, done))
            if args.live_visitors else None)
    until = time.monotonic() + args.lab_seconds
    await asyncio.sleep(10)  # the runs are queued and the first one trains before the sessions start
    try:
        steps = await measure(targets, args.sessions, args.pages, args.moves, args.rerun_timeout, deadline)
        # the lab visitors keep watching (and the probe sampling) for at least --lab-seconds in all
        await asyncio.sleep(max(0.0, min(until, deadline) - time.monotonic()))
    finally:
        done.set()
    return steps, await lab, (await live if live is not None else None)


def p95_goals(results: list[dict[str, Any]]) -> dict[str, bool]:
    """The latency goal, per serving setup measured (every page's p95 under `GOALS["p95_s"]` at
    `GOALS["p95_sessions"]` sessions), and overall: met when one setup meets it on every page (a host
    that one process cannot serve in time runs several behind nginx)."""
    n, limit = GOALS["p95_sessions"], GOALS["p95_s"]
    per_setup = {}
    for r in results:
        pages = [m for s in r["steps"] if s["sessions"] == n for m in s["pages"].values()]
        if pages:
            where = "1 process" if r["processes"] == 1 else f"{r['processes']} processes behind nginx"
            per_setup[f"p95 < {limit:g} s at {n} sessions, {where}"] = all(
                m["p95_s"] is not None and m["p95_s"] < limit for m in pages)
    return {**per_setup, f"p95 < {limit:g} s at {n} sessions (one setup)": any(per_setup.values())}


def run_load(sessions: int = 10, moves: int = 20, url: str | None = None, time_limit: float = 600.0,
             timeout_ms: int = 60_000, warmup: bool = True) -> dict[str, Any]:
    """One figure set for bench/bench_app.py: ``sessions`` visitors move the H slider on the Explorer and
    the L slider on Scaling, half of ``moves`` each, against an own server (or ``url``, then no CPU or
    RSS). ``warmup`` is kept for compatibility: the measurement always warms every page up first."""
    from tests.e2e.harness import ARTIFACTS

    server = None if url else start_servers(1, ARTIFACTS)
    url = url or server.url
    try:
        probe = ServerProbe(server.pids) if server else None
        with probe or contextlib.nullcontext():
            idle = probe.rss() if probe else 0
            t0 = time.perf_counter()
            (steps,) = asyncio.run(measure([(url, probe)], [sessions], ["explorer", "scaling"], max(1, moves // 2),
                                           timeout_ms / 1000, time.monotonic() + time_limit, keep_latencies=True))
            wall = time.perf_counter() - t0
            after = probe.rss() if probe else 0
            peak = probe.peak if probe else None
    finally:
        if server:
            server.stop()
    pages = steps[0]["pages"]
    lat = [x for m in pages.values() for x in m["latencies_s"]]
    cpu = [m["server_cpu_s_per_rerun"] * m["reruns"] for m in pages.values() if m["server_cpu_s_per_rerun"]]
    peaks = [m["server_rss_peak_bytes"] for m in pages.values() if m["server_rss_peak_bytes"]]
    return {
        "sessions": sessions, "moves_per_session": 2 * max(1, moves // 2), "warmup": True,
        "reruns_measured": len(lat), "errors": sum(m["errors"] for m in pages.values()),
        "error_samples": [e for m in pages.values() for e in m["error_samples"]][:10], "wall_s": round(wall, 1),
        "p50_s": round(statistics.median(lat), 3) if lat else None,
        "p95_s": round(percentile(lat, 0.95), 3) if lat else None,
        "max_s": round(max(lat), 3) if lat else None,
        "by_page": {p: {k: m[k] for k in ("p50_s", "p95_s", "reruns")} for p, m in pages.items()},
        "server_cpu_s_per_rerun": round(sum(cpu) / len(lat), 3) if lat and cpu else None,
        "server_rss_idle_bytes": idle, "server_rss_peak_bytes": max([*peaks, peak or 0]) if probe else None,
        "server_rss_after_bytes": after,
    }


def server_env(args: argparse.Namespace) -> dict[str, str]:
    """The served app's settings: ``--memory-budget`` if given (else the app's default), two malloc arenas as
    deployed (unless MALLOC_ARENA_MAX is set), and with lab visitors a fresh run cache (no run is answered
    from an earlier test's)."""
    env = {"ALBERT_EXPLORER_MEMORY_BUDGET": args.memory_budget} if args.memory_budget else {}
    env["MALLOC_ARENA_MAX"] = os.environ.get("MALLOC_ARENA_MAX", "2")  # as the Docker image and deploy/ run it
    if args.lab_visitors or args.attackers or args.vocabularies or args.live_visitors:
        import tempfile

        env["ALBERT_EXPLORER_RUNS_DIR"] = tempfile.mkdtemp(prefix="load-test-runs-")
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,10,20", help="concurrent sessions per step (default 1,10,20)")
    parser.add_argument("--pages", default="all", help=f"pages: all or a list of {', '.join(PAGES)}")
    parser.add_argument("--moves", type=int, default=5, help="widget moves per session and page (default 5)")
    parser.add_argument("--processes", default="1,2",
                        help="Streamlit processes to measure, one after the other (>1: behind nginx; default 1,2)")
    parser.add_argument("--url", help="a running server on loopback instead of starting one")
    parser.add_argument("--server-pid", type=int, action="append", default=[],
                        help="with --url: pid(s) whose CPU and RSS to read (repeat the option)")
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="seconds for the measured steps of the whole run (default 600)")
    parser.add_argument("--rerun-timeout", type=float, default=30.0, help="seconds before a rerun is an error")
    parser.add_argument("--cores", type=int, default=2, help="vCPUs of the host in the capacity arithmetic")
    parser.add_argument("--rates", default="5,10,30", help="seconds between a visitor's reruns (capacity)")
    parser.add_argument("--utilisation", type=float, default=0.7, help="target CPU utilisation (capacity)")
    parser.add_argument("--lab-visitors", type=int, default=0,
                        help="visitors who start lab runs on the Train page during the steps (two seeds each)")
    parser.add_argument("--attackers", type=int, default=0,
                        help="visitors who repeat the hostile lab requests of issue 18 during the steps")
    parser.add_argument("--vocabularies", default="",
                        help="vocabulary sizes the lab ships no tokenizer for, one visitor each asking for short "
                        "runs at the sidebar's size with it (e.g. 2500,3500,4500: the worker's tokenizer and "
                        "corpus caches)")
    parser.add_argument("--probe", action="store_true",
                        help="the lab visitors' runs are then fine-tuned on movie reviews (the downstream probe)")
    parser.add_argument("--live-visitors", type=int, default=0,
                        help="Live-model visitors on family presets who move the sidebar's L during the steps "
                        "(each move builds a model: issue 40)")
    parser.add_argument("--envelope", help="a goal: peak RSS per Streamlit process within this (e.g. 1200MiB)")
    parser.add_argument("--lab-seconds", type=float, default=300.0,
                        help="with lab visitors: they keep watching their runs at least this long (default 300)")
    parser.add_argument("--memory-budget", help="the served app's memory budget (default the app's 1 GiB; the "
                        "Docker image sets 512MiB)")
    parser.add_argument("--note", default="", help="free text stored in the JSON (e.g. the machine's load)")
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args(argv)
    try:
        args.sessions = parse_list(args.sessions)
        args.pages = parse_list(args.pages, PAGES, str)
        args.processes = parse_list(args.processes)
        args.rates = parse_list(args.rates, kind=float)
        if args.url:
            check_loopback(args.url)
            args.processes = [1]
        if min(args.sessions) < 1 or max(args.sessions) > 50 or not 1 <= args.moves <= 100:
            raise ValueError("--sessions must be 1..50 and --moves 1..100")
        if min(args.processes) < 1 or max(args.processes) > 8:
            raise ValueError("--processes must be 1..8")
        if not (0 <= args.lab_visitors <= 10 and 0 <= args.attackers <= 10 and 0 <= args.live_visitors <= 10):
            raise ValueError("--lab-visitors, --attackers and --live-visitors must be 0..10")
        if args.envelope:
            from albert_core.settings import parse_bytes

            args.envelope = parse_bytes(args.envelope, "--envelope")
        args.vocabularies = parse_list(args.vocabularies) if args.vocabularies else []
        if len(args.vocabularies) > MAX_VOCABULARIES or len(set(args.vocabularies)) < len(args.vocabularies):
            raise ValueError(f"--vocabularies takes at most {MAX_VOCABULARIES} different sizes")
        if not 10 <= args.time_limit <= 3600:
            raise ValueError("--time-limit must be 10..3600 s")
    except ValueError as exc:
        parser.error(str(exc))
    # SIGTERM ends the run like Ctrl-C: the servers it started are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    report = run(args)
    print(format_tables(report))
    print(json.dumps(report["goals_met"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    met = report["goals_met"]
    overall = [k for k in met if not k.startswith("p95 <") or k.endswith("(one setup)")]
    return 0 if all(met[k] for k in overall) else 1


if __name__ == "__main__":
    raise SystemExit(main())
