"""Paper & formulas: closed forms per component, the paper's tables recomputed, two circulating figures
reconciled, and how ALBERT builds its pre-training inputs (SOP vs NSP, n-gram masking)."""

from __future__ import annotations

import re

import streamlit as st

from albert_core import count_params
from albert_core.configuration.config import PAPER_FAMILIES, SHARING_SCHEME
from albert_core.format import escape_markdown, fmt_count, fmt_params, fmt_pct
from albert_core.paper import (
    PAPER,
    PAPER_TABLE5_CROSS,
    PAPER_VOCAB,
    QUOTED_BASELINE_ROW,
    QUOTED_EMBEDDING,
    QUOTED_VOCAB,
)
from albert_core.text.pretraining_inputs import ngram_mask
from ui.paper import cache
from ui.paper import formulas as paper_formulas
from ui.render import takeaway
from ui.state import current

cfg, wl = current()

st.title("Paper & formulas")
st.caption(escape_markdown(PAPER) + ". Every number below is recomputed by this app's exact counter; printed "
           "figures are quoted as printed.")


# ----------------------------------------------------------------------------- formulas
st.header("Formulas")
st.markdown(
    f"Symbols: V vocabulary, E embedding size, H hidden, I intermediate, P positions, T token types, L layers, "
    f"G groups (`num_hidden_groups`), K inner repeats (`inner_group_num`), B batch, S sequence length. "
    f"Values on the right are for the current config, **{cfg.label}**."
)
by_name = count_params(cfg).by_name()
# Each family's own closed forms: the axes decide every term (ui/paper/formulas.py); the value column is this app's
# exact count for the current config, and a test evaluates every formula shown against it.
shown = paper_formulas.formulas(cfg)
# one formula a line, none wider than a phone where it can be helped (a wider one scrolls sideways there)
# with unique first and last layers (a sharing scheme since ALBERT) the G groups share the middle: G + 2 copy sets
held = r"(G + 2)\,K" if cfg.unique_ends else r"G\,K"
ends_text = r",\ \text{unique ends}" if cfg.unique_ends else ""
st.latex(rf"n_{{att}} = \begin{{cases}} {held} & \text{{shared (all, attention)}}{ends_text} \\ L\,K & "
         r"\text{otherwise} \end{cases}")
st.latex(rf"n_{{ffn}} = \begin{{cases}} {held} & \text{{shared (all, ffn)}}{ends_text} \\ L\,K & "
         r"\text{otherwise} \end{cases}")
first_norm = (" n_an = n_att - 1: the first block's attention norm is the identity (no first-layer norm)."
              if any(f.copies == "n_an" for f in shown) else "")
kv_note = (f" H_kv = {cfg.kv_size}: the key and value width of {cfg.kv_heads} key/value heads."
           if cfg.kv_size != cfg.hidden_size else "") + (
    f" B_r = {cfg.position_buckets}: the relative-position buckets." if cfg.position == "relative" else "")
group_rule = "i mod G" if cfg.block_order == "cycle" else "int(i / (L / G))"
if cfg.unique_ends:
    group_rule = (f"its own blocks for the first and last layers; middle layer i (counted from 0 among the L - 2) "
                  f"uses group {group_rule.replace('L /', '(L - 2) /')}")
else:
    group_rule = f"group {group_rule}"
lora_note = ""
if cfg.lora_rank:
    lora_note = (f" A LoRA of rank r = {cfg.lora_rank} sits on each matrix it targets at every executed position of "
                 "the shared block, r (d_in + d_out) parameters each (it cannot be merged into a weight other "
                 f"positions share): n_la = {cfg.attention_lora_positions} attention positions, n_lf = "
                 f"{cfg.ffn_lora_positions} FFN positions ((L - 2 x unique ends) K x repeat on a shared block; L K x "
                 "repeat on an unshared one when layers repeat).")
repeat_note = (f" Every layer runs {cfg.repeat} times in a row: the parameters do not change, the executed layers are "
               f"L K x {cfg.repeat} = {cfg.executed_layers}." if cfg.repeat > 1 else "")
st.caption(f"Here n_att = {cfg.attention_copies}, n_ffn = {cfg.ffn_copies}; layer i uses {group_rule}."
           f"{first_norm}{kv_note}{lora_note}{repeat_note} The tied MLM decoder reuses the word-embedding matrix, so "
           "it adds nothing unless untied.")
