"""The Live model page's "a run from the lab" source: the finished lab runs (the runs cache and the shipped
reference runs) with what each reached on held-out text, and the picker that loads one with its trained
weights (`ui.live.models.lab_checkpoint_model`). The demos only a trained model can give are in
`ui.live.lab_demos`.

The visitor picks a run from a list (never types a path), so only the lab's own folders are read.
`lab_runs` and `held_out_summary` take no streamlit action; `render_source` draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from albert_core.format import escape_markdown, fmt_nat_gap
from ui.live.models import ModelRef, lab_checkpoint_model
from ui.url_state import seed_widget, sync_widget

SOURCE_KEY, SOURCE_LABEL = "lab", "A run from the lab"
PICK_KEY = "live_lab_run"
URL_RUN = "lab_run"  # the URL key of the run picked (the share link reopens the same view)


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
    text = (f"Measured on held-out text ({base.masked:,} masked pieces, every one shown as [MASK]): MLM loss "
            f"{loss:.3f} nats, {fmt_nat_gap([base.frequency_loss - loss], 'the frequency-only model')} "
            f"({base.frequency_loss:.3f}) and {fmt_nat_gap([base.neighbour_loss - loss], 'the neighbour model')} "
            f"({base.neighbour_loss:.3f}): {mlm_verdict(loss, base)}. Right piece ranked first "
            f"{acc:.1%} of the time (the neighbour model: {base.neighbour_acc:.1%}; always the most frequent piece: "
            f"{base.frequency_acc:.1%}).")
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


# ----------------------------------------------------------------------------- drawing
def render_source(max_tokens: int) -> tuple[ModelRef, LabRun]:
    """The run picker; returns (ModelRef, run) or stops the page with a message."""
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
    folders = list(by_folder)
    choice = st.selectbox("Lab run", folders, index=folders.index(st.session_state[PICK_KEY]),
                          format_func=lambda f: by_folder[f].title, key=PICK_KEY,
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
            model = lab_checkpoint_model(choice, mtime, roots, seq_len)
    except (ValueError, OSError) as exc:  # MemoryBudgetError and BusyError are ValueErrors
        st.error(f"Cannot load this run: {escape_markdown(str(exc))}")
        st.stop()
    return ModelRef(model.config, "fp32", seq_len, choice, mtime, roots, lab=True), run
