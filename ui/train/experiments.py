"""The Train page's experiments in miniature: pick one (its name is in the URL), see its shipped
reference runs at once with the paper's figure beside what was measured here, and run it yourself.

Measurements beyond the curves (cross-accuracy, trained smoothness, depth dial) come from the
experiment's own `evaluate`; the paper's figures from its `paper` record, always labelled as the
paper's."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import streamlit as st

from albert_core import ModelConfig
from albert_core.format import escape_markdown, sentence_case
from albert_core.lab import experiments as lab_experiments
from albert_core.lab import findings, reference, separation, trainer
from albert_core.lab.experiments import EXPERIMENTS, PAPER_TABLE5
from albert_core.lab.worker import get_worker
from ui.owner import owner
from ui.render import chart
from ui.train import figures as ft
from ui.train import runs as tr
from ui.train import view as train_view
from ui.url_state import seed_from_url_once

EXP_KEY = "train_exp"
OWN_KEY = "_train_exp_own"  # experiment name -> the run ids the visitor started for it
_SEEDED = "_train_exp_seeded"


@st.cache_resource(show_spinner=False)
def references() -> dict[str, list[Any]]:
    """The shipped reference runs (read once per process; small JSON)."""
    return reference.load_reference()


@st.cache_resource(show_spinner=False)
def reference_evaluation(name: str) -> dict[str, Any]:
    """The shipped runs' stored measurements (cross-accuracy, smoothness, depth dial, summaries)."""
    return reference.load_evaluation(name)


@st.cache_resource(max_entries=16, show_spinner="Measuring the trained models (cross-accuracy, smoothness, depth)…")
def evaluation(name: str, run_ids: tuple[str, ...], _results: Sequence[Any]) -> dict[str, Any]:
    """The experiment's extra measurements on finished runs, once per set of runs (keyed by id)."""
    return EXPERIMENTS[name].evaluate(list(_results))


def _rows(results: Sequence[Any], state: str = "done") -> list[tr.RunRow]:
    from albert_core.lab.trainer import run_cost

    rows = []
    for r in results:
        cost = run_cost(r.spec)
        rows.append(tr.RunRow(r.spec.key, r.spec.name, r.spec, state, r.history, r.final, cost.params,
                              cost.flops_per_step, r.baselines, r.probe))
    return rows


def chosen_experiment() -> str:
    """The experiment in the select box; seeded once per session from the URL value ``exp``."""
    ss = st.session_state

    def seed(query: dict[str, str]) -> list[str]:
        raw = query.get(train_view.URL_EXP)
        if raw in EXPERIMENTS:
            ss[EXP_KEY] = raw
        return [f"URL value exp={raw[:24]} is not an experiment"] if raw and raw not in EXPERIMENTS else []

    seed_from_url_once(_SEEDED, seed, "showing the first one")
    names = list(EXPERIMENTS)
    name = st.selectbox("Experiment", names, index=names.index(ss.get(EXP_KEY, names[0])),
                        format_func=lambda n: EXPERIMENTS[n].title, key=EXP_KEY)
    st.query_params[train_view.URL_EXP] = name
    return name


def show_measurements(name: str, ev: dict[str, Any], results: Sequence[Any], who: str = "reference") -> None:
    """The experiment's figure: paper beside measured here (``who``: whose runs, in keys and titles)."""
    measured = f"{ft.MEASURED_LABEL} ({who} runs)"
    show_findings(name, results, ev, who)
    show_variant_probes(name, results, who)
    if "cross_accuracy" in ev:
        c = st.columns(2)
        paper = (PAPER_TABLE5[["NSP", "SOP"]] / 100).rename(columns=str.lower)
        with c[0]:
            chart(ft.cross_accuracy_heatmap(paper, ft.PAPER_LABEL), key=f"fig_exp_table5_{who}_paper", width="stretch")
        with c[1]:
            chart(ft.cross_accuracy_heatmap(ev["cross_accuracy"], measured), key=f"fig_exp_table5_{who}",
                  width="stretch")
    if "smoothness" in ev:
        chart(ft.smoothness_runs(ev["smoothness"], title=f"Layer smoothness, {measured}"),
              key=f"fig_exp_figure2_{who}", width="stretch")
    if "depth" in ev:
        depth = ev["depth"]
        chart(ft.depth_dial_bars(depth, int(depth["trained_depth"].iloc[0]),
                                 baselines=results[0].baselines if results else None),
              key=f"fig_exp_depth_{who}", width="stretch")
    if "separations" in ev and len(ev["separations"]):
        seps = ev["separations"]
        seeds = dict(zip(ev["summary"]["variant"], ev["summary"]["seeds"], strict=True)) if "summary" in ev else {}
        st.caption("Seed bands on validation MLM loss (where the curves' ranges over seeds stop overlapping: a "
                   "picture of the curves, not a test; the verdicts above are the test's): " + "; ".join(
            f"{escape_markdown(a)} vs {escape_markdown(b)}: "
            + (f"apart from step {int(s)}" if s == s and s is not None else
               f"bands not apart ({findings.not_separated(seeds.get(a, 0), seeds.get(b, 0))})")
            for a, b, s in seps[["a", "b", "step"]].itertuples(index=False)))


