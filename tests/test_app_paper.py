"""Paper & formulas page: the tables beside the printed figures, the seed reconciliation, SOP vs NSP."""

from __future__ import annotations

import pytest

from tests.helpers.facts import MODEL_COUNTS as FACTS_MODEL
from tests.helpers.facts import (
    PAPER_TABLE1,
    SEED_000_BASELINE_ROW,
    SEED_000_FACTORIZED,
    SEED_000_STANDARD,
    SHARING_COUNTS,
)

PAGE = "ui/paper/page.py"


def test_paper_page_tables(app):
    at = app(page=PAGE)
    assert not at.exception and not at.error
    # the per-component block in its two layouts (the browser shows the one that fits, tests/e2e/test_phone.py):
    # label, closed form, exact value for ALBERT-base in each
    layouts = [x.value for x in at.latex if r"\text{word embeddings}" in x.value]
    assert len(layouts) == 2
    for formulas in layouts:
        assert "3{,}840{,}000" in formulas and "1{,}771{,}776" in formulas  # V*E and 3(H^2+H) at E=128, H=768
    t1, t3, t4, seed000, seed003 = (d.value for d in at.dataframe[:5])
    # Table 1 at the paper's V = 30,000; ALBERT rows need no vocabulary change.
    row = t1.set_index("model")
    assert row.loc["albert-base", "recomputed"] == FACTS_MODEL["albert-base"]
    printed = PAPER_TABLE1["albert-xxlarge"] * 1e6  # 235M
    assert row.loc["albert-xxlarge", "printed"] == printed
    # the difference in percent, as its column shows it (format "%+.2f%%": -5.28%)
    difference = (FACTS_MODEL["albert-xxlarge"] / printed - 1) * 100
    assert row.loc["albert-xxlarge", "difference"] == pytest.approx(difference)
    assert row.loc["bert-base", "recomputed"] == FACTS_MODEL["bert-base"] - 522 * 768
    # Table 4 partial-sharing figures (tests/helpers/facts.py).
    t4 = t4.set_index("model")["recomputed"]
    assert t4["E = 128, shared-attention"] == SHARING_COUNTS["attention"]
    assert t4["E = 128, shared-FFN"] == SHARING_COUNTS["ffn"]
    assert t4["E = 128, all-shared"] == FACTS_MODEL["albert-base"]
    assert (t3["difference"].abs() < 4).all() and (t4.index.size == 8)
    # The embedding table: 23,440,896 vs 4,005,120 (83% less).
    s0 = seed000.set_index("model").loc["albert-base"]
    assert (s0["V·H (BERT)"], s0["V·E + E·H (ALBERT)"]) == (SEED_000_STANDARD, SEED_000_FACTORIZED[768])
    assert any(f"{SEED_000_BASELINE_ROW:,}" in md.value for md in at.markdown)
    # The estimate helper: its corrected formula reproduces the quoted estimates to 0.1M, quoted as printed.
    quoted = seed003.set_index("model")["quoted"]
    assert dict(quoted) == {"albert-base": "15.8M", "albert-large": "21.8M", "albert-xlarge": "63M",
                            "albert-xxlarge": "227.1M"}
    for model, printed_m in {"albert-base": 15.8, "albert-large": 21.8, "albert-xlarge": 63.0,
                             "albert-xxlarge": 227.1}.items():
        assert round(seed003.set_index("model").loc[model, "= quoted formula"] / 1e6, 1) == printed_m, model


def test_sop_negatives_are_swapped_pairs(app):
    at = app(page=PAGE)
    sop = next(d.value for d in at.dataframe if list(d.value.columns) == ["kind", "a", "b", "label"])  # SOP first
    pos, neg = sop[sop["label"] == 0], sop[sop["label"] == 1]
    assert len(pos) == len(neg) > 0
    assert set(zip(neg["a"], neg["b"], strict=True)) == set(zip(pos["b"], pos["a"], strict=True))
    at.text_area(key="paper_text").input("One. Two. Three.").run()
    assert not at.exception
    masked = at.main.code[0].value
    assert "[MASK]" in masked and len(masked.split()) == 6  # one . two . three .


def test_masked_words_are_listed(app):
    at = app(page=PAGE)
    at.text_area(key="paper_text").input("Alpha beta gamma delta. Epsilon zeta eta theta.").run()
    masked = at.main.code[0].value.split()
    words = ["alpha", "beta", "gamma", "delta", ".", "epsilon", "zeta", "eta", "theta", "."]
    hidden = [w for w, m in zip(words, masked, strict=True) if m == "[MASK]"]
    caption = next(c.value for c in at.caption if c.value.startswith("Masked"))
    assert caption.startswith(f"Masked {len(hidden)} of {len(words)} tokens") and all(w in caption for w in hidden)


