"""Config doctor: ALBERT's known traps in a transformers ``config.json``, each with its numbers for that config.

`diagnose` reads the JSON object of a config (`albert_core.configuration.hf_config.parse_config_json` for raw
bytes: only `json.loads`, nothing evaluated) with the same parser as the sidebar upload (`config_from_hf`), and
returns a `Finding` for every trap that applies: its severity, what it means, the number it changes (parameters,
FLOPs, memory, or which layers share weights), the fix and the fix's effect, computed with the exact counters.

Dropout is read from the raw keys (`ModelConfig` does not model it); absent keys take transformers' defaults
(ALBERT 0, BERT 0.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from albert_core.checks import check_whole_number, short_repr
from albert_core.configuration.coerce import bert_twin, fit_heads
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import _HF_DEFAULTS, _hf_dict, config_from_hf, parse_config_json
from albert_core.configuration.presets import config_name
from albert_core.counting.flops import count_flops
from albert_core.counting.memory import estimate_memory
from albert_core.counting.params import count_params
from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_ratio

SEVERITIES = ("error", "warning", "info")
V1_DROPOUT = 0.1  # ALBERT v1 base/large/xlarge (xxlarge and every v2 config: 0)
DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob")
DEFAULT_DROPOUT = {"albert": 0.0, "bert": 0.1}  # transformers' AlbertConfig / BertConfig defaults
DOCTOR_BATCH = 8  # the batch memory effects are computed at (the Explorer's default)
LARGE_TABLE_BYTES = 10**9  # a V x H fp32 table from 1 GB is a memory peak worth a warning


@dataclass(frozen=True)
class Finding:
    """One trap: ``code`` (stable id), ``severity`` (error / warning / info), ``what`` it means for this
    config, ``changes`` (parameters, FLOPs, memory, sharing, fine-tuning, loading) and ``number`` (its value
    here), the ``fix`` and its computed ``effect``, and ``source`` (the key or reference it comes from)."""

    code: str
    severity: str
    what: str
    changes: str
    number: str
    fix: str
    effect: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Diagnosis:
    config: ModelConfig | None  # None when the file describes no model (see the error findings)
    seq_len: int
    findings: tuple[Finding, ...]

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": None if self.config is None else config_name(self.config),
            "seq_len": self.seq_len,
            "findings": [f.to_dict() for f in self.findings],
        }


def _params(cfg: ModelConfig) -> int:
    return count_params(cfg).total


def _flops(cfg: ModelConfig, seq_len: int) -> int:
    return count_flops(cfg, 1, seq_len).forward


def _change(before: int, after: int, fmt=fmt_params) -> str:
    sign = "+" if after >= before else "-"
    return f"{fmt(before)} -> {fmt(after)} ({sign}{fmt(abs(after - before))})"


def _layer_plan(cfg: ModelConfig) -> str:
    """Which layers run which group's weights, e.g. 'group 0: layers 0-4; group 1: layers 5-9'."""
    runs: dict[int, list[int]] = {}
    for i in range(cfg.num_layers):
        runs.setdefault(cfg.group_of_layer(i), []).append(i)
    return "; ".join(
        f"group {g}: layer{'s' if len(ls) > 1 else ''} {ls[0]}{f'-{ls[-1]}' if len(ls) > 1 else ''}"
        for g, ls in runs.items()
    )


def _dropout_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    values = {}
    for key in DROPOUT_KEYS:
        value = data.get(key, DEFAULT_DROPOUT[cfg.family])
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            return [
                Finding(
                    "dropout-invalid",
                    "error",
                    f"{key} must be a number in [0, 1), got {short_repr(value)}",
                    "fine-tuning",
                    short_repr(value),
                    f"set {key} to a number in [0, 1), e.g. 0 or 0.1",
                    "transformers builds its Dropout layers from it",
                    key,
                )
            ]
        values[key] = float(value)
    if cfg.family != "albert" or any(values.values()):
        return []
    absent = [k for k in DROPOUT_KEYS if k not in data]
    source = ", ".join(DROPOUT_KEYS) + (
        f" (absent: transformers' default 0 for {', '.join(absent)})" if absent else ""
    )
    without = estimate_memory(cfg, DOCTOR_BATCH, seq_len, dropout=0.0).activations
    with_v1 = estimate_memory(cfg, DOCTOR_BATCH, seq_len, dropout=V1_DROPOUT).activations
    return [
        Finding(
            "dropout-zero",
            "info",
            "dropout is 0, as in every ALBERT v2 config and v1 xxlarge (v1 base, large and xlarge used 0.1): "
            "fine-tuning recipes written for v1 assume 0.1, and the paper found removing dropout helps only the "
            "largest models in pre-training",
            "fine-tuning",
            "hidden and attention-probability dropout 0",
            f"for a v1-style fine-tuning recipe set {' and '.join(DROPOUT_KEYS)} to {V1_DROPOUT}",
            f"training activations at batch {DOCTOR_BATCH} x {seq_len}: {_change(without, with_v1, fmt_bytes)} "
            "(dropout masks; parameters and FLOPs unchanged)",
            source,
        )
    ]


