"""The numbers the Scaling page's takeaway sentences quote, read from the frames its charts show.

Pure functions (frames in, numbers out; no streamlit import), so that a sentence quotes exactly what
its chart plots and tests check the numbers without a server.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


def _params_by_model(df: pd.DataFrame, hidden_size: int) -> dict[str, int]:
    # read as lists: a pandas filter per call cost more than the frame's whole chart
    return {m: p for m, h, p in zip(df["model"].tolist(), df["hidden_size"].tolist(), df["params"].tolist(),
                                    strict=True) if h == hidden_size}


def albert_share(df: pd.DataFrame, hidden_size: int) -> float | None:
    """ALBERT's total params over BERT's at ``hidden_size`` in a frame over H (columns model,
    hidden_size, params: `figures_scaling.hidden_frame` or a `sweep`); None without both models there."""
    at = _params_by_model(df, hidden_size)
    if "ALBERT" not in at or "BERT" not in at:
        return None
    return at["ALBERT"] / at["BERT"]


def preset_ratios(df: pd.DataFrame, a: str = "albert-xxlarge", b: str = "bert-large") -> tuple[float, float]:
    """(params of ``a`` / params of ``b``, forward FLOPs of ``a`` / forward FLOPs of ``b``) from a
    `figures_scaling.presets_frame`."""
    row = df.set_index("label")
    return (row.loc[a, "params"] / row.loc[b, "params"],
            row.loc[a, "forward_flops"] / row.loc[b, "forward_flops"])


@dataclass(frozen=True)
class GridSpan:
    """The ends of a params grid over (E, H), and the totals along the row and column of one cell."""

    e_lo: int
    e_hi: int
    h_lo: int
    h_hi: int
    at_h_e_lo: int  # params at (e_lo, H of the cell)
    at_h_e_hi: int
    at_e_h_lo: int  # params at (E of the cell, h_lo)
    at_e_h_hi: int


def grid_span(df: pd.DataFrame, embedding_size: int, hidden_size: int) -> GridSpan:
    """`GridSpan` of a heatmap frame (columns embedding_size, hidden_size, params) around the cell
    (``embedding_size``, ``hidden_size``); KeyError when the grid lacks a cell it needs."""
    es, hs = df["embedding_size"].tolist(), df["hidden_size"].tolist()
    grid = dict(zip(zip(es, hs, strict=True), df["params"].tolist(), strict=True))
    e_lo, e_hi, h_lo, h_hi = int(min(es)), int(max(es)), int(min(hs)), int(max(hs))
    return GridSpan(e_lo, e_hi, h_lo, h_hi,
                    int(grid[(e_lo, hidden_size)]), int(grid[(e_hi, hidden_size)]),
                    int(grid[(embedding_size, h_lo)]), int(grid[(embedding_size, h_hi)]))


def sharing_savings(t4: pd.DataFrame, embedding_size: int = 128) -> tuple[int, int]:
    """(params saved by sharing attention, by sharing the FFN) against no sharing, at ``embedding_size``,
    from `figures_scaling.table4_frame`'s exact counts."""
    exact = t4[t4["embedding_size"] == embedding_size].set_index("sharing")["exact"]
    return int(exact["none"] - exact["attention"]), int(exact["none"] - exact["ffn"])


@dataclass(frozen=True)
class SeqSpan:
    """The first and last rows of a frame over sequence length (`figures_scaling.workload_frame`)."""

    seq_lo: int
    seq_hi: int
    attention_share_lo: float
    attention_share_hi: float
    activations_lo: float
    activations_hi: float


def seq_span(by_seq: pd.DataFrame) -> SeqSpan:
    lo, hi = by_seq.iloc[0], by_seq.iloc[-1]
    return SeqSpan(int(lo["seq_len"]), int(hi["seq_len"]), float(lo["attention_share"]),
                   float(hi["attention_share"]), float(lo["activations"]), float(hi["activations"]))


@dataclass(frozen=True)
class PerSequence:
    """From the first row of a frame over batch: what each sequence adds, and what is paid once."""

    activations: float  # bytes of activations per sequence
    fixed: float  # bytes of weights, gradients and optimizer state
    training_flops: float  # training FLOPs per sequence


def per_sequence(by_batch: pd.DataFrame) -> PerSequence:
    one = by_batch.iloc[0]
    return PerSequence(float(one["activations"] / one["batch"]), float(one["total"] - one["activations"]),
                       float(one["training_flops"] / one["batch"]))
