"""Config doctor: the known traps of a transformers ``config.json`` (ALBERT's, and those of the encoders since: the
three meanings of intermediate_size, ModernBERT's local_attention against transformers' sliding_window, an
"absolute" position type where there is no table, untied decoders, grouped-query attention, sizes off the
hardware's multiples), each with its numbers for that config.

`diagnose` reads the JSON object of a config (`albert_core.configuration.hf_config.parse_config_json` for raw
bytes: only `json.loads`, nothing evaluated) with the one strict reader of the sidebar upload and the CLI
(`read_fields`: every key's type and range checked before any value is used), and returns a `Finding` for every
trap that applies: its severity, what it means, the number it changes (parameters,
FLOPs, memory, or which layers share weights), the fix and the fix's effect, computed with the exact counters.

Dropout is read from the raw keys (`ModelConfig` does not model it); absent keys take transformers' defaults
(ALBERT 0, BERT 0.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from albert_core.checks import check_whole_number
from albert_core.configuration.coerce import albertize, bert_twin, coerce, fit_heads
from albert_core.configuration.config import SHARING_SCHEME, ModelConfig, family_of
from albert_core.configuration.hf_config import (
    HfFields,
    _hf_dict,
    config_from_fields,
    hf_family,
    parse_config_json,
    read_fields,
)
from albert_core.configuration.hf_schema import excerpt
from albert_core.configuration.presets import config_name
from albert_core.counting.flops import count_flops, dense_masked_excess
from albert_core.counting.memory import estimate_memory
from albert_core.counting.params import count_params
from albert_core.format import fmt_bytes, fmt_flops, fmt_params, fmt_ratio

SEVERITIES = ("error", "warning", "info")
V1_DROPOUT = 0.1  # ALBERT v1 base/large/xlarge (xxlarge and every v2 config: 0)
DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob")
DOCTOR_BATCH = 8  # the batch memory effects are computed at (the Explorer's default)
LARGE_TABLE_BYTES = 10**9  # a V x H fp32 table from 1 GB is a memory peak worth a warning
VOCAB_MULTIPLE = 64  # tensor-core friendly vocabulary (the decoder's output dimension); Karpathy's 50,257 -> 50,304
FFN_MULTIPLE = 8  # matmul dimensions that are multiples of 8 keep fp16/bf16 tensor cores busy
EMBEDDING_SHARE = 0.3  # from this share of parameters in the embeddings, factorizing them is worth a look


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


def _flops_way(change: float) -> str:
    """A FLOP change in words that follow its sign (issue 42: a 60.7 % reduction read "stay within 60.7 %")."""
    if abs(change) < 0.01:
        return f"forward FLOPs stay within {abs(change):.1%}"
    return f"forward FLOPs {'fall' if change < 0 else 'rise'} by {abs(change):.1%}"


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
        value = data.get(key, family_of(cfg.family).dropout)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            return [
                Finding(
                    "dropout-invalid",
                    "error",
                    f"{key} must be a number in [0, 1), got {excerpt(value)}",
                    "fine-tuning",
                    excerpt(value),
                    f"set {key} to a number in [0, 1), e.g. 0 or 0.1",
                    "transformers builds its Dropout layers from it",
                    key,
                )
            ]
        values[key] = float(value)
    if not _shares(cfg) or any(values.values()):  # ALBERT's releases: v1 with 0.1, v2 without
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


def _shares(cfg: ModelConfig) -> bool:
    """The file's family writes ALBERT's sharing keys (num_hidden_groups, inner_group_num): its class shares layers
    (`Family.class_axes`), and the findings about them, its embedding and its BERT twin apply."""
    return "sharing" in family_of(cfg.family).class_axes


def _sharing_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    if not _shares(cfg):
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
    if not _shares(cfg):
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
    if not _shares(cfg):
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
    if I != 4 * H and cfg.ffn_kind == "dense":
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


def _ffn_meaning(cfg: ModelConfig, data: Mapping[str, Any]) -> Finding | None:
    if cfg.ffn_kind != "glu":
        return None
    H, I = cfg.hidden_size, cfg.intermediate_size  # noqa: E741 (paper notation)
    per_block = 3 * H * I
    record = family_of(cfg.family)
    ffn = record.transformers.modules.ffn if record.transformers else {}
    up = [n.rsplit(".", 1)[-1] for n in ffn.get("ffn", ())]
    down = [n.rsplit(".", 1)[-1] for n in ffn.get("ffn_output", ())]
    if len(up) == 1 and down:  # one module holds gate and up (ModernBERT's Wi)
        layout = f"{up[0]} = Linear({H:,}, 2 x {I:,}) (input and gate fused) and {down[0]} = Linear({I:,}, {H:,})"
    elif len(up) == 2 and down:  # gate_proj and up_proj (EuroBERT, NomicBERT)
        layout = f"{up[0]} and {up[1]} = Linear({H:,}, {I:,}) each and {down[0]} = Linear({I:,}, {H:,})"
    else:
        layout = "gate, up and down of I each"
    dense = cfg.replace(ffn_kind="dense")
    return Finding(
        "intermediate-size-meaning", "info",
        f"intermediate_size I = {I:,} is the width of each of a gated FFN's three matrices here: "
        f"{layout}; in BERT and ALBERT it is one up projection of I, "
        "so the same number means 1.5x the FFN parameters (a GLU at 8H/3 holds what a dense FFN at 4H holds)",
        "parameters", f"FFN per layer {fmt_params(per_block)} (a dense FFN with this I: {fmt_params(2 * H * I)})",
        f"compare FFNs by parameters, not by intermediate_size; a dense FFN of the same size has I = {3 * I // 2:,}",
        f"parameters with a dense FFN of this I: {_change(_params(cfg), _params(dense))}",
        "intermediate_size" + (f", {cfg.family} (transformers' {data.get('model_type')} class)" if data else ""),
    )


def _scores(cfg: ModelConfig, seq_len: int) -> int:
    return count_flops(cfg, 1, seq_len).by_name()["encoder.attention.scores"]


def _local_window_findings(cfg: ModelConfig, data: Mapping[str, Any], seq_len: int) -> list[Finding]:
    if not cfg.local_window:
        return []
    w, half = cfg.local_window, cfg.local_window // 2
    local = cfg.local_layers
    out = [Finding(
        "local-window", "info",
        f"local_attention = {w} is the whole window: each token attends to {half} tokens on each side (transformers' "
        f"sliding_window is half of it, {half}); {local} of {cfg.num_layers} layers are local (a global one every "
        f"{cfg.global_every})",
        "FLOPs", f"attention scores at {seq_len} tokens: {fmt_flops(_scores(cfg, seq_len))} counted at the window; an "
        "implementation that scores every pair and masks (transformers' eager) spends "
        f"{fmt_flops(dense_masked_excess(cfg, 1, seq_len))} more",
        "nothing to fix; give a tool the whole window (local_attention), not sliding_window",
        "the window matters only beyond its width: at most "
        f"{w + 1} keys a query", "local_attention, global_attn_every_n_layers")]
    sliding = data.get("sliding_window")
    written = data.get("local_attention", family_of(cfg.family).reader.defaults.get("local_attention"))
    if sliding is not None and written != w:  # checked by the reader: a whole number, w = 2 x sliding_window
        out.append(Finding(
            "sliding-window-mismatch", "warning",
            f"sliding_window = {sliding} and local_attention = {excerpt(written)} disagree: transformers 5 sets "
            f"local_attention = 2 x sliding_window = {w} (the window counted here); transformers 4 ignored "
            f"sliding_window and used local_attention", "FLOPs",
            f"window {w} (from sliding_window) against {excerpt(written)} (local_attention)",
            f"write one of them: local_attention = {w}, or drop sliding_window for local_attention = "
            f"{excerpt(written)}",
            "the window both versions of transformers use is then the same", "sliding_window, local_attention"))
    return out


def _encoder_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    """The traps of the encoders after BERT (and two that apply to any): see the module docstring."""
    out: list[Finding] = []
    meaning = _ffn_meaning(cfg, data)
    if meaning:
        out.append(meaning)
    out += _local_window_findings(cfg, data, seq_len)
    if cfg.position != "learned" and data.get("position_embedding_type") == "absolute":
        out.append(Finding(
            "absolute-without-table", "info",
            f"position_embedding_type says 'absolute', but {cfg.family} has no position table ({cfg.position} "
            "positions): the key is left over from BERT's config and ignored",
            "parameters", f"position parameters 0 (a BERT-style table would hold {cfg.max_position_embeddings:,} x "
            f"{cfg.embedding_size} = {fmt_params(cfg.max_position_embeddings * cfg.embedding_size)})",
            "drop position_embedding_type", "nothing changes in the model", "position_embedding_type"))
    if cfg.has_mlm_head and not cfg.tie_word_embeddings:
        tied = cfg.replace(tie_word_embeddings=True)
        out.append(Finding(
            "untied-decoder", "info",
            f"the MLM decoder is untied: it holds its own {cfg.vocab_size:,} x {cfg.embedding_size} matrix beside the "
            "word embeddings (discarded when the encoder is fine-tuned without it)",
            "parameters", f"decoder {fmt_params(cfg.vocab_size * cfg.embedding_size)} parameters",
            "tie_word_embeddings = true (the decoder reads the word embeddings)",
            f"parameters {_change(_params(cfg), _params(tied))}", "tie_word_embeddings"))
    if cfg.num_kv_heads:
        mha = cfg.replace(num_kv_heads=0)
        out.append(Finding(
            "grouped-query", "info",
            f"{cfg.num_kv_heads} key/value heads for {cfg.num_heads} query heads: K and V are "
            f"{cfg.kv_size:,} wide instead of {cfg.hidden_size:,} (an encoder keeps no KV cache, so the saving is "
            "in weights and projection FLOPs only; the attention scores cost the same)",
            "parameters", f"Q/K/V projection {fmt_params(cfg.hidden_size * (cfg.hidden_size + 2 * cfg.kv_size))} "
            f"per layer", "nothing to fix",
            f"against full multi-head attention: parameters {_change(_params(mha), _params(cfg))}; forward FLOPs "
            f"{_change(_flops(mha, seq_len), _flops(cfg, seq_len), fmt_flops)}", "num_key_value_heads"))
    if family_of(cfg.family).paper:  # the size hints are for encoders being designed, not the paper's fixed sizes
        return out
    V = cfg.vocab_size
    if V % VOCAB_MULTIPLE:
        padded = -(-V // VOCAB_MULTIPLE) * VOCAB_MULTIPLE
        out.append(Finding(
            "vocab-not-multiple", "info",
            f"vocab_size = {V:,} is not a multiple of {VOCAB_MULTIPLE}: the decoder's {V:,}-wide output and the "
            "embedding gather run on tensor cores at full speed only on multiples of 64 (padded rows are never "
            "predicted once their logits are masked)",
            "FLOPs", f"{V:,} = {V // VOCAB_MULTIPLE} x {VOCAB_MULTIPLE} + {V % VOCAB_MULTIPLE}",
            f"pad vocab_size to {padded:,}",
            f"parameters {_change(_params(cfg), _params(cfg.replace(vocab_size=padded)))}",
            "vocab_size"))
    I = cfg.intermediate_size  # noqa: E741 (paper notation)
    if I % FFN_MULTIPLE:
        up = -(-I // FFN_MULTIPLE) * FFN_MULTIPLE
        out.append(Finding(
            "ffn-not-multiple", "info",
            f"intermediate_size = {I:,} is not a multiple of {FFN_MULTIPLE}: fp16/bf16 matmuls pad or fall back "
            "to slower kernels on such dimensions",
            "FLOPs", f"{I:,} = {I // FFN_MULTIPLE} x {FFN_MULTIPLE} + {I % FFN_MULTIPLE}",
            f"intermediate_size = {up:,}",
            f"parameters {_change(_params(cfg), _params(cfg.replace(intermediate_size=up)))}",
            "intermediate_size"))
    total = _params(cfg)
    share = count_params(cfg).group_totals()["embeddings"] / total
    if share >= EMBEDDING_SHARE and cfg.embedding_size > 128:
        twin = albertize(cfg, sharing=None)
        out.append(Finding(
            "embedding-share", "info",
            f"the embeddings hold {share:.0%} of the parameters: ALBERT's factorization (a {V:,} x 128 table and "
            f"a 128 x {cfg.hidden_size} projection) shrinks exactly that part; "
            + _flops_way(_flops(twin, seq_len) / _flops(cfg, seq_len) - 1),
            "parameters", f"embeddings {fmt_params(count_params(cfg).group_totals()['embeddings'])} of "
            f"{fmt_params(total)}",
            "embedding_size = 128 (ALBERTize: `albertize` on the command line, the Explorer's E)",
            f"parameters {_change(total, _params(twin))}", "vocab_size, hidden_size"))
    return out


def _heads_finding(fields: HfFields) -> Finding | None:
    hidden, heads = fields["hidden_size"], fields["num_attention_heads"]  # checked: whole numbers in range
    if hidden % heads == 0:
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


def _scheme_findings(data: Mapping[str, Any], cfg: ModelConfig, seq_len: int) -> list[Finding]:
    """Keys of the sharing schemes since ALBERT (block_order, unique_ends, repeat, lora_rank, lora_targets) in a
    config.json: no transformers class reads them, so the model it builds has none of them, and every number here is
    that model's. Said plainly, with what the scheme would count (when its values form one)."""
    given = {key: data[key] for key in SHARING_SCHEME if key in data}
    if not given:
        return []
    keys = ", ".join(f"{key} = {excerpt(value)}" for key, value in given.items())
    base = f"{fmt_params(_params(cfg))} parameters, {fmt_flops(_flops(cfg, seq_len))} forward per {seq_len} tokens"
    try:
        schemed = coerce(dict(given), cfg, strict=True).config
    except (ValueError, TypeError) as exc:
        effect = f"as written they form no model here: {str(exc)[:200]}"
    else:
        if schemed == cfg:
            effect = "the values are ALBERT's own scheme: nothing changes"
        else:
            effect = (f"with them the explorer counts {fmt_params(_params(schemed))} parameters and "
                      f"{fmt_flops(_flops(schemed, seq_len))} forward per {seq_len} tokens (the sidebar's sharing "
                      "schemes; the CLI's --block-order, --unique-ends, --repeat, --lora-rank, --lora-targets)")
    return [Finding(
        "scheme-keys-ignored",
        "warning",
        f"{keys}: no transformers class reads these keys (sharing schemes designed since ALBERT), so the model it "
        "builds from this file has none of them; every number of this diagnosis is that model's",
        "loading",
        base,
        "remove the keys, or count the scheme with the explorer (transformers cannot build it)",
        effect,
        ", ".join(given),
    )]


