"""The one ModelConfig and Workload the sidebar produced for this run, shared with every page."""

from __future__ import annotations

import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.configuration.coerce import is_albertized
from albert_core.counting.report import Result, analyze

CONFIG_KEY = "_albert_config"
WORKLOAD_KEY = "_albert_workload"


ORIGIN_KEY = "_albert_origin"  # the session's last config without ALBERT's ideas (what an ALBERTized one came from)


def set_current(cfg: ModelConfig, workload: Workload) -> None:
    st.session_state[CONFIG_KEY] = cfg
    st.session_state[WORKLOAD_KEY] = workload
    if not is_albertized(cfg):  # a preset, an upload, a link, an edit: what ALBERTizing it would start from
        st.session_state[ORIGIN_KEY] = cfg


def current() -> tuple[ModelConfig, Workload]:
    """The config and workload of this run (defaults if the sidebar has not run yet)."""
    return (
        st.session_state.get(CONFIG_KEY, ModelConfig()),
        st.session_state.get(WORKLOAD_KEY, Workload()),
    )


# Streamlit keys a cached function by hashing its arguments, walking a dataclass field by field (a dozen calls per
# Scaling rerun); their repr names every field and value (frozen dataclasses,
# `test_config_hash_keys_differ_in_every_field`): a complete key for a small part of the cost.
CONFIG_HASH_FUNCS = {ModelConfig: repr, Workload: repr}


@st.cache_resource(max_entries=256, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def cached_result(cfg: ModelConfig, workload: Workload) -> Result:
    """`albert_core.counting.report.analyze`, cached per (frozen) config and workload: every number a page shows.
    Shared, not copied: a Result is frozen and never mutated."""
    return analyze(cfg, workload)
