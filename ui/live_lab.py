"""The Live model page's "a run from the lab" source: finished lab checkpoints (the runs cache and
the shipped reference runs), loaded with trained weights and the run's own tokenizer, plus the two
demos only a trained model can give: fill the [MASK] and the sentence-order / next-sentence guess.

The visitor picks a run from a list (never types a path), so only the lab's own folders are read.
Pure parts (`fill_mask`, `order_prediction`, `lab_runs`) take no streamlit action; `render_source`
and `render_demos` draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from albert_core.format import escape_markdown
from albert_core.text.encoding import checkpoint_tokenizer, encode
from ui.state import seed_widget, sync_widget

SOURCE_KEY, SOURCE_LABEL = "lab", "A run from the lab"
PICK_KEY = "live_lab_run"
MASK_TEXT_KEY = "live_lab_mask_text"
SEG_A_KEY, SEG_B_KEY = "live_lab_seg_a", "live_lab_seg_b"
# the URL keys of the run picked and the texts typed (the share link reopens the same view)
URL_RUN, URL_MASK, URL_SEG_A, URL_SEG_B = "lab_run", "mask", "seg_a", "seg_b"
MASK_MAX_CHARS, SEGMENT_MAX_CHARS = 500, 300  # the widgets' limits, which a value from a link must fit too
TOP_K = 5
MAX_MASKS = 8
DEFAULT_MASK_TEXT = "The function returns a [MASK] of the items in the list."
DEFAULT_A = "Open the file before you read from it."
DEFAULT_B = "Close it when you are done."


@dataclass(frozen=True)
class LabRun:
    """A finished lab run on disk."""

    folder: Path
    label: str
    task: str
    steps: int
    val_mlm_loss: float
    shipped: bool
    max_positions: int
    final: dict[str, float] | None = None  # the run's final metrics with its baselines (run.json)

    @property
    def title(self) -> str:
        where = "shipped reference" if self.shipped else "trained here"
        loss = "" if math.isnan(self.val_mlm_loss) else f", val MLM loss {self.val_mlm_loss:.3g}"
        return f"{self.label} ({self.task.upper()}, {self.steps} steps{loss}; {where})"


def lab_roots() -> tuple[Path, ...]:
    """The folders lab checkpoints live in: the runs cache and the shipped reference checkpoints."""
    from albert_core import settings
    from albert_core.lab import reference

    roots = [settings.runs_dir()]
    shipped = getattr(reference, "CHECKPOINTS_DIR", None)
    if shipped is not None:
        roots.append(Path(shipped))
    return tuple(roots)


def lab_runs(roots: tuple[Path, ...] | None = None) -> list[LabRun]:
    """Every finished run with weights under ``roots`` (default `lab_roots()`), newest first; the
    last root's runs (the shipped references) after the visitor's own."""
    from albert_core.lab.checkpoint import RUN_FILE, load_run

    roots = lab_roots() if roots is None else roots
    out: list[LabRun] = []
    for i, root in enumerate(roots):
        if not root.is_dir():
            continue
        folders = sorted((f for f in root.iterdir() if (f / RUN_FILE).is_file()),
                         key=lambda f: (f / RUN_FILE).stat().st_mtime, reverse=True)
        for folder in folders:
            if not any(folder.glob("*.safetensors")):
                continue
            try:
                run = load_run(folder)
            except (ValueError, OSError, KeyError, TypeError):
                continue
            out.append(LabRun(folder, run.spec.name, run.spec.task, int(run.final.get("steps", run.spec.steps)),
                              float(run.final.get("val_mlm_loss", math.nan)), shipped=i > 0,
                              max_positions=run.spec.config.max_position_embeddings, final=dict(run.final)))
    return out


def held_out_summary(final: dict[str, float] | None, task: str) -> str:
    """What the run reached on its held-out pairs, beside the baselines of the same pairs, in words (empty
    for a run recorded without baselines)."""
    from albert_core.lab.baselines import mlm_verdict, order_verdict
    from albert_core.lab.outcome import baselines_from_final

    base = baselines_from_final(final or {})
    loss = float((final or {}).get("val_mlm_loss", math.nan))
    if base is None or not math.isfinite(loss):
        return ""
    acc = float(final.get("val_mlm_acc", math.nan))
    neighbour = base.neighbour_loss - loss
    text = (f"Measured on held-out text ({base.masked:,} masked pieces, every one shown as [MASK]): MLM loss "
            f"{loss:.3f} nats, {base.frequency_loss - loss:.2f} below the frequency-only model "
            f"({base.frequency_loss:.3f}) and {abs(neighbour):.2f} {'below' if neighbour >= 0 else 'above'} the "
            f"neighbour model ({base.neighbour_loss:.3f}): {mlm_verdict(loss, base)}. Right piece ranked first "
            f"{acc:.1%} of the time (always the most frequent piece: {base.frequency_acc:.1%}).")
    order_acc, ones = float(final.get("val_order_acc", math.nan)), float(final.get("val_order_ones", math.nan))
    if task in ("sop", "nsp") and math.isfinite(order_acc) and base.pairs:
        majority = 0.5 if base.order_majority is None else base.order_majority
        text += (f" {task.upper()}: {order_acc:.1%} right on {base.pairs:,} balanced held-out pairs (a constant "
                 f"answer scores {majority:.0%}), \"1\" answered {ones:.0%} of the time: "
                 f"{order_verdict(order_acc, ones, majority)}.")
    return text


@st.cache_data(ttl=5, max_entries=4, show_spinner=False)
def recent_lab_runs(roots: tuple[Path, ...]) -> list[LabRun]:
    """`lab_runs`, read from disk at most every few seconds (every rerun would reread every record)."""
    return lab_runs(roots)


def load_lab_model(folder: str, roots: tuple[str, ...], seq_len: int):
    """The trained model of a lab run (uncached: `ui.live.model_of` keeps it in the budgeted cache): a transformers layout through `load_pretrained_folder`
    (confined to the lab roots, budget-checked), partial sharing through the lab's own loader."""
    from albert_core.lab.checkpoint import load_model
    from albert_core.live.interop import confine_folder, load_pretrained_folder

    path = Path(folder)
    if (path / "config.json").is_file():
        return load_pretrained_folder(folder, allowed_roots=roots, batch=1, seq_len=seq_len)
    confine_folder(path.parent, roots)  # partial sharing: no config.json to confine by, check the parent
    return load_model(folder, seq_len=seq_len)