def _sharing_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    if cfg.family != "albert":
        return []
    L, G, K = cfg.num_layers, cfg.num_hidden_groups, cfg.inner_group_num
    out: list[Finding] = []
    unshared = cfg.replace(num_hidden_groups=L)
    all_shared = cfg.replace(num_hidden_groups=1)
    if L > 1 and G == 1:
        out.append(
            Finding(
                "groups-all-shared",
                "info",
                f"num_hidden_groups = 1: all {L} layers run one set of weights (ALBERT's all-shared layout); "
                "sharing saves parameters, not compute: every layer still runs",
                "sharing",
                f"{fmt_params(_params(cfg))} parameters; {fmt_params(_params(unshared))} if unshared",
                f"num_hidden_groups = {L} unshares every layer",
                f"parameters {_change(_params(cfg), _params(unshared))}; forward FLOPs unchanged at "
                f"{fmt_flops(_flops(cfg, seq_len))} per {seq_len}-token sequence",
                "num_hidden_groups",
            )
        )
    elif L > 1 and G == L:
        out.append(
            Finding(
                "groups-unshared",
                "info",
                f"num_hidden_groups = num_hidden_layers = {L}: no layer shares weights (a BERT layout with "
                "ALBERT's factorized embeddings)",
                "sharing",
                f"{fmt_params(_params(cfg))} parameters",
                "num_hidden_groups = 1 shares all layers (ALBERT's default)",
                f"parameters {_change(_params(cfg), _params(all_shared))}; forward FLOPs unchanged",
                "num_hidden_groups",
            )
        )
    elif 1 < G < L and L % G == 0:
        out.append(
            Finding(
                "groups-partial",
                "info",
                f"num_hidden_groups = {G}: {G} weight sets, each run by {L // G} consecutive layers "
                f"({_layer_plan(cfg)})",
                "sharing",
                f"{fmt_params(_params(cfg))} parameters",
                "num_hidden_groups = 1 shares all layers; = num_hidden_layers shares none",
                f"parameters: G = 1 {fmt_params(_params(all_shared))}, G = {L} {fmt_params(_params(unshared))}; "
                "forward FLOPs unchanged",
                "num_hidden_groups",
            )
        )
    if G > 1 and L % G:
        sizes = sorted({sum(1 for i in range(L) if cfg.group_of_layer(i) == g) for g in range(G)})
        divisors = [d for d in range(1, L + 1) if L % d == 0]
        nearest = min(divisors, key=lambda d: (abs(d - G), d))
        out.append(
            Finding(
                "groups-uneven",
                "warning",
                f"num_hidden_groups = {G} does not divide num_hidden_layers = {L}: groups run "
                f"{' or '.join(map(str, sizes))} layers each (layer i uses group int(i / (L / G))): {_layer_plan(cfg)}",
                "sharing",
                f"group sizes {', '.join(map(str, sizes))}",
                f"num_hidden_groups = {nearest} (a divisor of {L}) gives {L // nearest} layers per group",
                f"parameters {_change(_params(cfg), _params(cfg.replace(num_hidden_groups=nearest)))}; FLOPs unchanged",
                "num_hidden_groups",
            )
        )
    if K > 1:
        one = cfg.replace(inner_group_num=1)
        out.append(
            Finding(
                "inner-groups",
                "warning",
                f"inner_group_num = {K}: each layer runs {K} distinct blocks ({L * K} executed layers); every released "
                "ALBERT checkpoint has inner_group_num = 1, so their weights do not load into this shape",
                "FLOPs",
                f"{fmt_flops(_flops(cfg, seq_len))} forward per {seq_len}-token sequence, {L * K} layers run",
                "inner_group_num = 1 (the released layout)",
                f"forward FLOPs {_change(_flops(cfg, seq_len), _flops(one, seq_len), fmt_flops)}; parameters "
                f"{_change(_params(cfg), _params(one))}",
                "inner_group_num",
            )
        )
    return out


