"""The Paper page's tables (they depend on nothing the visitor changes) and the SOP/NSP pairs of a text.

A function decorated with `st.cache_resource` in a page script would be decorated again on every rerun (a page's
code runs top to bottom each time, and the decorator keys the function by reading its source); here it is decorated
once, at import. What it returns is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pandas as pd
import streamlit as st

from albert_core.text.pretraining_inputs import make_pairs
from ui import tables
from ui.paper import figures as fp


@functools.cache
def _frame(builder: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``builder()`` (one of `ui.paper.figures`' tables: they depend on nothing the visitor changes), built once per
    process and shared (never changed); a difference in percent, as its column shows it (+1.00%)."""
    df = builder()
    return df.assign(difference=df["difference"] * 100) if "difference" in df else df


# Each table as sent to the browser, converted to Arrow once (ui/tables.py), with what it shows of its frame.
@functools.cache
def table1():
    return tables.arrow(_frame(fp.table1_frame))


@functools.cache
def table3():
    return tables.arrow(_frame(fp.table3_frame))


@functools.cache
def table4():
    return tables.arrow(_frame(fp.table4_frame))


@functools.cache
def embedding_formula():
    return tables.arrow(_frame(fp.embedding_formula_frame).drop(columns="hidden_size"))


@functools.cache
def estimate_formula():
    # quoted as printed, 15.8M and 63M (the browser's compact format would round 15.8M to 16M): text
    df = _frame(fp.estimate_formula_frame)
    return tables.arrow(df.assign(quoted=df["quoted"].map(fp.fmt_printed)))


@functools.cache
def table3_savings() -> tuple[int, int]:
    """What shrinking E and then sharing save in Table 3 (its takeaway), read once."""
    return fp.table3_savings(_frame(fp.table3_frame))


@st.cache_resource(max_entries=32, show_spinner=False)
def paper_pair_tables(text: str) -> dict[str, object]:
    """The SOP and NSP pairs of ``text`` (seeded: the same text gives the same pairs) as Arrow tables, made once
    per text, not on every rerun a sidebar move causes. A text without pairs raises, and nothing is kept."""
    return {task: tables.arrow(pd.DataFrame([vars(p) for p in make_pairs(text, task)],
                                            columns=["kind", "a", "b", "label"])) for task in ("sop", "nsp")}


@st.cache_resource(max_entries=1, show_spinner=False)
def encoder_presets_table():
    """The presets of the families after BERT: family, exact count, the published total as printed, the embedding
    share and the source, as an Arrow table (built once per process)."""
    from albert_core.configuration.config import FAMILY_NAMES
    from albert_core.configuration.presets import ENCODER_PRESETS, PRESET_SOURCES
    from albert_core.counting.params import count_params

    rows = []
    for name, cfg in ENCODER_PRESETS.items():
        bd = count_params(cfg)
        rows.append({"preset": name, "family": FAMILY_NAMES[cfg.family], "params": bd.total,
                     "published": PRESET_SOURCES[name].published_as,
                     "embedding share": bd.group_totals()["embeddings"] / bd.total,
                     "source": PRESET_SOURCES[name].source})
    return tables.arrow(pd.DataFrame(rows))
