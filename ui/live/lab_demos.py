"""The two demos only a trained lab run can give on the Live model page: fill the [MASK] (beside what the
run's baselines would guess) and the sentence-order / next-sentence guess, on the visitor's text.

`fill_mask`, `baseline_guesses` and `order_prediction` take no streamlit action; `render_demos` draws.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from albert_core.format import escape_markdown, fmt_params
from albert_core.text.encoding import checkpoint_tokenizer, encode
from ui.live.lab import LabRun
from ui.url_state import seed_widget, sync_widget

MASK_TEXT_KEY = "live_lab_mask_text"
SEG_A_KEY, SEG_B_KEY = "live_lab_seg_a", "live_lab_seg_b"
# the URL keys of the texts typed (the share link reopens the same view)
URL_MASK, URL_SEG_A, URL_SEG_B = "mask", "seg_a", "seg_b"
MASK_MAX_CHARS, SEGMENT_MAX_CHARS = 500, 300  # the widgets' limits, which a value from a link must fit too
TOP_K = 5
MAX_MASKS = 8
DEFAULT_MASK_TEXT = "The function returns a [MASK] of the items in the list."
DEFAULT_A = "Open the file before you read from it."
DEFAULT_B = "Close it when you are done."


def fill_mask(model: Any, folder: str | Path, text: str, max_len: int, k: int = TOP_K) -> pd.DataFrame:
    """Top-``k`` predictions of the MLM head for every [MASK] in ``text`` (at most MAX_MASKS):
    columns mask (1-based), position, rank, token, probability. Special tokens are never proposed."""
    import torch

    tok = checkpoint_tokenizer(str(Path(folder).resolve()))
    if tok is None or tok.mask_token_id is None:
        raise ValueError("this run has no tokenizer with a [MASK] token")
    enc = encode(text, model.config, max_len, None, folder)
    positions = [i for i, t in enumerate(enc.ids) if t == tok.mask_token_id]
    if not positions:
        raise ValueError("type [MASK] where a word should be guessed, e.g. 'open the [MASK] first'")
    if len(positions) > MAX_MASKS:
        raise ValueError(f"at most {MAX_MASKS} [MASK] tokens at once, got {len(positions)}")
    with torch.inference_mode():
        logits = model(**enc.tensors(model.config.type_vocab_size)).prediction_logits[0]  # (T, V)
    logits = logits.clone()
    logits[:, list(tok.all_special_ids)] = -math.inf
    probs = logits.softmax(-1)
    rows = []
    for m, pos in enumerate(positions, start=1):
        top = probs[pos].topk(k)
        for rank, (p, i) in enumerate(zip(top.values.tolist(), top.indices.tolist(), strict=True), start=1):
            rows.append({"mask": m, "position": pos, "rank": rank, "token": tok.convert_ids_to_tokens(i),
                         "probability": p})
    return pd.DataFrame(rows)


def baseline_guesses(folder: str | Path, text: str, model_config: Any, max_len: int, k: int = TOP_K) -> list[str]:
    """For every [MASK] in ``text``: what the two baselines of the run's tokenizer would answer (top ``k``):
    the frequency-only model (the same for every mask) and the neighbour model (from the visible pieces
    left and right of it). A trained model that beats them answers from context."""
    from albert_core.lab import baselines
    from albert_core.lab.checkpoint import load_run

    spec = load_run(folder).spec
    tok = checkpoint_tokenizer(str(Path(folder).resolve()))
    counts = baselines.train_counts(spec.tokenizer_kind, spec.vocab_size)
    enc = encode(text, model_config, max_len, None, folder)
    ids = list(enc.ids)
    p = baselines.frequency_probs(counts)

    def top(dist: Any) -> str:
        return ", ".join(tok.convert_ids_to_tokens(int(i)) for i in dist.argsort()[::-1][:k])

    lines = [f"frequency-only model, every mask: {top(p)}"]
    positions = [i for i, t in enumerate(ids) if t == tok.mask_token_id][:MAX_MASKS]
    for m, pos in enumerate(positions, start=1):
        left = ids[pos - 1] if pos > 0 and ids[pos - 1] >= baselines.N_SPECIAL else None
        right = ids[pos + 1] if pos + 1 < len(ids) and ids[pos + 1] >= baselines.N_SPECIAL else None
        lines.append(f"neighbour model, mask {m}: {top(baselines.neighbour_distribution(counts, left, right, p))}")
    return lines


def mask_expectation(final: dict[str, float] | None, params: int, steps: int) -> str:
    """What a model this small can be expected to guess, before it guesses: its size and training, and how
    often its first guess was right on held-out text beside the two baselines of the same text (empty for a
    run recorded without them)."""
    from albert_core.lab.outcome import baselines_from_final

    base = baselines_from_final(final or {})
    acc = float((final or {}).get("val_mlm_acc", math.nan))
    if base is None or not math.isfinite(acc):
        return ""
    odds = f" (about 1 in {round(1 / acc)})" if acc > 0 else ""
    return (f"What to expect: a model of {fmt_params(params)} parameters trained {steps:,} steps on a small corpus "
            "(Python's documentation and the World English Bible, about a million words). On held-out text its "
            f"first guess was the hidden piece {acc:.1%} of the time{odds}; a bigram of the two adjacent pieces "
            f"(the neighbour model) was right {base.neighbour_acc:.1%} of the time, always answering the most "
            f"frequent piece {base.frequency_acc:.1%}. So expect frequent pieces and pieces that fit beside their "
            "neighbours more often than the word a reader would choose; the baselines' guesses are below its own.")


def order_prediction(model: Any, folder: str | Path, a: str, b: str, max_len: int) -> pd.DataFrame:
    """The order head's P(class 0) for [CLS] A [SEP] B [SEP] and for the swapped pair: class 0 is
    "in order" (SOP) / "B follows A" (NSP), as transformers labels them."""
    import torch

    rows = []
    for order, (x, y) in (("as typed (A then B)", (a, b)), ("swapped (B then A)", (b, a))):
        enc = encode(x, model.config, max_len, y, folder)
        with torch.inference_mode():
            p = model(**enc.tensors(model.config.type_vocab_size)).order_logits[0].softmax(-1)
        rows.append({"pair": order, "p_in_order": float(p[0]), "tokens": len(enc)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- drawing
def render_demos(model: Any, folder: str, run: LabRun, max_tokens: int) -> None:
    """Fill-the-mask and the sentence-order / next-sentence guess on the visitor's text."""
    st.subheader("Fill the mask")
    if expectation := mask_expectation(run.final, sum(p.numel() for p in model.parameters()), run.steps):
        st.caption(escape_markdown(expectation))
    seeded = seed_widget(URL_MASK, MASK_TEXT_KEY, DEFAULT_MASK_TEXT, max_chars=MASK_MAX_CHARS)
    text = st.text_input("Text with [MASK] where a word should be guessed", seeded, max_chars=MASK_MAX_CHARS,
                         key=MASK_TEXT_KEY)
    sync_widget(URL_MASK, text, DEFAULT_MASK_TEXT)
    try:
        preds = fill_mask(model, folder, text, max_tokens)
    except ValueError as exc:
        st.warning(escape_markdown(str(exc)))
    else:
        st.dataframe(preds, hide_index=True, key="live_lab_fill", column_config={
            "probability": st.column_config.ProgressColumn("probability", format="percent", min_value=0.0,
                                                           max_value=1.0)})
        best = preds[preds["rank"] == 1]
        st.caption("Top guess per mask: " + ", ".join(f"{escape_markdown(t)} ({p:.1%})" for t, p in
                                                      zip(best["token"], best["probability"], strict=True))
                   + ".")
        try:
            lines = baseline_guesses(folder, text, model.config, max_tokens)
        except (ValueError, OSError) as exc:
            st.caption(escape_markdown(f"No baseline guesses for this run: {exc}"))
        else:
            st.markdown("**Beside it, the baselines** (top 5): a model that only learned frequencies answers the "
                        "first line for every mask.\n" + "\n".join(f"- {escape_markdown(x)}" for x in lines))

    task = {"sop": "sentence order (SOP)", "nsp": "next sentence (NSP)"}.get(run.task)
    st.subheader("Sentence order" if run.task != "nsp" else "Next sentence")
    c = st.columns(2)
    seeded_a = seed_widget(URL_SEG_A, SEG_A_KEY, DEFAULT_A, max_chars=SEGMENT_MAX_CHARS)
    seeded_b = seed_widget(URL_SEG_B, SEG_B_KEY, DEFAULT_B, max_chars=SEGMENT_MAX_CHARS)
    a = c[0].text_input("Segment A", seeded_a, max_chars=SEGMENT_MAX_CHARS, key=SEG_A_KEY)
    b = c[1].text_input("Segment B", seeded_b, max_chars=SEGMENT_MAX_CHARS, key=SEG_B_KEY)
    sync_widget(URL_SEG_A, a, DEFAULT_A)
    sync_widget(URL_SEG_B, b, DEFAULT_B)
    if not a.strip() or not b.strip():
        st.info("Type both segments.")
        return
    table = order_prediction(model, folder, a, b, max_tokens)
    st.dataframe(table, hide_index=True, key="live_lab_order", column_config={
        "p_in_order": st.column_config.ProgressColumn(
            "P(in order)" if run.task != "nsp" else "P(B follows A)", format="percent", min_value=0.0,
            max_value=1.0)})
    if task is None:
        st.caption("This run trained MLM only: its order head never received a loss, so these numbers are "
                   "untrained guesses.")
    else:
        st.caption(f"The order head was trained on {task}; class 0 = in order / B follows A, as in "
                   "transformers. A model that learned the task gives the typed order a higher probability "
                   "than the swapped one.")