def _embedding_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    if cfg.family != "albert":
        return []
    V, E, H = cfg.vocab_size, cfg.embedding_size, cfg.hidden_size
    out: list[Finding] = []
    if E > H:
        fixed = cfg.replace(embedding_size=H)
        out.append(
            Finding(
                "embedding-wider",
                "warning",
                f"embedding_size E = {E} > hidden_size H = {H}: the factorization V x E + E x H holds more than a "
                f"plain V x H table would, and the projection E->H only narrows",
                "parameters",
                f"embeddings + projection {fmt_params(V * E + E * H + H)} vs V x H {fmt_params(V * H)}",
                f"embedding_size = {H} (or ALBERT's 128)",
                f"parameters {_change(_params(cfg), _params(fixed))}",
                "embedding_size",
            )
        )
    if E != H:
        out.append(
            Finding(
                "inputs-embeds-width",
                "info",
                f"inputs_embeds must have width E = {E} (embedding_size), not H = {H}: they enter before the "
                "E->H projection",
                "loading",
                f"inputs_embeds (batch, seq, {E})",
                f"pass tensors of shape (batch, seq, {E}); map H-wide vectors through your own projection first",
                f"a (batch, seq, {H}) tensor fails with a shape error in embedding_hidden_mapping_in",
                "embedding_size",
            )
        )
    if E < H:
        big, small = 4 * V * H, 4 * V * E
        out.append(
            Finding(
                "vocab-table-peak",
                "warning" if big >= LARGE_TABLE_BYTES else "info",
                f"a BERT-style builder (or a resize to V x H) allocates a {V:,} x {H} table before ALBERT's "
                f"{V:,} x {E}: the factorization saves memory only if nothing builds the wide one",
                "memory",
                f"V x H fp32 {fmt_bytes(big)} vs V x E fp32 {fmt_bytes(small)}",
                "build the word table at width E and project (ALBERT's layout); never materialise V x H",
                f"peak memory of the table {_change(big, small, fmt_bytes)}",
                "vocab_size, embedding_size",
            )
        )
    return out


def _cost_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    if cfg.family != "albert":
        return []
    twin = bert_twin(cfg)
    p, tp = _params(cfg), _params(twin)
    f, tf = _flops(cfg, seq_len), _flops(twin, seq_len)
    return [
        Finding(
            "params-vs-compute",
            "info",
            f"this ALBERT holds {fmt_ratio(p / tp)} the parameters of its BERT twin (same V, H, L, I) and runs "
            f"{fmt_ratio(f / tf)} its forward FLOPs: time per step follows the FLOPs, not the parameters",
            "FLOPs",
            f"{fmt_params(p)} parameters, {fmt_flops(f)} forward per {seq_len}-token sequence",
            "for less compute shrink H, I, L or the sequence; sharing changes only parameters",
            f"BERT twin: {fmt_params(tp)} parameters, {fmt_flops(tf)} forward",
            "the paper's Table 2 vs Table 1; albert_core.counting.flops",
        )
    ]