rows = [(f.label, f.tex(), f"{by_name[f.component]:,}".replace(",", "{,}")) for f in shown]
# Two layouts of the same rows; ui/layout.css shows the one that fits: label, closed form and value in aligned columns
# (about 540 px wide), or on a phone each label above its closed form and value.
with st.container(key="paper_formulas"):
    with st.container(key="paper_formulas_wide"):
        st.latex(r"\begin{aligned}" + r" \\ ".join(rf"\text{{{label}}} &= {tex} &&= {value}"
                                                    for label, tex, value in rows) + r"\end{aligned}")
    with st.container(key="paper_formulas_narrow"):
        st.latex(r"\begin{aligned}" + r" \\[4pt] ".join(rf"&\text{{{label}}} \\ &\quad = {tex} = {value}"
                                                         for label, tex, value in rows) + r"\end{aligned}")
st.latex(r"\text{one layer} = " + paper_formulas.one_layer(cfg).tex())
scheme = [f"{name} {getattr(cfg, name)}" for name, value in SHARING_SCHEME.items() if getattr(cfg, name) != value]
if cfg.family in PAPER_FAMILIES:  # the paper's own total (BERT's and ALBERT's layout only)
    st.latex(r"\begin{aligned} &\text{AlbertModel (all-shared)} \\ &= (V+P+T)E + 2E + EH + H \\ "
             r"&\quad + GK\,(4H^2 + 2HI + 9H + I) \\ &\quad + H^2 + H \end{aligned}")
    if scheme:
        st.caption(f"The paper's total is ALBERT's own scheme; this config's ({escape_markdown(', '.join(scheme))}) "
                   "is counted by the rows above, each with its closed form.")
st.markdown("**FLOPs** (matmul convention: a multiply-add is 2 FLOPs; MACs are half)" + (
    ":" if cfg.family in PAPER_FAMILIES else f". These closed forms are BERT's and ALBERT's; {cfg.label}'s own layout "
    "(its FFN, key/value heads, attention window, heads) changes their terms: its exact FLOPs, component by "
    "component, are on the Explorer."))
if cfg.is_factorized:  # only a factorized embedding (ALBERT's) is projected from E to H
    st.latex(r"\begin{aligned} \text{fwd} &= 2BSEH + 2BH^2 \\ &+ LK\,(8BSH^2 + 4BS^2H + 4BSHI) \end{aligned}")
    st.caption("2BSEH is ALBERT's E → H projection of the embeddings; a BERT has none (E = H, no projection).")
else:
    st.latex(r"\begin{aligned} \text{fwd} &= 2BH^2 \\ &+ L\,(8BSH^2 + 4BS^2H + 4BSHI) \end{aligned}")
    st.caption("A BERT looks its embeddings up at width H: no projection term (ALBERT adds 2BSEH for E → H).")
if cfg.repeat > 1 or cfg.lora_rank:
    st.caption(
        (f"With each layer run {cfg.repeat} times, every L K above is L K x {cfg.repeat}. " if cfg.repeat > 1 else "")
        + ("A LoRA adds 2BS r (d_in + d_out) at each position that carries it (n_la, n_lf above): on a shared "
           "weight it cannot be merged in." if cfg.lora_rank else ""))
st.latex(r"\begin{aligned} &\text{pre-training heads add} \\ &2BSHE + 2BSEV + 2BHC \\ "
         r"&(C = 2 \text{ order classes}) \end{aligned}")
st.latex(r"\begin{aligned} &\text{training step} \approx 3 \times \text{fwd} \\ "
         r"&(\text{+ one forward of the } LK \text{ encoder layers} \\ &\ \text{with gradient checkpointing}) "
         r"\end{aligned}")
st.markdown("Sharing appears in the parameter formulas (through G) but not in the FLOPs: the shared layer still "
            "runs L·K times. **Memory:** weights = N·b, gradients = N·b, optimizer = s·N·b (SGD momentum s = 1, "
            "Adam s = 2) for N parameters of b bytes; activations grow with B·S·H·L·K (and B·S²·heads for the "
            "attention probabilities), whatever the sharing.")

# ----------------------------------------------------------------------------- paper tables
st.header("The paper's tables, recomputed")
EXACT_WIDTH_PX = 112  # 11 characters of a 14-px digit font plus the cell's padding
FMT = {
    "model": st.column_config.TextColumn("Model", width="medium"),
    # formats of the browser (as printed: 235M; exact: 334,607,360; +0.18%), not a pandas Styler: Streamlit
    # writes a Styler's display values cell by cell, over half of this page's rerun
    "printed": st.column_config.NumberColumn("Printed", width="small", format="compact",
                                             help="As printed in the paper."),
    # wide enough for "334,607,360": a "small" column cut its leading digits on a phone ("34,607,360")
    "recomputed": st.column_config.NumberColumn("Exact", width=EXACT_WIDTH_PX, format="localized",
                                                help="This app's exact count."),
    "difference": st.column_config.NumberColumn("Difference", width="small", format="%+.2f%%",
                                                help="Recomputed / printed - 1."),
    "note": st.column_config.TextColumn("Note", width="large"),
}

