"""Pure table builders for the Paper & formulas page (no streamlit): the paper's printed tables beside
the exact counts, and the circulating figures reconciled. Printed figures come from
`albert_core.paper`; every count is `count_params`."""

from __future__ import annotations

import pandas as pd

from albert_core import PRESETS, ModelConfig, count_params
from albert_core.format import fmt_params
from albert_core.paper import (
    PAPER_SHARING_NAMES,
    PAPER_TABLE1,
    PAPER_TABLE3,
    PAPER_TABLE4,
    PAPER_VOCAB,
    QUOTED_ESTIMATES,
    QUOTED_VOCAB,
    TABLE4_MODES,
)
from ui.scaling.figures import seed_embedding_table

TABLE1_NOTES = {
    "bert-base": "Without the pooler 108.49M: the printed 108M.",
    "bert-large": "With the pooler 334.61M: the printed 334M.",
    "albert-base": "Rounds to the printed 12M.",
    "albert-large": "Rounds to the printed 18M.",
    "albert-xlarge": "The printed 60M is rounded up (59M would be right).",
    "albert-xxlarge": "Printed 235M here, 233M in the text: see below.",
}
ALBERT_SIZES = ("albert-base", "albert-large", "albert-xlarge", "albert-xxlarge")


def _row(name: str, printed: float, exact: int, note: str = "") -> dict:
    return {"model": name, "printed": printed, "recomputed": exact, "difference": exact / printed - 1, "note": note}


def fmt_printed(v: float) -> str:
    """A figure as printed: 108M, 15.8M (no invented digits)."""
    return fmt_params(v, 1).replace(".0", "")


def _params(cfg: ModelConfig) -> int:
    return count_params(cfg).total


def table1_frame() -> pd.DataFrame:
    """Table 1: every preset at the paper's V = 30,000 (XModel: encoder + pooler)."""
    return pd.DataFrame([_row(name, printed, _params(PRESETS[name].replace(vocab_size=PAPER_VOCAB)),
                              TABLE1_NOTES[name]) for name, printed in PAPER_TABLE1.items()])


def table3_frame() -> pd.DataFrame:
    """Table 3: ALBERT-base per embedding size, not-shared then all-shared."""
    base = PRESETS["albert-base"]
    return pd.DataFrame([
        _row(f"{PAPER_SHARING_NAMES[mode]}, E = {e}", printed, _params(base.replace(sharing=mode, embedding_size=e)),
             "Printed = BERT-base's 108M; exact adds the E→H projection and pooler" if (mode, e) == ("none", 768)
             else "")
        for mode, col in PAPER_TABLE3.items() for e, printed in col.items()
    ])


def table3_savings(t3: pd.DataFrame) -> tuple[int, int]:
    """(E 768 -> 128 not-shared, then not-shared -> all-shared at E = 128) from `table3_frame`."""
    exact = t3.set_index("model")["recomputed"]
    e768, e128, shared = exact["not-shared, E = 768"], exact["not-shared, E = 128"], exact["all-shared, E = 128"]
    return int(e768 - e128), int(e128 - shared)


def table4_frame() -> pd.DataFrame:
    """Table 4: ALBERT-base at E = 768 and 128 in the four sharing modes, in the paper's order;
    columns embedding_size, sharing, model, printed, recomputed, difference."""
    base = PRESETS["albert-base"]
    rows = []
    for e in PAPER_TABLE4:
        for mode in TABLE4_MODES:
            row = _row(f"E = {e}, {PAPER_SHARING_NAMES[mode]}", PAPER_TABLE4[e][mode],
                       _params(base.replace(sharing=mode, embedding_size=e)))
            rows.append({"embedding_size": e, "sharing": mode, **row})
    return pd.DataFrame(rows)


def embedding_formula_frame() -> pd.DataFrame:
    """Token-embedding weights only (no position / type tables, biases or LayerNorms): V·H against
    V·E + E·H per ALBERT size at the circulating chart's V and E (`figures_scaling.seed_embedding_table`)."""
    df = seed_embedding_table({name: PRESETS[name] for name in ALBERT_SIZES})
    return df.rename(columns={"label": "model", "standard": "V·H (BERT)", "factorized": "V·E + E·H (ALBERT)"})


def estimate_formula_frame() -> pd.DataFrame:
    """The circulating `estimate_albert_params` totals against the exact count with the pre-training
    heads at V = 30,522: the estimate counts the tied decoder V·E again and leaves out the embedding
    LayerNorm (2E), the projection bias (H), the MLM output bias (V) and the SOP bias (2)."""
    rows = []
    for name, printed in QUOTED_ESTIMATES.items():
        c = PRESETS[name].replace(vocab_size=QUOTED_VOCAB, head="pretraining")
        exact, e, h = _params(c), c.embedding_size, c.hidden_size
        left_out = 2 * e + h + QUOTED_VOCAB + 2
        rows.append({"model": name, "quoted": printed, "exact": exact, "+ V·E again": QUOTED_VOCAB * e,
                     "− left out": left_out, "= quoted formula": exact + QUOTED_VOCAB * e - left_out})
    return pd.DataFrame(rows)
