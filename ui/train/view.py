"""Streamlit side of the Train page: the visitor's run ids (session + URL), the run planner's cost
table, and the live panel of runs (progress, cancel, curves, runs table) polled with a fragment.

Training never happens here: runs go to `albert_core.lab.worker.get_worker()` and the panel only
reads their status, so every other widget stays responsive while a run trains.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from albert_core.format import escape_markdown, fmt_bytes, fmt_duration, fmt_flops, fmt_nat_gap, fmt_params
from albert_core.lab import trainer
from albert_core.lab.baselines import Baselines
from albert_core.lab.probe import RECIPE as probe_recipe
from albert_core.lab.spec import RunSpec
from albert_core.lab.worker import PROBE_STOPPED, QueueFullError, RunStatus, get_worker
from albert_core.paper import SMOOTHNESS_FIGURE
from albert_core.text.tokenizers import SHIPPED_VOCAB_SIZES, check_request
from ui.owner import owner
from ui.render import chart
from ui.train import figures as ft
from ui.train import runs as tr
from ui.train.live_chart import live_plotly_chart
from ui.url_state import seed_from_url_once

RUNS_KEY = "train_run_ids"  # session state: the visitor's run ids, in order
_SEEDED = "_train_seeded"
_ERRORS = "_train_submit_errors"
URL_RUNS, URL_EXP = "run", "exp"
POLL_S = 1.0
METRIC_KEY = "train_metric"


# ----------------------------------------------------------------------------- run ids (session + URL)
def run_ids() -> list[str]:
    """The visitor's run ids: from the URL on the first run of a session, then the session's."""
    ss = st.session_state

    def seed(query: dict[str, str]) -> list[str]:
        ss[RUNS_KEY], problems = tr.parse_run_ids(query.get(URL_RUNS))
        return problems

    seed_from_url_once(_SEEDED, seed)
    return list(ss.get(RUNS_KEY, []))


def set_run_ids(ids: Sequence[str]) -> None:
    value = tr.format_run_ids(ids)
    st.session_state[RUNS_KEY] = value.split(",") if value else []
    if value:
        st.query_params[URL_RUNS] = value
    elif URL_RUNS in st.query_params:
        del st.query_params[URL_RUNS]


# ----------------------------------------------------------------------------- planning
def plan_frame(specs: Sequence[RunSpec]) -> tuple[pd.DataFrame, list[str]]:
    """One row per planned run with its exact cost (params, training FLOPs per step, memory estimate; a probed
    run's downstream probe FLOPs, an estimate) and the plain-text problems of runs over a lab limit."""
    rows, problems = [], []
    for s in specs:
        try:
            check_request(s.tokenizer_kind, s.vocab_size)  # the vocabulary a lab tokenizer can have
            cost = trainer.check_run(s)
            ok = "ok"
        except ValueError as exc:  # LabLimitError names the limit
            cost = trainer.run_cost(s)
            ok = "over a limit"
            problems.append(f"{s.name}, seed {s.seed}: {exc}")
        rows.append({"run": s.name, "seed": s.seed, "config": s.config.label, "task": s.task,
                     "params": cost.params, "train_flops_per_step": cost.flops_per_step,
                     "flops_per_step": fmt_flops(cost.flops_per_step), "tokens_per_step": s.tokens_per_step,
                     "steps": s.steps, "probe_flops_estimate": cost.probe_flops,
                     "probe_flops": fmt_flops(cost.probe_flops) if s.probe else None,
                     "memory_estimate": fmt_bytes(cost.memory_bytes), "limits": ok})
    return pd.DataFrame(rows), problems


# the probe's split of the Rotten Tomatoes sentences (`albert_core.lab.probe.sentences().counts`; a test checks)
PROBE_TRAIN_SENTENCES, PROBE_DEV_SENTENCES = 6836, 1694
PROBE_HELP = (
    f"Once trained, the run's encoder and the same model from random weights are each fine-tuned on "
    f"{PROBE_TRAIN_SENTENCES:,} movie-review sentences (Rotten Tomatoes sentence polarity), with "
    f"{len(probe_recipe.seeds)} seeds each, and "
    f"scored on {PROBE_DEV_SENTENCES:,} held-out sentences beside a bag-of-words regression and the majority class: "
    "did pretraining help? Adds several minutes of CPU per run."
)


def show_plan(specs: Sequence[RunSpec]) -> list[str]:
    df, problems = plan_frame(specs)
    hidden = {"train_flops_per_step", "probe_flops_estimate"} | ({"probe_flops"} if not any(s.probe for s in specs)
                                                                  else set())
    st.dataframe(df, hide_index=True, key="train_plan", placeholder=MISSING,
                 column_order=[c for c in df.columns if c not in hidden],
                 column_config={
        "params": st.column_config.NumberColumn("params (exact)", format="localized"),
        "flops_per_step": st.column_config.TextColumn(
            "training FLOPs / step", help="count_flops(...).training: forward + backward matmul FLOPs of one "
            "batch (exact)."),
        "tokens_per_step": st.column_config.NumberColumn("tokens / step", format="localized"),
        "probe_flops": st.column_config.TextColumn(
            "downstream probe FLOPs (estimate)", help="probe_cost: every fine-tuning step of the probe (the trained "
            "encoder and the same model from scratch) counted at 64 pieces a sentence, plus scoring the held-out "
            "sentences; the run's training comes first. " + PROBE_HELP),
        "memory_estimate": st.column_config.TextColumn(
            "training memory (estimate)",
            help="estimate_memory: weights, gradients, AdamW states (exact) + activations (estimate); for a probed "
            "run the larger of pretraining and the probe's fine-tuning."),
    })
    for p in problems:
        st.error(escape_markdown(p))
    unshipped = sorted({s.vocab_size for s in specs} - set(SHIPPED_VOCAB_SIZES))
    if unshipped and not problems:
        st.caption(f"No tokenizer of V = {', '.join(f'{v:,}' for v in unshipped)} ships with the lab (it has "
                   f"{', '.join(f'{v:,}' for v in SHIPPED_VOCAB_SIZES)}): the first run trains one on the corpus, "
                   "and fails with a message if the corpus yields fewer pieces.")
    return problems


def _measured_on() -> str:
    from albert_core.lab.reference import reference_cpus

    return f"measured on {' and '.join(reference_cpus()) or 'an unrecorded CPU'}, one thread per run"


@st.cache_data(show_spinner=False)
def reference_pace() -> tuple[float, str] | None:
    """(wall seconds per training FLOP, where) of the shipped reference runs, measured when they were made."""
    from albert_core.lab.reference import load_reference

    results = [r for runs in load_reference().values() for r in runs]
    if not results:
        return None
    paces = sorted(r.seconds / (trainer.run_cost(r.spec).flops_per_step * r.spec.steps) for r in results)
    return paces[len(paces) // 2], f"the shipped reference runs' median pace, {_measured_on()}"


@st.cache_data(show_spinner=False)
def reference_outcome(steps: int) -> str:
    """What the shipped reference runs of ``steps`` steps reached, in words: the range of nats below the
    frequency-only model and of wall minutes, and the CPU, all read from the shipped runs (so the page's help
    follows them when they are re-made)."""
    from albert_core.lab.reference import load_reference

    runs = list({r.spec.key: r for rs in load_reference().values() for r in rs if r.spec.steps == steps}.values())
    below = [r.final["baseline_frequency_loss"] - r.final["val_mlm_loss"] for r in runs
             if r.final.get("baseline_frequency_loss") is not None and r.final.get("val_mlm_loss") is not None]
    if not below:
        return ""
    minutes = [r.seconds / 60 for r in runs]
    return (f"{steps:,} steps went {fmt_nat_gap(below, 'the frequency-only model')} in the "
            f"{len(runs)} shipped reference runs ({min(minutes):.1f}-{max(minutes):.1f} minutes each, "
            f"{_measured_on()}).")


AT_ONCE = {1: "one at a time", 2: "two at a time", 3: "three at a time", 4: "four at a time"}


PROBE_PACE_FILE = Path(__file__).resolve().parents[2] / "albert_core" / "lab" / "reference" / "probe_pace.json"


@st.cache_data(show_spinner=False)
def probe_pace() -> dict | None:
    """The downstream probe's measured wall time against its estimated FLOPs (scripts/measure_probe_pace.py: a tiny
    run with its probe on this machine, one thread), or None when the file is missing."""
    try:
        doc = json.loads(PROBE_PACE_FILE.read_text())
        return {"seconds_per_flop": float(doc["probe_seconds_per_flop"]), "ratio": float(doc["probe_pace_ratio"]),
                "seconds": float(doc["probe_seconds"]), "cpu": str(doc["environment"]["cpu"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def queue_note(specs: Sequence[RunSpec]) -> str:
    """What pressing Train starts, before it starts: the runs join this server's queue, train as many at a
    time as its worker does, and take about so long at the pace this server measured on its finished runs
    (else, labelled as an estimate, the shipped reference runs' pace on their named CPU), and how many runs
    are queued or running before them."""
    worker = get_worker()
    n = len(specs)
    costs = [trainer.run_cost(s) for s in specs]
    at_once = min(worker.workers, n)
    train_flops = sum(c.flops_per_step * s.steps for c, s in zip(costs, specs, strict=True)) / at_once
    probe_flops = sum(c.probe_flops for c in costs) / at_once
    how = AT_ONCE.get(worker.workers, f"{worker.workers} at a time")
    text = f"The {n} runs join this server's queue and train {how}" if n > 1 else "The run joins this server's queue"
    # a probed run's fine-tuning (issue 42: 4-5 min a run, left out of what the plan promised) from its estimated
    # FLOPs at the probe's pace measured here (scripts/measure_probe_pace.py), relative to the training's pace
    measured = probe_pace()

    def probe_s(train_pace: float, own: bool) -> float:
        if not probe_flops or measured is None:
            return probe_flops * train_pace
        return probe_flops * (train_pace * measured["ratio"] if own else measured["seconds_per_flop"])

    def probe_words(seconds: float) -> str:
        if not probe_flops:
            return ""
        how_measured = (f"its estimated FLOPs at the pace a probe was measured at, {about(measured['seconds'])} "
                        f"for a tiny run's probe on {measured['cpu']}, one thread" if measured is not None else
                        "counted from its estimated FLOPs")
        return (f" (of which about {about(seconds)} the downstream probe's fine-tuning on movie reviews: "
                f"{how_measured})")

    if (pace := worker.pace()) is not None:
        probe_time = probe_s(pace, True)
        text += (f": about {about(train_flops * pace + probe_time)} in all{probe_words(probe_time)} at the pace this "
                 "server measured on its finished runs (an estimate)" if probe_flops else
                 f": about {about(train_flops * pace)} in all at the pace this server measured on its finished runs")
    elif (ref := reference_pace()) is not None:
        probe_time = probe_s(ref[0], False)
        text += (f". This server has not finished a run yet to measure its pace: at {ref[1]}, "
                 f"{'they' if n > 1 else 'it'} would take about {about(train_flops * ref[0] + probe_time)} in all"
                 f"{probe_words(probe_time)} (an estimate; a busy or slower machine takes longer)")
    if busy := worker.busy():
        text += f". {busy} run{'s are' if busy > 1 else ' is'} queued or running before {'them' if n > 1 else 'it'}"
    return text + "."


def submit(specs: Sequence[RunSpec]) -> None:
    """Queue the runs on the worker; the ids join the visitor's list (and the URL). A button callback
    (it runs before the script, so a rerun cannot drop the click); problems are shown by `problems`."""
    worker = get_worker()
    ids = run_ids()
    me = owner()
    errors = []
    for s in specs:
        try:
            run_id = worker.submit(s, me)
            if run_id not in ids:
                ids.append(run_id)
        except QueueFullError as exc:
            errors.append(str(exc))
            break
        except ValueError as exc:
            errors.append(f"{s.name}: {exc}")
    st.session_state[_ERRORS] = errors
    set_run_ids(ids)


def show_submit_errors() -> None:
    for e in st.session_state.pop(_ERRORS, []):
        st.error(escape_markdown(e))


# ----------------------------------------------------------------------------- live panel
def statuses(ids: Sequence[str]) -> tuple[list[RunStatus], list[str]]:
    worker = get_worker()
    found, missing = [], []
    for i in ids:
        s = worker.status(i)
        (found.append(s) if s is not None else missing.append(i))
    return found, missing


def row_of(s: RunStatus) -> tr.RunRow:
    cost = trainer.run_cost(s.spec)
    return tr.RunRow(s.run_id, s.spec.name, s.spec, s.state, s.history, s.final if s.finished else {},
                     cost.params, cost.flops_per_step, s.baselines, s.probe if s.state == "done" else None)


def about(seconds: float | None) -> str:
    """A rough duration ('45 s', '2.5 min'), or '…' while it is not known yet."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "…"
    return fmt_duration(seconds, digits=2)


def probing(s: RunStatus) -> bool:
    """Whether the run is in its downstream probe (training done, fine-tuning on movie reviews)."""
    return s.state == "running" and s.probe_total > 0


def progress_line(s: RunStatus) -> str:
    rate = s.history["tokens_per_s"].dropna()
    parts = [f"step {s.step}/{s.steps}", f"elapsed {about(s.elapsed_s)}"]
    if probing(s):  # the probe's own time left (its pace), and no tokens/s: that was the pretraining's
        parts.append(f"fine-tuning on movie reviews: {100 * s.probe_done / s.probe_total:.0f} %, "
                     f"about {about(s.eta_s)} left")
    elif s.state == "running" and s.spec.probe:
        parts.append(f"about {about(s.eta_s)} of training left, then fine-tuning on movie reviews")
    elif s.state == "running":
        parts.append(f"about {about(s.eta_s)} left")
    if len(rate) and not probing(s):
        parts.append(f"{rate.iloc[-1]:,.0f} tokens/s")
    if s.state == "queued" and s.position is not None:
        parts.append(f"queue position {s.position}" + (" (next)" if s.position == 1 else ""))
        if s.wait_s is not None and s.position > 1:
            parts.append(f"starts in about {about(s.wait_s)} (estimated from the runs ahead)")
    if s.message and s.state != "running":
        parts.append(s.message)
    return " · ".join(parts)


def show_progress(rows: Sequence[RunStatus]) -> None:
    """A progress bar, the numbers and a Cancel button for each unfinished run this session started
    (read-only, with "train your own copy", for a run another visitor started); one line for the rest."""
    worker = get_worker()
    me = owner()
    for s in rows:
        if s.finished:
            continue
        mine = worker.owns(s.run_id, me)
        c = st.columns([5, 1], vertical_alignment="center")
        with c[0]:
            # the probe's own bar once training is done (a full bar for minutes would read as stuck)
            done, state = ((s.probe_done / s.probe_total, "training done, fine-tuning on movie reviews")
                           if probing(s) else (s.step / max(1, s.steps), s.state))
            st.progress(min(1.0, done),
                        text=f"**{escape_markdown(s.spec.name)}** (seed {s.spec.seed}): {state}"
                        + ("" if mine else " · read-only: another visitor started it"))
            st.caption(escape_markdown(progress_line(s)))
        if len(s.history):  # the CSV is made when clicked, not on every poll
            c[0].download_button("History so far (CSV)", functools.partial(history_csv, s.run_id),
                                 file_name=f"run-{s.run_id}.csv", mime="text/csv",
                                 key=f"dl_live_{s.run_id}", on_click="ignore", type="tertiary")
        if mine:
            c[1].button("Cancel", key=f"train_cancel_{s.run_id}", on_click=worker.cancel, args=(s.run_id, me),
                        help="Withdraw your request: the run stops after its current step (a queued run leaves "
                        "the queue) unless another visitor asked for the same run too.")
        else:
            c[1].button("Train your own copy", key=f"train_own_{s.run_id}", on_click=submit, args=([s.spec],),
                        help="Ask for the same run yourself: it is one training shared with whoever started it "
                        "(no second copy is trained), and it keeps going for you if they cancel.")
    for s in rows:
        if s.state in ("failed", "cancelled"):
            st.warning(escape_markdown(f"{s.spec.name} (seed {s.spec.seed}) {s.state} at step {s.step}: {s.message}"))
        elif s.state == "done" and s.message.startswith(PROBE_STOPPED):
            st.info(escape_markdown(f"{s.spec.name} (seed {s.spec.seed}) trained; {s.message}."))
    done = [s for s in rows if s.state == "done"]
    if done:
        st.caption(f"{len(done)} of {len(rows)} runs finished: their numbers are in the table below.")


def pair_for(labels: Sequence[str]) -> tuple[str, str] | None:
    """Which two runs the separation marker compares: BERT vs ALBERT when both ran, else the first two."""
    if "BERT" in labels and "ALBERT" in labels:
        return "BERT", "ALBERT"
    return (labels[0], labels[1]) if len(labels) >= 2 else None


def common_baselines(rows: Sequence[tr.RunRow]) -> Baselines | None:
    """The baselines the rows share (runs scored on the same held-out batches), else None."""
    known = {r.baselines for r in rows if r.baselines is not None}
    if len(known) == 1:
        return known.pop()
    # the sentence-task majority differs a little between NSP and SOP pairs (both balanced, to one pair) and an
    # MLM-only run has none; the MLM levels are what must agree. The first with a majority rate, by value.
    mlm = {(b.frequency_loss, b.neighbour_loss) for b in known}
    if len(mlm) != 1:
        return None
    return min(known, key=lambda b: (b.order_majority is None, b.order_majority or 0.0))


def curves(rows: Sequence[tr.RunRow], key: str, title_suffix: str = "",
           default: str = "mlm_loss", training: bool = True, live: bool = False) -> None:
    """The metric picker, the dashboard controls (smoothing, x axis, log axes) and the curves of ``rows``
    on one chart; ``live``: a chart that keeps its place across the reruns of a polling fragment."""
    titles = {k: v[0] for k, v in ft.METRICS.items()}
    metric = st.segmented_control("Metric", list(titles), format_func=titles.get, key=f"{key}_metric",
                                  default=default) or default
    c = st.columns([2, 2, 1, 1], vertical_alignment="bottom")
    smoothing = c[0].select_slider(
        "Smoothing", options=[0.0, 0.5, 0.8, 0.9, 0.95, 0.99], value=0.0, key=f"{key}_smooth",
        help="An exponential moving average of the training curves, as TensorBoard's (the weight of the past; "
        "below 1). The raw points stay drawn, faint, behind the smoothed line, and the hover shows the raw value. "
        "Validation points are not smoothed: each already averages every held-out pair.")
    x = c[1].segmented_control("x axis", list(ft.X_AXES), format_func={"step": "step", "tokens": "tokens",
                                                                     "elapsed_s": "wall time"}.get,
                               default="step", key=f"{key}_x") or "step"
    log_y = c[2].toggle("log y", key=f"{key}_logy")
    log_x = c[3].toggle("log x", key=f"{key}_logx", help="Step 0 has no place on a log axis and is left out.")
    groups = tr.groups_of(rows)
    column = ft.METRICS[metric][2][0]
    drawn = [label for label, hs in groups.items() if any(column in h and h[column].notna().any() for h in hs)]
    sep = None
    if (pair := pair_for(drawn)) is not None:  # e.g. an MLM-only run has no sentence-task curve to compare
        sep = tr.separation(groups[pair[0]], groups[pair[1]], column, *pair)
    styles = ft.variant_styles({r.label: r.spec.config for r in rows})
    fig = ft.curves_figure(groups, metric, sep, baselines=common_baselines(rows), title_suffix=title_suffix,
                           training=training, smoothing=float(smoothing), x=x, log_y=log_y, log_x=log_x,
                           styles=styles)
    with st.container(key=f"chart_{key}"):  # a stable class for browser tests: .st-key-chart_<key>
        if live:
            live_plotly_chart(fig, key=f"fig_{key}")
        else:
            chart(fig, key=f"fig_{key}", width="stretch")
    if metric != "val_order_acc":
        st.caption(CURVES_NOTE)


CURVES_NOTE = (
    "Solid: the held-out pairs, every masked piece shown as [MASK]. Dotted: the training batches, where BERT's "
    "masking leaves 1 in 10 masked pieces as they are (easy to copy), so the training loss sits lower. Grey: "
    "the baselines of the same held-out pairs. Colour: the model family and embedding size (BERT blue); dash: "
    "the sharing mode (not shared solid, all-shared dashed). Click a legend entry to hide a run, double-click to "
    "show it alone."
)
LEARNED_HELP = (
    "Scored on the same held-out pairs as the baselines. Frequency-only: a model that knows only how often each "
    "piece occurs in the training text; a run 0.1 nat or more below it has learned context, near it frequencies "
    "only. Neighbour: a bigram model of the left and right pieces; a run below it too gets more from the context "
    "than the two adjacent pieces give (\"beyond the neighbour model\"), one above it less (\"short of the "
    "neighbour model\"). A sentence task is learned at 5 points above the majority class (50 % on the balanced "
    "held-out pairs) with answers that are not all one class."
)


MISSING = "–"  # what an empty cell shows (never "None")


def _num(label: str, fmt: str, help: str | None = None):  # noqa: A002 - Streamlit's own argument name
    return st.column_config.NumberColumn(label, format=fmt, help=help)


RUNS_TABLE_COLUMNS = {
    "run": st.column_config.TextColumn("run"),
    "seed": _num("seed", "%d"),
    "state": st.column_config.TextColumn("state"),
    "val_mlm_loss": _num("validation MLM loss", "%.4f", "The last evaluation's loss on the held-out pairs (nats)."),
    "best_val_mlm_loss": _num("best validation MLM loss", "%.4f", "The lowest validation loss of any evaluation."),
    "vs_frequency": st.column_config.TextColumn("vs frequency-only", help=LEARNED_HELP),
    "mlm_verdict": st.column_config.TextColumn("MLM", help=LEARNED_HELP),
    "val_mlm_acc": _num("validation MLM accuracy", "%.4f"),
    "val_order_acc": _num("sentence-task accuracy", "%.4f", "NSP or SOP accuracy on the balanced held-out pairs."),
    "best_val_order_acc": _num("best sentence-task accuracy", "%.4f"),
    "order_verdict": st.column_config.TextColumn("sentence task", help=LEARNED_HELP),
    "probe_pct": _num("downstream %", "%.1f", "Downstream probe: dev accuracy on the held-out movie-review "
                      "sentences after fine-tuning this run's encoder (the mean over its fine-tuning seeds); blank "
                      "when the run was not probed."),
    "probe_scratch_pct": _num("from scratch %", "%.1f", "The same model from random weights, fine-tuned and scored "
                              "the same way: what pretraining must beat."),
    "frequency_loss": _num("frequency-only loss", "%.4f", "The loss of a model that knows only how often each piece "
                           "occurs (training text), on the same held-out pairs: the level a run must go below."),
    "neighbour_loss": _num("neighbour loss", "%.4f", "A bigram model of the masked piece's left and right "
                           "neighbours, on the same held-out pairs."),
    "frequency_acc": _num("always-most-frequent accuracy", "%.4f", "How often the single most frequent piece is "
                          "the right answer on the same held-out pairs."),
    "val_order_ones": _num("share of \"1\" answers", "%.2f", "0 or 1: the sentence head answers one class for "
                           "every pair (a constant answer scores 50 % on the balanced held-out pairs)."),
    "train_mlm_loss": _num("training MLM loss", "%.4f", "On the training batches, where 1 in 10 masked pieces is "
                           "left visible (lower than the validation loss)."),
    "params": _num("params (exact)", "localized"),
    "flops_per_step": st.column_config.TextColumn("training FLOPs / step", help="count_flops(...).training: "
                                                  "forward + backward matmul FLOPs of one batch (exact)."),
    "step_ms": _num("step (ms, measured)", "%.1f", "Median wall time per training step, measured while it trained."),
    "steps": _num("steps", "localized"),
    "tokens": _num("token positions", "localized"),
    "seconds": _num("seconds (measured)", "%.1f"),
    "config": st.column_config.TextColumn("config"),
    "task": st.column_config.TextColumn("sentence task trained"),
    "run_id": st.column_config.TextColumn("run id"),
}


def runs_table(rows: Sequence[tr.RunRow], key: str) -> None:
    """The runs table: results first, then baselines, then cost; "only what differs" hides the columns
    every run shares (a hyperparameter view)."""
    df = tr.runs_frame(rows)
    differ = st.toggle("Show only the columns that differ", key=f"{key}_differ",
                       help="Hide every column whose value is the same for all runs (the run, its seed, state and "
                       "the key results stay).")
    shown = tr.differing_columns(df) if differ else list(df.columns)
    if df[list(tr.PROBE_COLUMNS)].isna().all().all():  # no run probed: no empty columns
        shown = [c for c in shown if c not in tr.PROBE_COLUMNS]
    st.dataframe(df, hide_index=True, key=f"{key}_table", placeholder=MISSING,
                 column_order=[c for c in shown if c not in tr.WORD_COLUMNS.values()],
                 column_config=RUNS_TABLE_COLUMNS)
    st.download_button("Download the runs table (CSV)", functools.partial(tr.runs_csv, df),
                       file_name=f"{key}.csv",
                       mime="text/csv", key=f"dl_{key}", icon=":material/download:", on_click="ignore")


def summary(rows: Sequence[tr.RunRow]) -> str:
    """One line per run label: exact params and training FLOPs per step beside the measured step time
    (the range over its seeds)."""
    parts = []
    for label, group in tr.rows_by_label(rows).items():
        r = group[0]
        ms = [m for m in (tr.measured_step_ms(g.history) for g in group) if math.isfinite(m)]
        speed = ""
        if ms:
            lo, hi = min(ms), max(ms)
            speed = (f", {lo:.0f} ms/step measured" if round(lo) == round(hi)
                     else f", {lo:.0f}-{hi:.0f} ms/step measured")
        parts.append(f"{label}: {fmt_params(r.params)} params, {fmt_flops(r.flops_per_step)}/step{speed}")
    return "; ".join(parts)


def live_panel(ids: Sequence[str]) -> None:
    """Progress, cancel, curves and the runs table of the visitor's runs; polls while any is unfinished."""
    found, missing = statuses(ids)
    active = any(not s.finished for s in found)
    if missing:
        st.info(f"{len(missing)} run(s) in the link are not on this server any more (the server restarted "
                "before they finished, or they were evicted from the cache): train them again.")

    @st.fragment(run_every=POLL_S if active else None)
    def panel() -> None:
        now, _ = statuses([s.run_id for s in found])
        # three keyed boxes in a fixed order: the progress lines come and go as runs finish, and without the
        # boxes they would shift the chart's place on the page, and the browser would mount a new chart there;
        # in its place the chart is a live one (ui/train/live_chart.py) that redraws in place on every poll
        progress_box, chart_box, table_box, probe_box = (
            st.container(key=k) for k in ("train_progress", "train_curves", "train_table", "train_probes"))
        rows = [row_of(s) for s in now]
        with progress_box:
            show_progress(now)
        with chart_box:
            if any(len(r.history) for r in rows):
                # while runs train, a chart that redraws in place; once all are done, Streamlit's own (no
                # plotly.js download for a visitor who opens a link to finished runs)
                curves(rows, "train_runs", live=active)
                st.caption(escape_markdown(summary(rows)))
                if lines := tr.learning_summary(rows):
                    st.markdown("\n".join(f"- {escape_markdown(x)}" for x in lines), help=LEARNED_HELP)
        with table_box:
            runs_table(rows, "train_runs")
        with probe_box:
            show_probes(rows)
        if active and not any(not s.finished for s in now):
            st.rerun()  # all finished: one full run draws the final state and stops the polling

    panel()
    if found and not active:
        show_downloads(found)
        show_smoothness(found)


PROBE_TABLE_HELP = (
    "Dev accuracy on the same held-out movie-review sentences, in percent. Pretrained: this run's encoder "
    "fine-tuned with each seed (the seed draws the new classifier's weights and the batch order); from scratch: the "
    "same model from random weights, fine-tuned the same way. The bag-of-words regression and the majority class "
    "have no seed: one value each. Pretraining helped (or hurt) only when the lab's one rule separates the two: an "
    "exact permutation test over the fine-tuned models, two-sided at 5 % (the sentence gives the difference, its "
    "95 % interval and p). Two seeds a side can never reach 5 % (the smallest p is 0.33); five can (0.008)."
)


def show_probes(rows: Sequence[tr.RunRow]) -> None:
    """Under the runs table, each finished probed run's downstream probe: a table and its verdict in words."""
    for r in rows:
        if r.probe is None:
            continue
        st.markdown(f"**Downstream probe (movie-review sentences): {escape_markdown(r.label)}, seed {r.spec.seed}**",
                    help=PROBE_TABLE_HELP)
        df = tr.probe_frame(r.probe)
        pct = st.column_config.NumberColumn(format="%.1f %%")
        st.dataframe(df, hide_index=True, placeholder=MISSING, key=f"train_probe_{r.run_id}",
                     column_config={"model": st.column_config.TextColumn("model"),
                                    **{c: pct for c in df.columns if c != "model"}})
        st.markdown(r.probe.sentence())


def history_csv(run_id: str) -> str:
    """A run's history so far as CSV, read when the visitor clicks (a download's deferred data)."""
    status = get_worker().status(run_id)
    return status.history.to_csv(index=False) if status is not None else ""


def run_files(run_id: str) -> bytes:
    """The zip of a finished run's files (`checkpoint.export_zip`), built when the visitor clicks."""
    from albert_core.lab.checkpoint import export_zip

    result = get_worker().cache.get(run_id)
    if result is None or result.checkpoint is None:
        return b""
    return export_zip(result)


def show_downloads(found: Sequence[RunStatus]) -> None:
    """One download per finished run: its files for TensorBoard, pandas and any tool that reads them."""
    done = [s for s in found if s.state == "done"]
    if not done:
        return
    with st.expander(f"Download your runs ({len(done)}): TensorBoard, CSV, run.json"):
        st.caption("Each zip holds the run's TensorBoard event files, its history as CSV and JSON, run.json (the "
                   "run's settings, seed, code and library versions, CPU and threads), the tokenizer and the "
                   "model's config.json. Unzip and run `tensorboard --logdir .` in the folder, or read "
                   "history.csv with pandas.")
        for s in (s for s in done if s.checkpoint is not None):
            st.download_button(f"{s.spec.name}, seed {s.spec.seed} (.zip)", functools.partial(run_files, s.run_id),
                               file_name=f"run-{s.run_id}.zip",
                               mime="application/zip", key=f"dl_run_{s.run_id}", on_click="ignore",
                               icon=":material/download:")


@st.cache_data(max_entries=64, show_spinner=False)
def trained_smoothness(run_id: str) -> pd.DataFrame | None:
    """Figure 2 on a finished run's trained weights (`experiments.smoothness`), None without weights.
    Keyed by run id: the id is the hash of everything that determines the run."""
    from albert_core.lab.experiments import smoothness

    result = get_worker().cache.get(run_id)
    if result is None or result.checkpoint is None:
        return None
    return smoothness(result)


def show_smoothness(found: Sequence[RunStatus]) -> None:
    """The paper's Figure 2 for the visitor's finished runs (mean over the seeds of each label)."""
    frames: dict[str, list[pd.DataFrame]] = {}
    for s in found:
        if s.state == "done" and (df := trained_smoothness(s.run_id)) is not None:
            frames.setdefault(s.spec.name, []).append(df)
    if not frames:
        return
    mean = {label: pd.concat(fs).groupby("layer", as_index=False).mean() for label, fs in frames.items()}
    chart(ft.smoothness_runs(mean, title="Layer smoothness of your trained runs"),
          key="fig_train_smoothness", width="stretch")
    st.caption("Per layer: the L2 distance and the angle between its input and output hidden states, averaged "
               "over the tokens of the first 16 held-out pairs (the smoothness plot of the paper, "
               f"{SMOOTHNESS_FIGURE}, on the weights trained here). The "
               "paper finds ALBERT's transitions much smoother than BERT's.")