def test_bert_flop_formula_has_no_projection_term(app):
    bert = app({"family": "bert"}, page="ui/paper/page.py")
    albert = app({}, page="ui/paper/page.py")
    fwd = [x.value for x in bert.latex if r"\text{fwd} &=" in x.value]
    assert fwd and all("2BSEH" not in f for f in fwd)
    assert any("2BSEH" in x.value for x in albert.latex if r"\text{fwd} &=" in x.value)


def test_the_exact_column_is_wide_enough_for_its_longest_number(app):
    """On a phone a "small" Exact column cut the leading digits ("334,607,360" read "34,607,360"): the column
    is given a width that holds its longest number (about 8.5 px a digit or comma at the grid's font, plus
    16 px of padding)."""
    import json

    at = app(page=PAGE)
    for frame in at.dataframe[:3]:  # Tables 1, 3 and 4
        longest = max(len(f"{int(v):,}") for v in frame.value["recomputed"])
        width = json.loads(frame.proto.columns)["recomputed"].get("width")
        assert isinstance(width, int) and width >= 8.5 * longest + 16, (longest, width)


def test_the_circulating_baseline_row_is_not_quoted_as_a_row_of_the_table_shown(app):
    """The sentence under the embedding table quotes the circulating chart's 'BERT-Base (baseline)' row: the
    table on the page does not hold it, so the sentence must not call it that table's row."""
    at = app(page=PAGE)
    shown = at.dataframe[3].value  # Table 1, 3 and 4, then the embedding table
    assert "V·H (BERT)" in shown.columns and not shown["model"].str.contains("baseline").any()
    (sentence,) = [md.value for md in at.markdown if f"{SEED_000_BASELINE_ROW:,}" in md.value]
    assert "first row" not in sentence.lower() and "leaves out" in sentence


def test_a_modernbert_in_the_sidebar_gets_its_own_closed_forms(app):
    """Issue 42: with a ModernBERT in the sidebar the page showed BERT's formulas beside its values, which do not
    satisfy them ("n_att·3(H²+H) = 1,769,472" for a bias-free attention, "(V+P+T)E" without a position table)."""
    from albert_core import count_params
    from albert_core.configuration.presets import ALL_PRESETS
    from ui.urls import config_to_query

    cfg = ALL_PRESETS["modernbert-base"]
    at = app(config_to_query(cfg), page=PAGE)
    assert not at.exception and not at.error
    layouts = [x.value for x in at.latex if r"\text{word embeddings}" in x.value]
    assert len(layouts) == 2
    qkv = f"{count_params(cfg).by_name()['encoder.attention.qkv']:,}".replace(",", "{,}")
    for block in layouts:
        assert rf"n_{{att}}\cdot 3H^2 &&= {qkv}" in block or rf"n_{{att}}\cdot 3H^2 = {qkv}" in block
        assert r"3(H^2 + H)" not in block and "position embeddings" not in block
        assert r"n_{ffn}\cdot 2H\,I" in block
    every = " ".join(x.value for x in at.latex)
    assert "(V+P+T)E" not in every and r"\text{one layer} = 4H^2 + 3H\,I + 2H" in every


def test_a_sharing_scheme_gets_its_lora_rows_and_its_group_rule(app):
    """Issue 44: ALBERT-base with 2 groups in a cycle, unique ends, each layer twice and a rank-8 LoRA: a LoRA row per
    matrix (r (d_in + d_out) times the 20 positions that carry it, = count_params), G + 2 copy sets, the cycle's
    group rule, the repeat in the FLOPs; the paper's AlbertModel total said to be ALBERT's own scheme."""
    from albert_core import ModelConfig, count_params
    from ui.urls import config_to_query

    cfg = ModelConfig(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2, lora_rank=8)
    at = app(config_to_query(cfg), page=PAGE)
    assert not at.exception and not at.error
    layouts = [x.value for x in at.latex if r"\text{word embeddings}" in x.value]
    assert len(layouts) == 2
    by_name = count_params(cfg).by_name()
    assert by_name["encoder.lora.q"] == 20 * 8 * (768 + 768)
    for m, tex in (("q", r"n_{la}\cdot 2r\,H"), ("out", r"n_{lf}\,(r\,H + r\,I)")):
        value = f"{by_name[f'encoder.lora.{m}']:,}".replace(",", "{,}")
        assert all(tex in block and value in block for block in layouts), m
    every = " ".join(x.value for x in at.latex)
    assert r"(G + 2)\,K" in every
    captions = " ".join(c.value for c in at.caption)
    assert "n_la = 20 attention positions, n_lf = 20 FFN positions" in captions
    assert "uses group i mod G" in captions and "its own blocks for the first and last layers" in captions
    assert "every L K above is L K x 2" in captions and "is ALBERT's own scheme" in captions
