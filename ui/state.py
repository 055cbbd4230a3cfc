"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import functools
import gc
import hashlib
import importlib
import sys
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.counting.report import Result, analyze
from albert_core.format import escape_markdown
from ui import plotly_dicts

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload


# ----------------------------------------------------------------------------- widget values in the URL
def seed_from_url_once(flag: str, seed: Callable[[dict[str, str]], Iterable[str]], problem_suffix: str = "ignored",
                       warn: bool = True) -> list[str]:
    """The first run of a session takes its state from the URL; every later run keeps the session's own.
    On that first run ``seed`` gets the URL's parameters, writes what it decoded into session state and
    returns the problems it found (one sentence each, naming the URL key); each is shown as a warning ending
    "- ``problem_suffix``" unless ``warn`` is False (the caller shows them itself). ``flag`` is the session
    key that remembers the seeding. Returns the problems of that first run, else []."""
    ss = st.session_state
    if ss.get(flag):
        return []
    problems = list(seed(st.query_params.to_dict()))
    ss[flag] = True
    if warn:
        for problem in problems:
            st.warning(f"{escape_markdown(problem)} \\- {problem_suffix}.", icon="⚠️")
    return problems


def seed_widget(param: str, key: str, default: str, valid: Callable[[str], bool] | None = None,
                max_chars: int = 2000) -> None:
    """A widget whose value travels in the URL as ``param``: the first time a session draws it, it starts
    from the URL's value when there is one that ``valid`` accepts and that fits the widget (``max_chars``,
    the widget's own limit: a value seeded through session state is not cut by it), else from ``default``;
    after that the session's value stands. Call before drawing the widget (``key``), and draw it without a
    default value of its own."""
    ss = st.session_state
    if key in ss:
        return
    raw = st.query_params.get(param)
    ok = raw is not None and len(raw) <= max_chars and (valid is None or valid(raw))
    ss[key] = raw if ok else default


def sync_widget(param: str, value: str | None, default: str) -> None:
    """Put a URL-carried widget's value into the address bar (the share link), or take it out when it is
    the default (links stay short)."""
    if value is None or value == default:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != value:
        st.query_params[param] = value


def check_settings() -> None:
    """The server's settings (memory budget, compute cap, torch threads, the lab's queue, shares and
    limits), checked before anything is drawn: a bad value shows one error naming it on every page instead
    of failing later on one page."""
    from albert_core import settings

    try:
        settings.check()
    except ValueError as exc:
        st.error(f"This server is misconfigured: {exc}")
        st.stop()


_FROZEN_MODULES = [0]
_FREEZE_LOCK = threading.Lock()


def freeze_imported_modules() -> None:
    """Move everything alive into the garbage collector's permanent generation once new modules were
    imported (torch, transformers, plotly: millions of objects). Without it every full collection walks
    them all, about 0.14 s of server CPU on the benchmark machine, and one ran on nearly every rerun of
    the Live model page. Done after a collection, so no garbage is frozen; later cyclic garbage is
    still collected. Costs a collection only when the set of modules grew (a page's first run)."""
    with _FREEZE_LOCK:
        if len(sys.modules) == _FROZEN_MODULES[0]:
            return
        gc.collect()
        gc.freeze()
        _FROZEN_MODULES[0] = len(sys.modules)


def current() -> tuple[ModelConfig, Workload]:
    """The config and workload of this run (defaults if the sidebar has not run yet)."""
    return (
        st.session_state.get(CONFIG_KEY, ModelConfig()),
        st.session_state.get(WORKLOAD_KEY, Workload()),
    )


# Streamlit keys a cached function by hashing its arguments, walking a dataclass field by field (~0.2 ms for a
# config and a workload, a dozen calls per Scaling rerun); their repr names every field and value (frozen
# dataclasses, `test_config_hash_keys_differ_in_every_field`), a complete key at a twentieth of the cost.
CONFIG_HASH_FUNCS = {ModelConfig: repr, Workload: repr}


