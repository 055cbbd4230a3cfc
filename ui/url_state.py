"""Widget values that travel in the URL: a session's first run takes its state from the link, later runs keep
the session's own, and the address bar follows the widgets (the share link)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import streamlit as st

from albert_core.format import escape_markdown


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
                max_chars: int = 2000) -> str:
    """A widget whose value travels in the URL as ``param``: the first time a session draws it, it starts
    from the URL's value when there is one that ``valid`` accepts and that fits the widget (``max_chars``,
    the widget's own limit: a value seeded through session state is not cut by it), else from ``default``;
    after that the session's value stands. Returns that value: call before drawing the widget (``key``) and draw
    it with the value (a box: its index), never a default of its own, which the browser paints first (the Live
    model's text box came up empty, and the next edit ran the model on no text)."""
    ss = st.session_state
    if key not in ss:
        raw = st.query_params.get(param)
        ok = raw is not None and len(raw) <= max_chars and (valid is None or valid(raw))
        ss[key] = raw if ok else default
    return ss[key]


def sync_widget(param: str, value: str | None, default: str) -> None:
    """Put a URL-carried widget's value into the address bar (the share link), or take it out when it is
    the default (links stay short)."""
    if value is None or value == default:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != value:
        st.query_params[param] = value
