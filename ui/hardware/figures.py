"""Pure Plotly builders and tables for the Hardware page (no streamlit import).

Inputs are `albert_core.hardware.time_model.TimeEstimate`s and the `paper_table2` DataFrame; every number drawn is
taken from them, so tests compare trace values with the library's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.presets import PRESETS, config_name
from albert_core.configuration.workload import DTYPE_BYTES
from albert_core.counting.flops import count_flops, differences_words, flop_differences
from albert_core.counting.memory import OPTIMIZER_STATES
from albert_core.format import (
    change_words,
    direction,
    escape_markdown,
    fmt_bytes,
    fmt_duration,
    fmt_flops,
    fmt_pct,
    fmt_ratio,
)
from albert_core.hardware.profiles import HARDWARE_NAMES, HardwareProfile
from albert_core.hardware.time_model import (
    PAPER_SPEEDUP,
    PART_LABELS,
    TABLE2_BAND,
    TABLE2_COMM_EFFICIENCY,
    TABLE2_MLM_FRACTION,
    TABLE2_WORKLOAD,
    ChipCheck,
    TimeEstimate,
    gradient_bytes,
    table2_size_ratios,
)
from albert_core.paper import PAPER_SAME_TIME, PAPER_TPU_RANGE
from ui import plotly_dicts
from ui.figure_style import LEGEND_BELOW, TITLE_FONT
from ui.hardware.questions import CHIP_CHOICES, SpeedComparison

PART_COLORS = {"matmuls": "#4c78a8", "elementwise": "#f58518", "optimizer": "#54a24b", "allreduce": "#e45756"}
SERIES_COLORS = {"paper": "#444444", "flops_only": "#bab0ac", "datasheet": "#9ecae9", "model": "#4c78a8"}
SERIES_LABELS = {
    "paper": "paper (measured on TPU v3)",
    "flops_only": "FLOPs only (estimate)",
    "datasheet": "time model, datasheet links (estimate)",
    "model": "time model, calibrated links (estimate)",
}
_MARGIN = dict(l=10, r=10, t=60, b=10)
_MAX_URL_VALUE = 16
BREAKDOWN_TITLE = "Time per step by part (estimate)"  # at most ~45 characters: a phone's width
TABLE2_TITLE = "Speed relative to BERT-large (Table 2)"


def decode_query(params: Mapping[str, object], default_hw: str, default_chips: int) -> tuple[str, int, list[str]]:
    """The page's hardware (URL key ``hw``) and chips (``chips``) from a query string, leniently: a
    bad value falls back to the default with one plain-text problem."""
    problems = []
    hw, chips = default_hw, default_chips
    raw = str(params.get("hw", default_hw))[: _MAX_URL_VALUE + 1]
    if raw in HARDWARE_NAMES:
        hw = raw
    else:
        problems.append(f"URL value hw={raw[:_MAX_URL_VALUE]}: must be one of {', '.join(HARDWARE_NAMES)}")
    raw = str(params.get("chips", default_chips))[: _MAX_URL_VALUE + 1]
    if raw.isascii() and raw.isdigit() and int(raw) in CHIP_CHOICES:
        chips = int(raw)
    else:
        problems.append(f"URL value chips={raw[:_MAX_URL_VALUE]}: must be one of "
                        f"{', '.join(map(str, CHIP_CHOICES))}")
    return hw, chips, problems


def step_breakdown(est: TimeEstimate) -> go.Figure:
    """Horizontal stacked bars: the training step and the inference batch, one segment per part,
    each labelled with its time and whether it is compute-, memory- or communication-bound."""
    rows = (("Training step", est.training), ("Inference batch", est.inference))
    data = []
    for name, label in PART_LABELS.items():
        xs, ys, texts = [], [], []
        for row, parts in rows:
            part = next((p for p in parts if p.name == name), None)
            if part is None:
                continue
            xs.append(part.seconds)
            ys.append(row)
            texts.append(f"{label}: {fmt_duration(part.seconds)} ({part.bound}-bound)")
        data.append(dict(type="bar", x=xs, y=ys, name=label, orientation="h", marker=dict(color=PART_COLORS[name]),
                         hovertext=texts, hoverinfo="text", text=[fmt_duration(x) for x in xs],
                         textposition="inside", textangle=0))
    return plotly_dicts.figure(data, dict(  # the hardware is in the axis title: the whole name in the title was cut
        barmode="stack", title=dict(text=BREAKDOWN_TITLE, font=TITLE_FONT),  # on a phone
        xaxis=dict(title=dict(text=f"seconds on {est.chips} x {short_hardware(est.hardware.label)}")),
        yaxis=dict(autorange="reversed"), margin=_MARGIN, height=340, legend=LEGEND_BELOW,
        uniformtext=dict(minsize=10, mode="hide"),  # no 6-px label in a sliver
    ))


def short_hardware(label: str) -> str:
    """A profile's name without its parenthesised details ("Cloud TPU v3 (per chip, 2 TensorCores)" ->
    "Cloud TPU v3"), short enough for an axis title on a phone."""
    return label.split(" (", 1)[0]


def breakdown_frame(est: TimeEstimate) -> pd.DataFrame:
    """One row per part of the training step and of the inference batch, formatted for people."""
    rows = []
    for kind, parts, total in (("training step", est.training, est.training_s),
                               ("inference batch", est.inference, est.inference_s)):
        for p in parts:
            rows.append({
                "what": kind, "part": p.label, "time": fmt_duration(p.seconds),
                "share": fmt_pct(p.seconds / total if total else 0.0), "bound": p.bound,
                "FLOPs per chip": fmt_flops(p.flops), "bytes per chip": fmt_bytes(p.bytes),
                "seconds": p.seconds,
            })
    return pd.DataFrame(rows)


def step_takeaway(est: TimeEstimate) -> str:
    """One line: the largest part of the training step and what bounds it."""
    top = max(est.training, key=lambda p: p.seconds)
    comm = est.part("allreduce")
    text = (f"Estimate: the training step is {fmt_duration(est.training_s)}, "
            f"{fmt_pct(top.seconds / est.training_s, 0)} of it {top.label.lower()} ({top.bound}-bound).")
    if est.chips > 1:
        hidden = ("all of it hidden behind the backward pass" if comm.seconds == 0 and comm.memory_s else
                  f"{fmt_duration(comm.seconds)} of it not hidden behind the backward pass")
        text += (f" The gradient all-reduce moves {fmt_bytes(comm.bytes)} per chip ({fmt_duration(comm.memory_s)} "
                 f"on the link, {hidden}).")
    return text


def table2_bars(df: pd.DataFrame) -> go.Figure:
    """Grouped horizontal bars per preset: the paper's speedup over BERT-large next to each prediction.
    Horizontal, so the preset names and the value labels keep their size on a phone (upright bars rotated
    six names into each other and shrank 24 labels below 9 px)."""
    data = [dict(type="bar", y=list(df["preset"]), x=list(df[col]), name=label, marker=dict(color=SERIES_COLORS[col]),
                 orientation="h", text=[fmt_ratio(v) for v in df[col]], textposition="outside", cliponaxis=False)
            for col, label in SERIES_LABELS.items()]
    return plotly_dicts.figure(data, dict(
        barmode="group", title=dict(text=TABLE2_TITLE, font=TITLE_FONT),
        xaxis=dict(title=dict(text="speedup over BERT-large"),
                   range=[0, max(df[list(SERIES_LABELS)].max()) * 1.18]),
        yaxis=dict(autorange="reversed"), margin=_MARGIN, height=640, legend=LEGEND_BELOW,
        uniformtext=dict(minsize=10, mode="hide"),
    ))


def table2_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The Table 2 DataFrame with people-formatted columns for display."""
    return pd.DataFrame({
        "preset": df["preset"],
        "paper": [fmt_ratio(v) for v in df["paper"]],
        "FLOPs only": [fmt_ratio(v) for v in df["flops_only"]],
        "FLOPs only / paper": [fmt_ratio(v) for v in df["flops_only_ratio"]],
        "model, datasheet links": [fmt_ratio(v) for v in df["datasheet"]],
        "model, calibrated": [fmt_ratio(v) for v in df["model"]],
        "model / paper": [fmt_ratio(v) for v in df["model_ratio"]],
        "within ±20%": ["yes" if v else "no" for v in df["within_20pct"]],
        "any model on these parts": [f"{fmt_ratio(lo)} – {fmt_ratio(hi)}"
                                     for lo, hi in zip(df["reach_lo"], df["reach_hi"], strict=True)],
        "all-reduce share of step": [fmt_pct(v, 0) for v in df["allreduce_share"]],
        "step (estimate)": [fmt_duration(v) for v in df["step_s"]],
    })