st.subheader("Table 1: model sizes")
st.dataframe(cache.table1(), hide_index=True, width="stretch", column_config=FMT)
st.caption(f"Recomputed: transformers' XModel (encoder + pooler) at V = {PAPER_VOCAB:,}, P = 512, T = 2. The paper "
           "rounds to whole millions and does not say whether the pooler and biases are counted: differences of a "
           "few percent are that rounding and convention. ALBERT-xxlarge is 222.6M exact; the paper prints 235M in "
           "Table 1 and 233M in its text, and no counting convention reproduces either (the pre-training heads "
           "add only 0.56M).")

st.subheader("Table 3: the embedding size E (ALBERT-base)")
st.dataframe(cache.table3(), hide_index=True, width="stretch", column_config=FMT,
             column_order=["model", "printed", "recomputed", "difference"])  # the one note is below
emb_saving, share_saving = cache.table3_savings()
takeaway(f"shrinking E from 768 to 128 saves {fmt_params(emb_saving)} parameters; sharing every layer saves "
         f"{fmt_params(share_saving)} more. (The E→H projection and the pooler add 0.59M each to the E = 768 row, "
         "which the printed 108M, BERT-base's figure, leaves out.)")

st.subheader("Table 4: cross-layer sharing (ALBERT-base)")
st.dataframe(cache.table4(), hide_index=True, width="stretch", column_config=FMT,
             column_order=["model", "printed", "recomputed", "difference"])
takeaway("the FFN block (2HI) is twice the attention block (4H²) at I = 4H, so sharing the FFN saves more than "
         "sharing attention. Every mode runs the same FLOPs.")

# ----------------------------------------------------------------------------- circulating figures
st.header("Two circulating figures, reconciled")
st.markdown(f"**Embedding parameters, V·H against V·E + E·H** (V = {QUOTED_VOCAB:,}, E = {QUOTED_EMBEDDING}):")
st.dataframe(cache.embedding_formula(), hide_index=True, width="stretch",
             column_config={k: st.column_config.NumberColumn(k, format="localized")
                            for k in ("V·H (BERT)", "V·E + E·H (ALBERT)")}
             | {"reduction": st.column_config.NumberColumn("Reduction", format="percent")})
baseline, printed_change = QUOTED_BASELINE_ROW
bert_vh = QUOTED_VOCAB * 768
st.markdown(
    f"The circulating table opens with a row this one leaves out, *BERT-Base (baseline) {baseline:,}, "
    f"{fmt_pct(printed_change, 1, signed=True)}*. That row is the factorized formula evaluated at E = H = 768: "
    f"V·H + H·H = {fmt_count(bert_vh + 768 * 768)}, that is "
    f"{fmt_pct((bert_vh + 768 * 768) / bert_vh - 1, signed=True)} against BERT's {fmt_count(bert_vh)}. "
    "Factorizing without shrinking E costs parameters."
)
st.markdown(f"**An `estimate_albert_params` helper** (V = {QUOTED_VOCAB:,}, pre-training heads):")
st.dataframe(cache.estimate_formula(), hide_index=True, width="stretch",
             column_config={k: st.column_config.NumberColumn(k, format="localized")
                            for k in ("exact", "+ V·E again", "− left out", "= quoted formula")}
             | {"quoted": st.column_config.TextColumn("quoted", alignment="right",
                                                   help="The helper's totals as quoted.")})
st.caption("The estimate counts the MLM decoder a second time (it is tied to the word embeddings: the same V·E "
           "weights) and leaves out the embedding LayerNorm, the E→H projection bias, the MLM output bias and "
           "the SOP bias. With those corrections its formula reproduces every quoted figure; the exact count "
           "is 3.9M lower.")

# ----------------------------------------------------------------------------- pre-training inputs
st.header("Pre-training inputs: NSP, SOP and n-gram masking")
SAMPLE = ("The cat sat on the mat. It was warm in the sun. Then it fell asleep.\n\n"
          "Transformers read every token at once. Attention compares each pair of positions.")
text = st.text_area("Sample text (blank lines separate documents)", SAMPLE, key="paper_text", max_chars=2000,
                    help="Sentences end with . ! or ?; paragraphs are documents.")

st.markdown(
    "A segment is one or more consecutive sentences of a document: consecutive sentences are gathered up to a "
    "target length and cut at a random sentence boundary into A and B.\n"
    "- **NSP (BERT):** positive = A and the segment that follows it; negative = A with a segment from a random "
    "point of *another* document. The negative differs in topic, so the task is mostly topic prediction.\n"
    "- **SOP (ALBERT):** positive = two consecutive segments in order; negative = **the same two segments "
    f"swapped**. Topic cannot help, so the model must learn discourse coherence (paper Table 5: NSP solves "
    f"SOP at {PAPER_TABLE5_CROSS['nsp_on_sop']:g}%, SOP solves NSP at {PAPER_TABLE5_CROSS['sop_on_nsp']:g}%)."
)


