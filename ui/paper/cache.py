"""The Paper page's tables (they depend on nothing the visitor changes) and the SOP/NSP pairs of a text.

A function decorated with `st.cache_resource` in a page script would be decorated again on every rerun (a page's
code runs top to bottom each time, and the decorator keys the function by reading its source); here it is decorated
once, at import. What it returns is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from albert_core.text.pretraining_inputs import make_pairs
from ui import tables
from ui.paper import figures as fp


@st.cache_resource(max_entries=8, show_spinner=False)
def paper_frame(builder: str) -> pd.DataFrame:
    """``ui.paper.figures.<builder>()`` (the tables depend on nothing the visitor changes), built once per process
    and shared (never changed); a difference in percent, as its column shows it (+1.00%)."""
    df = getattr(fp, builder)()
    return df.assign(difference=df["difference"] * 100) if "difference" in df else df


# What a table shows of its frame, where that is not the whole frame as it is.
PAPER_SHOWN = {
    "embedding_formula_frame": lambda df: df.drop(columns="hidden_size"),
    # quoted as printed, 15.8M and 63M (the browser's compact format would round 15.8M to 16M): text
    "estimate_formula_frame": lambda df: df.assign(quoted=df["quoted"].map(fp.fmt_printed)),
}


@st.cache_resource(max_entries=8, show_spinner=False)
def paper_table(builder: str):
    """The table of ``paper_frame(builder)`` as sent to the browser, converted to Arrow once (ui/tables.py)."""
    df = paper_frame(builder)
    return tables.arrow(PAPER_SHOWN.get(builder, lambda d: d)(df))


@functools.cache
def paper_table3_savings() -> tuple[int, int]:
    """What shrinking E and then sharing save in Table 3 (its takeaway), read once."""
    return fp.table3_savings(paper_frame("table3_frame"))


@st.cache_resource(max_entries=32, show_spinner=False)
def paper_pair_tables(text: str) -> dict[str, object]:
    """The SOP and NSP pairs of ``text`` (seeded: the same text gives the same pairs) as Arrow tables, made once
    per text, not on every rerun a sidebar move causes. A text without pairs raises, and nothing is kept."""
    return {task: tables.arrow(pd.DataFrame([vars(p) for p in make_pairs(text, task)],
                                            columns=["kind", "a", "b", "label"])) for task in ("sop", "nsp")}