# ----------------------------------------------------------------------------- demos (pure)
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
        logits = model(**enc.tensors()).prediction_logits[0]  # (T, V)
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


def order_prediction(model: Any, folder: str | Path, a: str, b: str, max_len: int) -> pd.DataFrame:
    """The order head's P(class 0) for [CLS] A [SEP] B [SEP] and for the swapped pair: class 0 is
    "in order" (SOP) / "B follows A" (NSP), as transformers labels them."""
    import torch

    rows = []
    for order, (x, y) in (("as typed (A then B)", (a, b)), ("swapped (B then A)", (b, a))):
        enc = encode(x, model.config, max_len, y, folder)
        with torch.inference_mode():
            p = model(**enc.tensors()).order_logits[0].softmax(-1)
        rows.append({"pair": order, "p_in_order": float(p[0]), "tokens": len(enc)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- drawing
def render_source(max_tokens: int):
    """The run picker; returns (ModelRef, run) or stops the page with a message."""
    from ui import live

    runs = recent_lab_runs(lab_roots())
    if not runs:
        st.info("No finished lab run on this server yet: train one on the Train page, then come back.")
        st.stop()
    by_folder = {str(r.folder): r for r in runs}
    by_name = {Path(f).name: f for f in by_folder}  # a run's folder is named by its key: the URL carries that
    if st.session_state.get(PICK_KEY) not in by_folder:
        st.session_state.pop(PICK_KEY, None)
    seed_widget(URL_RUN, PICK_KEY, next(iter(by_folder)), by_name.__contains__)
    if st.session_state[PICK_KEY] in by_name:
        st.session_state[PICK_KEY] = by_name[st.session_state[PICK_KEY]]
    choice = st.selectbox("Lab run", list(by_folder), format_func=lambda f: by_folder[f].title, key=PICK_KEY,
                          help="Finished runs of the Train page (cached on this server) and the shipped "
                          "reference runs: trained weights and the run's own tokenizer.")
    sync_widget(URL_RUN, Path(choice).name, "")
    run = by_folder[choice]
    if summary := held_out_summary(run.final, run.task):
        st.caption(escape_markdown(summary))
    try:
        with st.spinner("Loading the trained weights (budget checked first)…"):
            mtime = max(f.stat().st_mtime_ns for f in run.folder.glob("*.safetensors"))  # run.json is touched on use
            seq_len = min(max_tokens, run.max_positions)
            roots = tuple(map(str, lab_roots()))
            model = live.lab_checkpoint_model(choice, mtime, roots, seq_len)
    except (ValueError, OSError) as exc:  # MemoryBudgetError and BusyError are ValueErrors
        st.error(f"Cannot load this run: {escape_markdown(str(exc))}")
        st.stop()
    return live.ModelRef(model.config, "fp32", seq_len, choice, mtime, roots, lab=True), run


def render_demos(model: Any, folder: str, run: LabRun, max_tokens: int) -> None:
    """Fill-the-mask and the sentence-order / next-sentence guess on the visitor's text."""
    st.subheader("Fill the mask")
    seed_widget(URL_MASK, MASK_TEXT_KEY, DEFAULT_MASK_TEXT, max_chars=MASK_MAX_CHARS)
    text = st.text_input("Text with [MASK] where a word should be guessed", max_chars=MASK_MAX_CHARS,
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
                   + f". The model saw {run.steps:,} training steps of a small corpus (Python's documentation and the "
                   "World English Bible, about a million words).")
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
    seed_widget(URL_SEG_A, SEG_A_KEY, DEFAULT_A, max_chars=SEGMENT_MAX_CHARS)
    seed_widget(URL_SEG_B, SEG_B_KEY, DEFAULT_B, max_chars=SEGMENT_MAX_CHARS)
    a = c[0].text_input("Segment A", max_chars=SEGMENT_MAX_CHARS, key=SEG_A_KEY)
    b = c[1].text_input("Segment B", max_chars=SEGMENT_MAX_CHARS, key=SEG_B_KEY)
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