def _sanity_findings(
    data: Mapping[str, Any], cfg: ModelConfig, seq_len: int, explicit_seq: bool
) -> list[Finding]:
    out: list[Finding] = []
    H, I = cfg.hidden_size, cfg.intermediate_size  # noqa: E741 (paper notation)
    if I != 4 * H:
        fixed = cfg.replace(intermediate_size=4 * H)
        out.append(
            Finding(
                "ffn-not-4h",
                "info",
                f"intermediate_size I = {I:,} is {fmt_ratio(I / H)} H, not 4H = {4 * H:,} "
                "(every published BERT and ALBERT)",
                "parameters",
                f"FFN {fmt_params(cfg.ffn_copies * (2 * H * I + I + H))} parameters",
                f"intermediate_size = {4 * H:,}",
                f"parameters {_change(_params(cfg), _params(fixed))}; forward FLOPs "
                f"{_change(_flops(cfg, seq_len), _flops(fixed, seq_len), fmt_flops)}",
                "intermediate_size",
            )
        )
    P = cfg.max_position_embeddings
    if explicit_seq and seq_len > P:
        fixed = cfg.replace(max_position_embeddings=seq_len)
        out.append(
            Finding(
                "positions-short",
                "error",
                f"max_position_embeddings = {P} is below the sequence length used ({seq_len}): positions {P} and up "
                "have no embedding row and the forward fails with an index error",
                "parameters",
                f"position table {P:,} x {cfg.embedding_size}",
                f"max_position_embeddings = {seq_len} (new rows need training), or sequences of at most {P} tokens",
                f"parameters {_change(_params(cfg), _params(fixed))}",
                "max_position_embeddings",
            )
        )
    return out


def _heads_finding(data: Mapping[str, Any]) -> Finding | None:
    family = data.get("model_type")
    if family not in _HF_DEFAULTS:
        return None
    hidden = data.get("hidden_size", _HF_DEFAULTS[family]["hidden_size"])
    heads = data.get("num_attention_heads", _HF_DEFAULTS[family]["num_attention_heads"])
    if (
        not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (hidden, heads))
        or hidden % heads == 0
    ):
        return None
    fixed = fit_heads(hidden, heads)
    return Finding(
        "heads-not-dividing",
        "error",
        f"num_attention_heads = {heads} does not divide hidden_size = {hidden}: heads would have "
        f"{hidden / heads:.2f} dimensions; transformers refuses the config",
        "loading",
        f"{hidden} / {heads} = {hidden / heads:.2f}",
        f"num_attention_heads = {fixed} (the divisor of {hidden} with a head size nearest 64)",
        f"head size {hidden // fixed}; parameters and FLOPs unchanged (they do not depend on the head count)",
        "num_attention_heads, hidden_size",
    )


def diagnose(source: Mapping[str, Any] | bytes | str | Path, seq_len: int | None = None) -> Diagnosis:
    """Every applicable trap of a transformers config: a parsed dict, the bytes of a config.json, or a path
    to one (or to its folder).

    ``seq_len``: the sequence length it will be used at (default 128, capped by the position table;
    only an explicit one above ``max_position_embeddings`` is flagged). A file that is not a config
    raises ValueError naming the problem; a config that describes no valid model gives error findings.
    """
    data = parse_config_json(source) if isinstance(source, (bytes, bytearray)) else source
    if isinstance(data, (str, Path)):
        data = _hf_dict(data)  # the size check and the same parser as --hf-config
    if not isinstance(data, Mapping):
        raise ValueError(f"a config must be a JSON object or a dict, got {type(data).__name__}")
    explicit = seq_len is not None
    if explicit:
        check_whole_number("seq_len", seq_len)
    heads = _heads_finding(data)
    fixed_data = dict(data)
    if heads is not None:  # diagnose the rest with the fixed head count
        fixed_data["num_attention_heads"] = int(heads.fix.split()[2])
    try:
        cfg = config_from_hf(fixed_data)
    except ValueError as exc:
        if data.get("model_type") not in _HF_DEFAULTS:
            raise
        finding = Finding(
            "invalid",
            "error",
            f"the config describes no model: {exc}",
            "loading",
            "-",
            "correct the field named above",
            "transformers refuses it the same way",
            "config.json",
        )
        return Diagnosis(None, seq_len or 0, tuple(f for f in (heads, finding) if f))
    used = seq_len if explicit else min(128, cfg.max_position_embeddings)
    counted = min(used, cfg.max_position_embeddings)  # the FLOPs of a sequence that fits
    findings = [heads] if heads else []
    findings += _dropout_findings(data, cfg, counted)
    findings += _sharing_findings(data, cfg, counted)
    findings += _embedding_findings(data, cfg, counted)
    findings += _sanity_findings(data, cfg, used, explicit)
    findings += _cost_findings(data, cfg, counted)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return Diagnosis(cfg, used, tuple(sorted(findings, key=lambda f: order[f.severity])))