def table2_takeaway(df: pd.DataFrame, constant: float, chips: int) -> str:
    hits = df[df["within_20pct"]]
    band = f"±{fmt_pct(TABLE2_BAND, 0)}"
    misses = [f"{r.preset} ({fmt_ratio(r.model)} vs {fmt_ratio(r.paper)}"
              + ("" if r.reachable else f"; no weighting of its parts gives more than {fmt_ratio(r.reach_hi)}, "
                 f"and the {band} band starts at {fmt_ratio((1 - TABLE2_BAND) * r.paper)}") + ")"
              for r in df.itertuples() if not r.within_20pct]
    text = (f"{len(hits)} of {len(df)} rows are within {band} of the paper with one constant for all rows: the "
            f"all-reduce reaches {fmt_pct(constant, 1)} of the datasheet bandwidth, on {chips} chips. ")
    if misses:
        text += "Missed: " + ", ".join(misses) + ". "
    text += ("FLOPs alone predict ALBERT-large at "
             f"{fmt_ratio(float(df.loc[df['preset'] == 'albert-large', 'flops_only'].iloc[0]))}.")
    return text


def paper_name(preset: str) -> str:
    """A preset as the paper writes it: 'albert-xxlarge' -> 'ALBERT-xxlarge'."""
    return preset.replace("albert", "ALBERT").replace("bert", "BERT")