@st.cache_resource(max_entries=256, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def cached_result(cfg: ModelConfig, workload: Workload) -> Result:
    """`albert_core.counting.report.analyze`, cached per (frozen) config and workload: every number a page shows.
    Shared, not copied: a Result is frozen and never mutated."""
    return analyze(cfg, workload)


FIGURE_CACHE_ENTRIES = 256  # Plotly figures of the pages: 10-50 kB each


def _frame_parts(df: pd.DataFrame) -> list[bytes]:
    """Every value of a frame as bytes: numeric columns and categorical codes as their raw buffers, other
    columns (labels) as the repr of their values; column names, dtypes, index and attrs included."""
    parts = [repr((tuple(df.columns), tuple(map(str, df.dtypes)), df.index.tolist(), df.attrs)).encode()]
    for _, col in df.items():
        if isinstance(col.dtype, pd.CategoricalDtype):
            parts += [col.cat.codes.to_numpy().tobytes(), repr(col.cat.categories.tolist()).encode()]
        elif pd.api.types.is_numeric_dtype(col.dtype):
            parts.append(col.to_numpy().tobytes())
        else:
            parts.append(repr(col.tolist()).encode())
    return parts


# A frame's digest, kept while the frame lives: the frames a page charts come from caches (the same object on every
# rerun, never changed, as everything shared between sessions), and hashing one again cost ~0.2 ms a chart.
_FRAME_DIGESTS: dict[int, tuple[weakref.ref, bytes]] = {}


def _forget_digest(frame_id: int, ref: weakref.ref) -> None:
    entry = _FRAME_DIGESTS.get(frame_id)
    if entry is not None and entry[0] is ref:
        del _FRAME_DIGESTS[frame_id]


def _frame_digest(df: pd.DataFrame) -> bytes:
    entry = _FRAME_DIGESTS.get(id(df))
    if entry is not None and entry[0]() is df:
        return entry[1]
    h = hashlib.blake2b(digest_size=16)
    for part in _frame_parts(df):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    digest = h.digest()
    _FRAME_DIGESTS[id(df)] = (weakref.ref(df, functools.partial(_forget_digest, id(df))), digest)
    return digest


def content_key(args: tuple) -> str:
    """A digest of the arguments' values: equal inputs give equal keys, whichever view produced them.
    DataFrames by `_frame_parts` (digested once per frame object: a frame must not change once it has been
    charted), anything else by its repr (frozen configs, numbers, strings, dicts, module-level functions:
    complete). ~0.1 ms for a chart's inputs, where Streamlit's own hasher spent more on a DataFrame than
    building the chart."""
    h = hashlib.blake2b(digest_size=16)
    for arg in args:
        part = _frame_digest(arg) if isinstance(arg, pd.DataFrame) else repr((type(arg), arg)).encode()
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


class _Inputs:
    """A builder's arguments under their content key: equal keys are equal inputs. The arguments are let go
    once the figure is built (the cache keeps the key, not the frames)."""

    __slots__ = ("args", "key")

    def __init__(self, key: str, args: tuple):
        self.key, self.args = key, args

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Inputs) and other.key == self.key


# A plain LRU (functools), not st.cache_resource: the key is already a digest, and Streamlit's cache machinery
# (hashing the key again, statistics, a lock per key) cost ~0.15 ms a chart, a dozen per Scaling rerun.
@functools.lru_cache(maxsize=FIGURE_CACHE_ENTRIES)
def _figure(module: str, name: str, inputs: _Inputs) -> Any:
    args, inputs.args = inputs.args, ()
    # held as its dict (plotly_dicts.frozen): each rerun that sends it does not copy it again
    return plotly_dicts.frozen(getattr(importlib.import_module(module), name)(*args))


def cached_figure(builder: Callable[..., Any], *args: Any) -> Any:
    """``builder(*args)`` for a pure figure builder of ``ui/``, built once per distinct input and shared
    by every session (bounded: the least recently used of `FIGURE_CACHE_ENTRIES` go first). Building
    a Plotly figure costs 5-8 ms, most of a rerun; a figure whose inputs did not change with the
    visitor's edit is not rebuilt. Shared, not copied: callers never mutate the figure. Arguments are
    keyed by value (`content_key`): DataFrames, or objects whose repr is complete."""
    return _figure(builder.__module__, builder.__name__, _Inputs(content_key(args), args))