try:
    pairs_of = cache.paper_pair_tables(text)
    pair_cols = {
        "kind": st.column_config.TextColumn("Example", width=110),
        "a": st.column_config.TextColumn("Segment A", width=370),
        "b": st.column_config.TextColumn("Segment B", width=370),
        "label": st.column_config.NumberColumn("Label", width=70, help="0 = positive, 1 = negative."),
    }
    st.caption("Built by the code the Train page's lab trains with (the algorithm of BERT's and ALBERT's "
               "create_pretraining_data.py): here at most 12 words a pair, where the lab counts tokenizer pieces up "
               "to its sequence length, and three passes over the text, each with its own random draws.")
    for title, task in (("SOP pairs (ALBERT)", "sop"), ("NSP pairs (BERT)", "nsp")):
        st.markdown(f"**{title}**")
        st.dataframe(pairs_of[task], hide_index=True, width="stretch", column_config=pair_cols)
    words = re.findall(r"\w+|[^\w\s]", text.lower())[:200]
    st.markdown("**MLM with n-gram masking** (n ≤ 3, p(n) ∝ 1/n: 6/11, 3/11, 2/11; 15% of the tokens):")
    seed_col, _ = st.columns([1, 4])
    with seed_col:
        seed = st.number_input("Masking seed", 0, 10_000, 0, key="paper_mask_seed",
                               help="Another seed draws other spans from the same text.")
    masked = ngram_mask(words, seed=int(seed))
    st.code(" ".join(masked.tokens), language=None, wrap_lines=True)
    spans = ", ".join(f"“{' '.join(words[i:i + n])}” ({n}-gram at word {i + 1})" for i, n in sorted(masked.spans))
    st.caption(escape_markdown(f"Masked {len(masked.positions)} of {len(words)} tokens: {spans}. The model must "
                     "predict each masked word from the context on both sides."))
except ValueError as exc:
    st.warning(escape_markdown(f"Could not build examples: {exc}"))

# ----------------------------------------------------------------------------- the encoders after BERT
st.header("The encoders after BERT")
st.markdown(
    "Beside BERT and ALBERT, the explorer counts, builds and ALBERTizes RoBERTa, XLM-R, ELECTRA, DeBERTa-v3, "
    "ModernBERT (and Ettin and mmBERT, which use its architecture), EuroBERT and NomicBERT. A configuration "
    "describes each by the axes they differ on:\n"
    "- **feed-forward**: dense (up H→I, down I→H) or gated (GLU: act(gate) × up). `intermediate_size` means three "
    "things: BERT's one up projection; ModernBERT's `Wi = Linear(H, 2I)` (input and gate fused); EuroBERT's and "
    "NomicBERT's gate, up and down of I each. A GLU holds 1.5× the parameters of a dense FFN of the same I.\n"
    "- **positions**: a learned table (RoBERTa's starts after the padding id: 514 rows for 512 tokens), rotary (no "
    "table), or DeBERTa's relative buckets (2 × 256 rows, projected by every layer).\n"
    "- **norms and biases**: post-LN (BERT) or pre-LN with a final norm (ModernBERT, EuroBERT), LayerNorm with or "
    "without bias or RMSNorm, biases on or off per linear.\n"
    "- **attention**: grouped key/value heads (EuroBERT: 6 for 18), ModernBERT's local attention (`local_attention` "
    "is the whole window: 64 tokens each side; transformers' `sliding_window` is that half) with a global layer "
    "every third.\n"
    "- **heads**: BERT's pooler where the family has one, an MLM transform or EuroBERT's decoder alone, tied or "
    "untied, ELECTRA's replaced-token discriminator.\n"
    "- **ALBERT's two ideas on any of them**: a factorized embedding E and cross-layer sharing (all, attention or "
    "FFN; G groups, K repeats). Pick a preset or a family in the sidebar: the Explorer, Compare and Scaling then "
    "compare the encoder with its ALBERTized twin."
)
st.dataframe(cache.encoder_presets_table(), hide_index=True, width="stretch", column_config={
    "params": st.column_config.NumberColumn("params (exact)", format="localized",
                                            help="count_params: equal to transformers' own class on the meta "
                                                 "device (a test, every preset)."),
    "published": st.column_config.TextColumn("published", help="The total its authors print, as printed."),
    "embedding share": st.column_config.ProgressColumn("embedding share", format="percent", min_value=0, max_value=1),
    "source": st.column_config.TextColumn("source", width="large"),
})
st.caption("Every count is within 3.5 % of its published figure: the published ones are rounded, EuroBERT's leave "
           "out the MLM head, and XLM-R's paper prints 270M and 550M for checkpoints of 278M and 560M.")