def _steps(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def table2_method(df: pd.DataFrame, checks: Sequence[ChipCheck]) -> str:
    """How Table 2 is recomputed (markdown bullets), every figure from the library: the paper's setting, the
    pod size its step times allow (`time_model.table2_chip_checks`), the calibrated constant, why a row is
    out of reach (`time_model.table2_size_ratios`)."""
    wl = TABLE2_WORKLOAD
    runs = list(PAPER_SAME_TIME.items())
    took = " and ".join(f"{r['hours']} h for {_steps(r['steps'])} steps" for _, r in runs)
    ok = [c.chips for c in checks if c.consistent]
    ruled = [c for c in checks if not c.consistent]
    pods = "No pod size in that range is consistent with both." if not ok else (
        f"Only {_and([str(n) for n in ok])} chips {'is' if len(ok) == 1 else 'are'} consistent with both")
    if ok and ruled:
        last = max(ruled, key=lambda c: c.chips)
        slow = last.too_fast[0]
        pods += (f": on {last.chips} chips {paper_name(slow)}'s {fmt_duration(last.paper_step_s[slow], 2)} per "
                 "step would need more than the chips' peak.")
    elif ok:
        pods += "."
    datasheet_share = float(df["datasheet_allreduce_share"].max())
    band = f"±{fmt_pct(TABLE2_BAND, 0)}"
    out = [
        f"- Setting of the paper: batch {wl.batch:,}, sequence {wl.seq_len}, Cloud TPU v3, pre-training heads, "
        f"the MLM head on the {fmt_pct(TABLE2_MLM_FRACTION, 0)} masked positions, LAMB "
        f"({OPTIMIZER_STATES[wl.optimizer]} states per weight, as {wl.optimizer.replace('adamw', 'AdamW')}). "
        f"The paper says {PAPER_TPU_RANGE[0]} to {PAPER_TPU_RANGE[1]} TPUs depending on size, and (its Table 6) "
        f"{_and([paper_name(n) for n, _ in runs])} took {took} on the same number of TPUs. {pods}",
        f"- The **one calibrated constant**: the gradient all-reduce reaches {fmt_pct(TABLE2_COMM_EFFICIENCY, 1)} "
        "of the datasheet's all-reduce bandwidth (fitted once, least squares on all "
        f"{len(PAPER_SPEEDUP)} log ratios). With the datasheet figure the all-reduce is at most "
        f"{fmt_pct(datasheet_share, 0)} of a step and the model stays near the FLOPs-only column.",
    ]
    for r in df.itertuples():
        if r.reachable:
            continue
        name = paper_name(r.preset)
        text = (f"- {name}'s {fmt_ratio(r.paper)} is out of reach of any model built on these counts. A predicted "
                "speedup is a ratio of sums of parts (matmuls, elementwise traffic, optimizer update, all-reduce), "
                "and a ratio of sums always lies between the smallest and the largest ratio of its parts, whatever "
                "efficiency or bandwidth each part is given: the column \"any model on these parts\" is that range. ")
        if r.reach_hi < (1 - TABLE2_BAND) * r.paper:
            sizes = table2_size_ratios(r.preset)
            text += (f"{name}'s FLOPs, parameters and activations are {fmt_pct(sizes['flops'], 0)}, "
                     f"{fmt_pct(sizes['params'], 0)} and {fmt_pct(sizes['activations'], 0)} of BERT-large's, so "
                     f"its range ends at {fmt_ratio(r.reach_hi)}, below the {band} band "
                     f"({fmt_ratio((1 - TABLE2_BAND) * r.paper)}). ")
        else:
            text += (f"Its range starts at {fmt_ratio(r.reach_lo)}, above the {band} band "
                     f"({fmt_ratio((1 + TABLE2_BAND) * r.paper)}). ")
        out.append(text + "Something outside the counts (another pod size for that run, memory pressure, ...) "
                   "would be needed; the paper does not say.")
    out.append(f"- Paper speedups ({', '.join(f'{k} {v}x' for k, v in PAPER_SPEEDUP.items())}) are the paper's "
               "measurements, not ours.")
    return "\n".join(out)


def profiles_frame(profiles: Sequence[HardwareProfile]) -> pd.DataFrame:
    """Every profile's figures, formatted, with their sources."""
    rows = []
    for p in profiles:
        rows.append({
            "profile": p.label,
            "dense peak": ", ".join(f"{k} {fmt_flops(v)}/s" for k, v in p.peak_flops.items()),
            "memory bandwidth": f"{fmt_bytes(p.memory_bandwidth)}/s",
            "memory": fmt_bytes(p.memory_bytes),
            "ring link per chip": f"{fmt_bytes(p.link_bandwidth)}/s" if p.link_bandwidth else "none",
            "between nodes": f"{fmt_bytes(p.scale_out_bandwidth)}/s" if p.link_bandwidth else "none",
            "achievable": fmt_pct(p.efficiency, 0),
            "sources": "; ".join(f"{k}: {v}" for k, v in p.sources.items()),
        })
    return pd.DataFrame(rows)


SPEED_VERDICTS = {1: "yes, faster", -1: "no, slower", 0: "no, about the same speed", None: "it depends on the batch"}


def pair_names(pair: Sequence[ModelConfig], sidebar: ModelConfig | None = None) -> list[str]:
    """Each config of a compared pair by its unique name (`config_name`: a preset's, or its label with every
    field that differs from what the label describes, such as V, the activation or the head), the sidebar's
    marked: two configs that differ never share a name."""
    return [config_name(c) + (" (sidebar)" if c == sidebar else "") for c in pair]


# A BERT is an ALBERT's twin only with the twin's GELU (`albert_core.counting.report.albert_counterpart`).
NO_COUNTERPART = ("This BERT runs {act}, and an ALBERT's BERT twin runs GELU, so no ALBERT has it as its twin: "
                  "there is no pair to compare. Pick an ALBERT, or a BERT with GELU.")


def _parts_differ(parts: Mapping[str, tuple[float, float]], causes: Mapping[str, str]) -> str:
    """The parts of a step whose times differ (`direction`), each with both times and its cause."""
    return "; ".join(f"{PART_LABELS[name].lower()} {fmt_duration(a)} vs {fmt_duration(b)}, "
                     f"{change_words(a, b, 'shorter by', 'longer by')}"
                     + (f" ({causes[name]})" if causes.get(name) else "")
                     for name, (a, b) in parts.items() if direction(a, b))


def speed_answer(cmp: SpeedComparison, sidebar: ModelConfig | None = None) -> str:
    """'Is ALBERT faster than BERT here?' from `questions.compare_speed`, for training and for inference, each
    with its verdict (one threshold for every comparison, `albert_core.format.direction`) and its ratio, and which
    part of the step makes the difference, with its cause (the activation, the components whose FLOPs differ, the
    parameters the optimizer updates and the all-reduce sends)."""
    albert, bert = map(escape_markdown, pair_names((cmp.albert, cmp.bert), sidebar))
    causes = {"elementwise": (f"{cmp.albert.hidden_act} against {cmp.bert.hidden_act}"
                              if cmp.albert.hidden_act != cmp.bert.hidden_act else ""),
              "matmuls": differences_words(flop_differences(count_flops(cmp.albert, 1, cmp.seq_len),
                                                            count_flops(cmp.bert, 1, cmp.seq_len))),
              "optimizer": "fewer unique parameters to update", "allreduce": "fewer gradients to send"}
    out = []
    if cmp.training_ratio is not None and cmp.training_workload is not None:
        twl = cmp.training_workload
        where = _parts_differ(cmp.training_parts, causes)
        out.append(
            f"**Training: {SPEED_VERDICTS[cmp.training_verdict]}** (estimate, {cmp.hardware.label}, {cmp.chips} "
            f"chip{'s' if cmp.chips > 1 else ''}): a training step of {albert} at batch {twl.batch} × {twl.seq_len}, "
            f"{twl.dtype} {twl.precision}, {twl.optimizer} runs at {fmt_ratio(cmp.training_ratio)} the speed of "
            f"{bert}'s step." + (f" Where the time differs: {where}." if where else
                            " Each part of the step takes nearly the same time for both."))
    ratios = _and([f"{fmt_ratio(r)} (batch {b})" for b, r in cmp.ratios.items()])
    text = (f"**Inference: {SPEED_VERDICTS[cmp.verdict]}** (estimate, {cmp.hardware.label}): {albert} runs "
            f"inference at {ratios} the speed of {bert}. Sharing removes parameters, not the layers that run: every "
            "executed layer still reads its weights and does its FLOPs.")
    where = _parts_differ(cmp.parts, causes)
    out.append(text + (f" Where the time differs (batch {max(cmp.ratios)}): {where}." if where else
                       " Each part of the inference batch takes nearly the same time for both."))
    return "\n\n".join(out)


# ----------------------------------------------------------------------------- measured gradient traffic
def gradient_traffic(pair: Sequence[ModelConfig], dtype: str, sidebar: ModelConfig | None = None) -> str:
    """"What does sharing buy when the run scales out?" (markdown): the gradient bytes every data-parallel step
    all-reduces for the two configs of `albert_core.counting.report.albert_pair`, the one with ALBERT's ideas
    first, in words that follow the numbers."""
    names = [escape_markdown(n) for n in pair_names(pair, sidebar)]
    mine, theirs = (gradient_bytes(c, dtype) for c in pair)
    return (f"Every data-parallel step all-reduces the gradients of the unique parameters (time model): "
            f"{fmt_bytes(mine)} for {names[0]} against {fmt_bytes(theirs)} for {names[1]}, "
            f"{change_words(mine, theirs)} ({dtype} gradients, {DTYPE_BYTES[dtype]} bytes "
            "each; a ring sends 2(n-1)/n of it per chip).")


MEASURED_HEAD = "pretraining"  # the shipped measurement's head (`albert_core.hardware.allreduce.measure_presets`)


def measured_allreduce_frame(measured: Mapping, sidebar: ModelConfig | None = None) -> pd.DataFrame:
    """The shipped DDP measurement (`albert_core.hardware.profiles.load_measured`) beside the time model's
    prediction (`time_model.gradient_bytes`, fp32) for each preset with the pre-training heads, with each ALBERT's
    share of its BERT's bytes (BERT-base for base, BERT-large for the larger ones). A row is marked as the
    sidebar's only when it is the sidebar's config, heads included."""
    rows = measured["rows"]
    got = {r["preset"]: int(r["allreduce_bytes_per_step"]) for r in rows}
    out = []
    for r in rows:
        name = r["preset"]
        cfg = PRESETS[name].replace(head=MEASURED_HEAD)
        predicted = gradient_bytes(cfg, "fp32")
        bert = "bert-base" if name.endswith("-base") else "bert-large"
        out.append({
            "preset, pre-training heads": name + (" (sidebar)" if cfg == sidebar else ""),
            "unique parameters": f"{int(r['unique_params']):,}",
            "measured, bytes per step": f"{got[name]:,}",
            "measured": fmt_bytes(got[name]),
            "time model (4 B x unique params)": fmt_bytes(predicted),
            "measured / model": f"{got[name] / predicted:.4f}",
            "vs its BERT (measured)": fmt_ratio(got[name] / got[bert]) if bert in got else "",
        })
    return pd.DataFrame(out)


def same_but_head(preset: ModelConfig, cfg: ModelConfig) -> bool:
    """``cfg`` is ``preset`` with another head: compared field by field, never by giving the preset ``cfg``'s head,
    which its family may not have (ELECTRA's discriminator, a head the paper's BERT and ALBERT lack)."""
    return {**preset.to_dict(), "head": None} == {**cfg.to_dict(), "head": None}


def measured_takeaway(measured: Mapping, sidebar: ModelConfig | None = None) -> str:
    got = {r["preset"]: int(r["allreduce_bytes_per_step"]) for r in measured["rows"]}
    per = sorted({got[r["preset"]] / int(r["unique_params"]) for r in measured["rows"]})
    model = DTYPE_BYTES["fp32"]  # the time model's fp32 gradient of each unique parameter (`gradient_bytes`)
    text = (f"Measured here ({measured['processes']} CPU processes, {measured['backend']}, torch {measured['torch']}, "
            f"{measured['cpu']}; produced by `{measured['command']}`): DDP all-reduces "
            + (f"exactly {per[0]:g} bytes per unique parameter every step in every row"
               if len(per) == 1 else f"{per[0]:.3g} to {per[-1]:.3g} bytes per unique parameter")
            + (", the time model's gradient traffic." if per == [model] else "."))
    if "albert-base" in got and "bert-base" in got:
        text += (f" ALBERT-base moves {fmt_bytes(got['albert-base'])} per step against BERT-base's "
                 f"{fmt_bytes(got['bert-base'])}, {got['bert-base'] / got['albert-base']:.1f} times less.")
    if sidebar is not None and sidebar.head != MEASURED_HEAD and any(
            same_but_head(PRESETS[r["preset"]], sidebar) for r in measured["rows"]):
        text += (f" Every row carries the pre-training heads; the sidebar's {config_name(sidebar)} has the head "
                 f"\"{sidebar.head_label}\" instead: {fmt_bytes(gradient_bytes(sidebar, 'fp32'))} of fp32 "
                 "gradients by the time model.")
    return text


def scale_out_commands(nproc: int = 2) -> str:
    """The command lines that run the lab's training data-parallel (a markdown code block)."""
    return f"""```bash
# this machine, {nproc} processes (gloo on CPU, nccl on GPUs): the lab's trainer under DDP
python -m albert_core train --task sop --steps 300 --batch 16 --nproc {nproc} --json
torchrun --nproc-per-node {nproc} -m albert_core train --task sop --steps 300 --batch 16 --json
# several machines: the same line on every node, node ranks 0..N-1, one rendezvous endpoint;
# the lab's per-run limits still apply (ALBERT_EXPLORER_LAB_MAX_FLOPS, ..._MAX_SECONDS, ..._MAX_STEPS)
torchrun --nnodes 2 --node-rank 0 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
    --nproc-per-node 8 -m albert_core train --hidden-size 128 --batch 128 --steps 1000 --json
```"""