def show_findings(name: str, results: Sequence[Any], ev: dict[str, Any], who: str) -> None:
    """The paper beside our runs, like with like: one plain sentence per comparison, its verdict last."""
    found = findings.for_experiment(name, results, ev)
    if not found:
        return
    probed = any(r.probe is not None for r in results)
    ours = ("our held-out MLM loss and movie-review accuracy after fine-tuning, after minutes of CPU" if probed
            else "our held-out MLM loss after minutes of CPU")
    st.markdown(f"**The paper beside the {who} runs** (which setting is better; the sizes are not comparable: "
                f"the paper's downstream averages after 125,000 steps at batch 4,096, {ours}):")
    st.markdown("\n".join(f"- {escape_markdown(f.question)} Paper: {escape_markdown(f.paper)}. Here: "
                           f"{escape_markdown(f.measured)}. **{escape_markdown(sentence_case(f.verdict))}.**"
                           for f in found))
    runs = min(collections.Counter(r.spec.label for r in results).values())
    st.caption(escape_markdown(rule_note(runs)))


# the one rule every verdict above comes from (`albert_core.lab.separation`), and what it can and cannot say
RULE_NOTE = (
    f"Agrees, disagrees, helped and hurt only where an exact permutation test over the models separates the two "
    f"sides (two-sided, p <= {separation.LEVEL:g}: fine-tuned models downstream, pretraining runs on MLM loss); the "
    f"difference's 95 % interval is the test inverted. Where the two sides do not differ it separates them at most "
    f"5 % of the time "
    f"(4 + 4 models: {100 * separation.false_separation_rate(4, 4):.1f} %); two runs a side can never reach 5 % "
    f"(the smallest p is {separation.format_p(separation.smallest_p(2, 2))})")


def rule_note(runs: int) -> str:
    """The rule's note, and what the experiment's pretraining seeds (``runs`` a variant, the fewest) allow on MLM
    loss: nothing separated with two, however far apart the losses; p down to the smallest attainable with more."""
    if runs <= 2:
        return RULE_NOTE + ", so with two pretraining seeds a variant no MLM-loss pair is separated, however far " \
                           "apart its losses."
    return RULE_NOTE + (f"; with {runs} pretraining seeds a variant an MLM-loss pair can reach "
                        f"p = {separation.format_p(separation.smallest_p(runs, runs))}.")


VARIANT_PROBE_COLUMNS = {
    "variant": st.column_config.TextColumn("variant"),
    "runs": st.column_config.NumberColumn("runs", format="%d", help="Runs of this variant (one per seed)."),
    "probed": st.column_config.NumberColumn("probed", format="%d", help="How many of them were probed downstream."),
    "val_mlm_loss": st.column_config.NumberColumn("val MLM loss", format="%.3f",
                                                  help="Final validation MLM loss in nats, the mean over the runs."),
    "probe_pct": st.column_config.NumberColumn(
        "downstream %", format="%.1f", help="Dev accuracy after fine-tuning the variant's encoders on movie-review "
        "sentences: the mean over the fine-tuning seeds and the probed runs."),
    "probe_scratch_pct": st.column_config.NumberColumn(
        "from scratch %", format="%.1f", help="The same model from random weights, fine-tuned and scored the same "
        "way: what pretraining must beat."),
}


def show_variant_probes(name: str, results: Sequence[Any], who: str) -> None:
    """The variants side by side on validation MLM loss and downstream accuracy, when runs were probed (else
    nothing)."""
    df = tr.variant_probes(results)
    if df is None:
        return
    st.dataframe(df, hide_index=True, key=f"exp_{name}_{who}_probes", placeholder=train_view.MISSING,
                 column_config=VARIANT_PROBE_COLUMNS)
    first = next(r.probe for r in results if r.probe is not None)
    where = ""
    if who == "reference":  # the shipped probes: measured where `finetune --reference` ran (probe.json)
        from albert_core.lab.reference import REFERENCE_DIR, load_probe_file

        env = load_probe_file(str(REFERENCE_DIR)).get("environment", {})
        where = (f" Measured on {env.get('cpu') or 'an unrecorded CPU'}, one torch thread, on the reference runs "
                 "retrained there for their weights (validation loss within 0.05 nat of the shipped runs').")
    st.caption(escape_markdown(tr.probe_note(first) + where + measured_baselines(first)))