def _invalid(exc: ValueError, seq_len: int | None, heads: Finding | None = None) -> Diagnosis:
    finding = Finding("invalid", "error", f"the config describes no model: {exc}", "loading", "-",
                      "correct the field named above", "transformers refuses it the same way", "config.json")
    return Diagnosis(None, seq_len or 0, tuple(f for f in (heads, finding) if f))


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
    hf_family(data)  # ValueError: not a config of a family read here
    explicit = seq_len is not None
    if explicit:
        check_whole_number("seq_len", seq_len)
    try:
        fields = read_fields(data)  # every key's type and range checked before any is used
    except ValueError as exc:
        return _invalid(exc, seq_len)
    heads = _heads_finding(fields)
    if heads is not None:  # diagnose the rest with the fixed head count
        fields = fields.replace(num_attention_heads=fit_heads(fields["hidden_size"], fields["num_attention_heads"]))
    try:
        cfg = config_from_fields(fields)
    except ValueError as exc:
        return _invalid(exc, seq_len, heads)
    used = seq_len if explicit else min(128, cfg.max_position_embeddings)
    counted = min(used, cfg.max_position_embeddings)  # the FLOPs of a sequence that fits
    findings = [heads] if heads else []
    findings += _dropout_findings(data, cfg, counted)
    findings += _sharing_findings(data, cfg, counted)
    findings += _embedding_findings(data, cfg, counted)
    findings += _sanity_findings(data, cfg, used, explicit)
    findings += _cost_findings(data, cfg, counted)
    findings += _encoder_findings(data, cfg, counted)
    findings += _scheme_findings(data, cfg, counted)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return Diagnosis(cfg, used, tuple(sorted(findings, key=lambda f: order[f.severity])))
