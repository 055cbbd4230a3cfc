"""What the Compare page shows of a pinned set at a workload, made once per pinned set and workload.

A function decorated with `st.cache_resource` in a page script would be decorated again on every rerun (a page's
code runs top to bottom each time, and the decorator keys the function by reading its source); here it is decorated
once, at import. What it returns is shared between sessions and never mutated (the page and the builders only read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import plotly.graph_objects as go
import streamlit as st

from albert_core import ModelConfig, Workload
from albert_core.configuration.coerce import albertize
from albert_core.configuration.config import ALL_LORA_TARGETS, FAMILY_NAMES, SHARING_SCHEME
from albert_core.configuration.presets import ALL_PRESETS, config_name, matching_preset
from albert_core.counting.flops import differences_words, flop_differences
from albert_core.hardware.albertized import albertized_from
from ui import plotly_dicts, tables, urls
from ui.compare import figures as compare_figures
from ui.state import CONFIG_HASH_FUNCS, cached_result

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class CompareView:
    """What the Compare page shows of a pinned set at a workload (it does not depend on the sidebar's config)."""

    notes: tuple[str, ...]  # pins whose sequence length was lowered to their P
    base: str  # the first pin's name: the baseline
    cost: pa.Table  # `compare_figures.compare_cost_table`
    formats: dict[str, str]
    badges: dict[str, str]
    arch: pa.Table  # name, family, V, E, H, L, heads, I, sharing, G, K (and the scheme's columns, `arch_columns`)
    bars: go.Figure
    takeaway: str


COMPARE_ARCH_COLUMNS = ["name", "family", "V", "E", "H", "L", "heads", "I", "sharing", "G", "K"]
# The sharing schemes since ALBERT: shown only when a pin leaves ALBERT's own scheme (`SHARING_SCHEME`).
SCHEME_COLUMNS = ["order", "ends", "repeat", "lora", "lora_on"]


def leaves_albert_scheme(cfg: ModelConfig) -> bool:
    return any(getattr(cfg, name) != value for name, value in SHARING_SCHEME.items())


def scheme_cells(cfg: ModelConfig) -> dict[str, object]:
    """A pin's scheme in the architecture table: block order, unique ends, repeat, LoRA rank and matrices ("" without
    a LoRA: its matrices mean nothing then)."""
    return {"order": cfg.block_order, "ends": cfg.unique_ends, "repeat": cfg.repeat, "lora": cfg.lora_rank,
            "lora_on": cfg.lora_targets if cfg.lora_rank else ""}


def arch_columns(configs: tuple[ModelConfig, ...]) -> list[str]:
    """The architecture table's columns: the scheme's only where a pin leaves ALBERT's scheme."""
    return COMPARE_ARCH_COLUMNS + (SCHEME_COLUMNS if any(map(leaves_albert_scheme, configs)) else [])


def scheme_words(cfg: ModelConfig) -> list[str]:
    """A pin's scheme where it leaves ALBERT's, as `ModelConfig.label` writes it ("cycle", "unique ends", "x2",
    "LoRA r=8"), and the LoRA's matrices when not all six ("on q-v-in")."""
    words = [w for w, on in ((cfg.block_order, cfg.block_order != "groups"), ("unique ends", cfg.unique_ends),
                             (f"x{cfg.repeat}", cfg.repeat > 1), (f"LoRA r={cfg.lora_rank}", cfg.lora_rank > 0)) if on]
    if cfg.lora_rank and cfg.lora_targets != ALL_LORA_TARGETS:
        words.append(f"on {cfg.lora_targets}")
    return words


def pin_origin(cfg: ModelConfig, others: tuple[ModelConfig, ...] = ()) -> tuple[str, ModelConfig] | None:
    """(name, config) of what an ALBERTized pin was made from: another pin (the upload or custom config pinned
    beside it), else a preset; None for a pin that is not ALBERTized or was made from neither."""
    origin = albertized_from(cfg, (*others, *ALL_PRESETS.values()))
    if origin is None:
        return None
    return (matching_preset(origin) or config_name(origin)), origin


def pin_label(entry: str) -> str:
    """What the page calls a pin: the visitor's name for it; a twin made from a preset "<preset> · ALBERTized"
    (issue 42: twins were told apart only by colour), with its E, sharing, G and K when they are not ALBERTize's
    own (E = 128 or H, all shared, G = K = 1); else the config's unique name (`urls.pin_name`)."""
    body, name = urls.split_pin(entry)
    if name:
        return name
    cfg = urls.decode_pin(body)
    made = pin_origin(cfg)
    if made is None:
        return urls.pin_name(entry)
    preset, origin = made
    if cfg == albertize(origin, embedding_size=min(128, origin.hidden_size)):
        return f"{preset} · ALBERTized"
    parts = [f"E={cfg.embedding_size}"] + ([cfg.sharing if cfg.sharing != "none" else "not shared"]) + (
        [f"G={cfg.num_hidden_groups}"] if cfg.num_hidden_groups > 1 else []) + (
        [f"K={cfg.inner_group_num}"] if cfg.inner_group_num > 1 else []) + scheme_words(cfg)
    return f"{preset} · ALBERTized {' '.join(parts)}"


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIG_HASH_FUNCS)
def compare_view(pins: tuple[str, ...], wl: Workload) -> CompareView:
    """Each pin's numbers at ``wl`` (its sequence length capped at the pin's longest input), the two tables, the bars
    and the takeaway, made once per pinned set and workload: a move of a sidebar slider changes none of them."""
    rows, notes, flops, originals = [], [], [], []
    configs = tuple(urls.decode_pin(e) for e in pins)
    for entry in pins:
        pcfg, name = urls.decode_pin(entry), pin_label(entry)
        longest = pcfg.max_seq_len  # the position table's rows after its offset (RoBERTa: P - 2)
        pwl = wl if wl.seq_len <= longest else wl.replace(seq_len=longest)
        if pwl is not wl:
            rows_of = (f"P = {pcfg.max_position_embeddings} less the position table's offset {pcfg.position_offset}"
                       if pcfg.position_offset else f"P = {pcfg.max_position_embeddings}")
            notes.append(f"{name}: sequence length lowered to {longest}, its longest input ({rows_of}).")
        own = cached_result(pcfg, pwl).own
        flops.append(own.flops_sequence)
        made = pin_origin(pcfg, configs)  # a twin compares with what it was made from (issue 42), a pin or a preset
        if made is None:
            originals.append("")
        else:
            theirs = cached_result(made[1], pwl).own
            originals.append(compare_figures.against_original(
                "" if name.startswith(f"{made[0]} · ") else made[0], (own.params.total, theirs.params.total),
                (own.flops_sequence.forward, theirs.flops_sequence.forward), (own.memory.total, theirs.memory.total)))
        rows.append({
            "name": name, "family": FAMILY_NAMES[pcfg.family], "V": pcfg.vocab_size, "E": pcfg.embedding_size,
            "H": pcfg.hidden_size, "L": pcfg.num_layers, "heads": pcfg.num_heads, "I": pcfg.intermediate_size,
            "sharing": pcfg.sharing, "G": pcfg.num_hidden_groups, "K": pcfg.inner_group_num, **scheme_cells(pcfg),
            "params": own.params.total, "forward_flops": own.flops_sequence.forward,
            "training_memory": own.memory.total,
        })
    df = compare_figures.compare_frame(rows)
    cost, formats, badges = compare_figures.compare_cost_table(df)
    cost["own_original"] = originals
    takeaway = compare_figures.compare_takeaway(df, [differences_words(flop_differences(f, flops[0]))
                                                     for f in flops])
    spread = compare_figures.spread_takeaway(df)
    return CompareView(tuple(notes), rows[0]["name"], tables.arrow(cost), formats, badges,
                       tables.arrow(df[arch_columns(configs)]), plotly_dicts.frozen(compare_figures.compare_bars(df)),
                       f"{spread} {takeaway}" if spread else takeaway)


@st.cache_resource(max_entries=64, show_spinner=False)
def published_view(pins: tuple[str, ...]) -> pa.Table | None:
    """The published figures of the pinned architectures (`albert_core.quality_cost.presets_of`), one row per pin and
    figure, grouped by metric and protocol (only rows of one protocol compare); None when no pin has any."""
    from albert_core.quality import PROTOCOLS, figures, fmt_value
    from albert_core.quality_cost import presets_of

    rows = [{"pin": urls.pin_name(e), "metric": f.metric, "protocol": PROTOCOLS[f.protocol].label, "model": f.model,
             "value": fmt_value(f.value), "split": f.split, "fine-tuned by": f.fine_tuned_by, "source": f.source}
            for e in pins for name in presets_of(urls.decode_pin(e)) for f in figures(preset=name)]
    if not rows:
        return None
    rows.sort(key=lambda r: (r["metric"], r["protocol"]))  # stable: the pins' order within a protocol
    return tables.columns({k: [r[k] for r in rows] for k in rows[0]})