def measured_baselines(probe: Any) -> str:
    """The probe's cheap baselines as measured once and shipped (`albert_core.lab.probe.measured_baselines`), beside the
    bag-of-words figure of the shipped split; "" when this install has none for these sentences."""
    from albert_core.lab.probe import measured_baselines

    m = measured_baselines()
    if m is None or m.dev_sentences != probe.dev_sentences:
        return ""
    return (f" The bag of words' figure is that of one split: over {len(m.split_seeds)} random splits of the same "
            f"sentences it averages {100 * m.splits_mean:.1f} % (+- {100 * m.splits_sd:.1f}); multinomial naive "
            f"Bayes on its features scores {100 * m.naive_bayes:.1f} % on these dev sentences "
            f"({100 * m.nb_splits_mean:.1f} % over the splits; measured on {m.cpu}, seeds "
            f"{m.split_seeds[0]}-{m.split_seeds[-1]}).")


def render(cfg: ModelConfig) -> None:
    st.header("Experiments in miniature")
    name = chosen_experiment()
    exp = EXPERIMENTS[name]
    st.markdown(f"**{escape_markdown(exp.question)}**")
    st.caption(f"**{ft.PAPER_LABEL}:** {escape_markdown(exp.paper.claim)} ({escape_markdown(exp.paper.source)})")
    results = references().get(name, [])
    if results:
        st.caption(f"**{ft.MEASURED_LABEL}:** {len(results)} shipped reference runs of this experiment, trained by "
                   "this repository's own code (tiny models, minutes of CPU), shown at once; train your own below.")
        rows = _rows(results)
        train_view.curves(rows, f"exp_{name}", title_suffix="reference runs",
                          default=exp.metric if exp.metric in ft.METRICS else "mlm_loss",
                          training=len({r.spec.label for r in results}) <= 4)  # 8 variants: validation only
        if lines := tr.learning_summary(rows):
            st.markdown("\n".join(f"- {escape_markdown(x)}" for x in lines), help=train_view.LEARNED_HELP)
        show_measurements(name, reference_evaluation(name), results)
        with st.expander("Reference runs table"):
            train_view.runs_table(rows, f"exp_{name}_runs")
    else:
        st.info("No shipped reference runs for this experiment on this install: run it here.")
    c = st.columns(2)
    seeds = c[0].number_input("Seeds per variant", 1, 3, 1, key="train_exp_seeds",
                              help="Each variant is trained once per seed; two or more draw seed bands and "
                              "let the page mark where two variants separate.")
    steps = c[1].number_input("Steps per run", 10, trainer.LabLimits.from_env().max_steps, lab_experiments.STEPS,
                              step=50, key="train_exp_steps",
                              help="The shipped reference runs trained this many steps: "
                              + train_view.reference_outcome(lab_experiments.STEPS))
    try:
        specs = exp.specs(seeds=tuple(range(int(seeds))), steps=int(steps))
    except ValueError as exc:
        st.error(escape_markdown(f"Cannot plan this experiment: {exc}"))
        return
    worker = get_worker()
    free = worker.room(owner())
    if len(specs) > free:
        st.caption(f"{len(specs)} runs: you can queue {free} more now (at most {worker.share} runs queued or "
                   f"running per visitor, {worker.max_queue} waiting in all); pick fewer seeds or try when runs "
                   "have finished.")
    st.button(f"Run this experiment here ({len(specs)} runs)", key="train_exp_submit", disabled=len(specs) > free,
              on_click=submit, args=(name, specs),
              help="Queues the experiment's runs on this server's lab worker; they appear under Your runs.")
    train_view.show_submit_errors()
    own_measurements(name)


def submit(name: str, specs: Sequence[Any]) -> None:
    """Button callback: queue the experiment's runs and remember them as this visitor's."""
    st.session_state.setdefault(OWN_KEY, {})[name] = [s.key for s in specs]
    train_view.submit(specs)


def own_measurements(name: str) -> None:
    """The experiment's measurements on the visitor's own runs of it, once they have all finished."""
    ids = st.session_state.get(OWN_KEY, {}).get(name)
    if not ids:
        return
    worker = get_worker()
    found = [worker.status(i) for i in ids]
    if any(s is None or s.state != "done" for s in found):
        st.caption("Your runs of this experiment are measured here (cross-accuracy, smoothness, depth) when all "
                   "of them have finished.")
        return
    results = [worker.cache.get(i) for i in ids]
    if any(r is None for r in results):
        return
    st.subheader("Measured on your runs")
    try:
        ev = evaluation(name, tuple(ids), results)
    except ValueError as exc:
        st.error(escape_markdown(f"Cannot measure these runs: {exc}"))
        return
    show_measurements(name, ev, results, who="your")
