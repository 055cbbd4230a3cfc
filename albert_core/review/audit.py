"""What the counters people run say about a config, beside the exact figures, every difference explained.

Each tool runs on transformers' model of the config (the model these tools are run on in practice): the class
`hf_class_name` names for its family and head (`AlbertModel`, `BertForPreTraining`, `ModernBertForMaskedLM`,
`EuroBertModel`, `ElectraForPreTraining`, ...) built from ``config_to_hf(cfg)``. The paper's partial sharing modes
(``attention``, ``ffn``) have no transformers config; they are built as transformers' ALBERT builds whole-layer
sharing: one module, called by every layer of its group (`build_hf_model`). An encoder after BERT with ALBERT's
ideas applied (an E or a sharing its class has no setting for) has no transformers model: its rows say so
(`no_transformers_model`). Models are built on the meta device (shapes only, nothing allocated), except for
ptflops, which counts a second time on meta (its patched ``torch.mm`` sees the meta kernels of ``F.linear``) and
misses SDPA's matmuls differently on the CPU: it runs on the CPU on a small twin of the config (`small_twin`, same
family, head, sharing, G, K, L, activation, tying and architecture axes), and its row says so. DeBERTa-v2 cannot
run on meta (its relative positions call ``.item()``): every tool that runs its forward does so on the small twin
on the CPU (`runs_on_cpu`), and its SDPA rows run the eager model (the class has no SDPA attention, `has_sdpa`).

The rules are written from the config's architecture axes (`Terms`): a gated FFN (ModernBERT's fused Wi of 2I,
EuroBERT's and NomicBERT's gate, up and down), rotary positions, ModernBERT's local attention (transformers scores
every pair and masks the window: `dense_masked_excess`), LayerNorm with or without a bias, EuroBERT's RMSNorm (a
module of its own no tool has a rule for), pre-norm with a final norm and an identity first norm, biases off,
grouped-query attention, DeBERTa's relative attention, RoBERTa's offset positions, ELECTRA's projection and
discriminator, tied and untied decoders that hold their bias or not. docs/audit.md lists which tool misses or
adds what for each.

Every difference between a tool's figure and the exact one is a sum of causes, each computed from the config
and the workload by the arithmetic of that tool's counting rule (`explain`), never from the tool's output;
`AuditRow.unexplained` is what is left (the tests require 0 on a grid of configs). The exact figures are
`count_params` (parameters) and `count_flops` (forward matmul FLOPs; a training step is 3x the forward).

Per component (`parts`: embeddings, projection, each layer, heads; for the families after BERT also DeBERTa's
relative table and its norm, a pre-norm encoder's final norm, an MLM head's transform and decoder where two modules
hold them, ELECTRA's discriminator), the tools that report per module
(`PER_MODULE`: FlopCounterMode's ``get_flop_counts()``, fvcore's ``by_module()``, torchinfo's per-layer rows,
thop's ``ret_layer_info`` tree, and the per-module counts ptflops and calflops hold on the modules while they
print them) give `ComponentRow`s in `AuditRow.components`, each difference split into causes by `explain_part`
from the tool's counting rule per module (`_module_rule`).

Tools are optional (``pip install '.[audit]'``); one that is not installed gives a row with status
"not installed" and no figure. Counting the causes imports no torch; running the tools does.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import io
import logging
import threading
import warnings
from collections.abc import Callable
from dataclasses import astuple, dataclass, field
from typing import Any

from albert_core.checks import check_whole_number
from albert_core.configuration.config import SHARING_SCHEME, ModelConfig, family_of
from albert_core.configuration.family import Modules
from albert_core.configuration.hf_config import config_to_hf, hf_class_mismatch, hf_class_name
from albert_core.configuration.presets import config_name
from albert_core.configuration.workload import check_seq_len
from albert_core.counting.flops import count_flops, dense_masked_excess, local_attention_pairs
from albert_core.counting.memory import unused_params
from albert_core.counting.params import COMPONENT_INFO, count_params, order_head_name

ATTENTIONS = ("sdpa", "eager")


@dataclass(frozen=True)
class Tool:
    """One counter: ``key`` (stable id), what it is called, the module it is imported from and the
    distribution that installs it, what it reports and in which unit."""

    key: str
    name: str
    module: str
    dist: str | None  # None: part of torch or of this project
    quantity: str  # "parameters", "forward" or "training"
    unit: str  # "params", "FLOPs" or "MACs" (what the tool's number counts)
    attention: str | None = None  # "sdpa" / "eager" (forward counters); None: attention does not matter
    device: str = "meta"  # "meta": full size, nothing allocated; "cpu-small": CPU, small twin

    @property
    def label(self) -> str:
        return self.name if self.attention is None else f"{self.name} ({self.attention} attention)"


def _forward_tools(key: str, name: str, module: str, dist: str | None, unit: str, device: str = "meta"):
    return tuple(Tool(f"{key}-{a}", name, module, dist, "forward", unit, a, device) for a in ATTENTIONS)


TOOLS: tuple[Tool, ...] = (
    Tool("parameters", "sum(p.numel() for p in model.parameters())", "torch", None, "parameters", "params"),
    Tool(
        "state_dict",
        "sum(t.numel() for t in model.state_dict().values())",
        "torch",
        None,
        "parameters",
        "params",
    ),
    Tool(
        "per_module",
        "sum over model.children() of each one's parameters()",
        "torch",
        None,
        "parameters",
        "params",
    ),
    Tool("torchinfo", "torchinfo summary: Total params", "torchinfo", "torchinfo", "parameters", "params"),
    *_forward_tools("flop_counter", "torch FlopCounterMode", "torch", None, "FLOPs"),
    *_forward_tools("torchinfo_macs", "torchinfo summary: Total mult-adds", "torchinfo", "torchinfo", "MACs"),
    *_forward_tools("fvcore", "fvcore FlopCountAnalysis", "fvcore", "fvcore", "MACs"),
    *_forward_tools("thop", "thop profile", "thop", "ultralytics-thop", "MACs"),
    *_forward_tools(
        "ptflops", "ptflops get_model_complexity_info", "ptflops", "ptflops", "MACs", "cpu-small"
    ),
    *_forward_tools("calflops", "calflops calculate_flops", "calflops", "calflops", "FLOPs"),
    Tool("6n_unique", "6N x tokens, N = unique parameters", "albert_core", None, "training", "FLOPs"),
    Tool("6n_executed", "6N x tokens, N = executed parameters", "albert_core", None, "training", "FLOPs"),
)
TOOL_KEYS = tuple(t.key for t in TOOLS)


# ----------------------------------------------------------------------------- the config's terms
@dataclass(frozen=True)
class Terms:
    """The counts the tools' rules are made of, for ``config`` on ``batch`` x ``seq_len`` tokens (every
    position through the MLM head, as transformers runs it). Written from the config's architecture axes (FFN
    kind, norm kind and placement, biases, key/value heads, local attention, position scheme, head), so one set
    of rules covers every family."""

    config: ModelConfig
    batch: int
    seq_len: int
    forward: int  # exact forward matmul FLOPs (local layers at their window)
    scores: int  # of which the attention matmuls QK^T and A.V (no parameters)
    params: int  # unique parameters
    executed_params: int  # with one copy per executed layer
    per_token_weights: int  # matmul weights every token runs through (the tied decoder as the word table)
    per_sequence_weights: int  # matmul weights run on one token per sequence (pooler, SOP/NSP)
    bias_norm: int  # biases and norm parameters executed per forward (shared ones once per use)
    lookup_tables: int  # embedding tables only looked up (the word table unless it is the tied decoder)
    bias_adds: int  # bias additions of every linear (outputs x rows)
    norm_elements: int  # elements through every nn.LayerNorm (with or without its bias; EuroBERT's RMSNorm: none)
    softmax_elements: int  # attention probabilities (every pair: the local layers' masked ones too)
    act_elements: int  # elements through the FFN activation (a GLU's gate) and the heads' activations
    reused_slots: int  # layers that call a partially shared block held by another layer (L - G, else 0)
    attention_block: int  # parameters of one attention block
    ffn_block: int  # parameters of one feed-forward block
    tied_decoder: int  # the MLM decoder's weight when it is the word table (V*E), else 0
    unused: int  # the untied MLM head's unused predictions.bias
    dense_excess: int = 0  # FLOPs of the local layers' pairs outside the window, scored and masked (ModernBERT)
    lookup_macs: int = 0  # torchinfo's multiply-adds of the embedding lookups (batch x table, or 1 x table)
    # DeBERTa's relative attention: the 2k-row table through each layer's Q and K projections, and the c2p / p2c
    # scores against it (count_flops' "encoder.attention.relative" is their sum); the table's parameters
    relative_projection: int = 0
    relative_scores: int = 0
    relative_table: int = 0

    @property
    def tokens(self) -> int:
        return self.batch * self.seq_len


def terms(cfg: ModelConfig, batch: int = 1, seq_len: int = 128) -> Terms:
    """The `Terms` of ``cfg`` (pure arithmetic on the config; ValueError for a bad workload)."""
    fb = count_flops(cfg, batch, seq_len)
    pb = count_params(cfg)
    flops = fb.by_name()
    B, S, N = batch, seq_len, batch * seq_len
    V, E, H, I = cfg.vocab_size, cfg.embedding_size, cfg.hidden_size, cfg.intermediate_size  # noqa: E741
    P, T, X = cfg.max_position_embeddings, cfg.type_vocab_size, cfg.executed_layers
    KV, F, n = cfg.kv_size, cfg.ffn_width, cfg.norm_size  # key/value width, FFN up width, parameters per normed unit
    att_b, mlp_b = int(cfg.attention_bias), int(cfg.mlp_bias)
    mlm, tied = cfg.has_mlm_head, cfg.has_mlm_head and cfg.tie_word_embeddings
    transform = mlm and cfg.head_transform
    proj, disc = cfg.is_factorized, cfg.has_discriminator
    # matmul weights, read off count_flops' components: every per-token matmul is 2 x tokens x its weight
    scores = flops["encoder.attention.scores"]
    per_seq_flops = flops.get("pooler", 0) + flops.get(order_head_name(cfg.family), 0)
    rows = 2 * cfg.position_buckets  # DeBERTa's relative table (0 rows elsewhere)
    relative, relative_projection = flops.get("encoder.attention.relative", 0), X * 2 * 2 * rows * H * H
    per_token, rest = divmod(fb.forward - scores - relative - per_seq_flops, 2 * N)
    assert rest == 0, "every matmul with weights runs once per token"
    first_norm = 0 if cfg.first_layer_norm else 1  # the first block's attention norm is the identity
    layer_norms = 2 * X - first_norm + (cfg.norm_placement == "pre")  # in the layers, and the final norm
    emb_norm = cfg.embedding_norm * (H if cfg.norm_after_projection else E)
    norm_params = n * (emb_norm + layer_norms * H + transform * E) + (rows > 0) * n * H  # + the table's norm
    biases = (
        proj * cfg.projection_bias * H
        + X * (att_b * (2 * H + 2 * KV) + mlp_b * (F + H))
        + cfg.has_pooler * H
        + transform * cfg.head_bias * E
        + mlm * cfg.decoder_bias * V
        + cfg.has_order_head * 2
        + disc * (H + 1)
    )
    bias_adds = (
        proj * cfg.projection_bias * N * H
        + X * N * (att_b * (2 * H + 2 * KV) + mlp_b * (F + H))
        + cfg.has_pooler * B * H
        + transform * cfg.head_bias * N * E
        + mlm * cfg.decoder_bias * N * V
        + cfg.has_order_head * B * 2
        + disc * N * (H + 1)
        + X * att_b * 2 * rows * H  # the relative table through Q and K
    )
    normed = N * (emb_norm + layer_norms * H + transform * E) + rows * H  # DeBERTa normalises its table once
    rms = cfg.norm == "rmsnorm"
    position_rows = P if cfg.has_position_table else 0
    # torchinfo: a lookup's multiply-adds are its table x the batch of its output; BERT's and ELECTRA's position
    # ids are a (1, S) buffer, RoBERTa's are made per sequence from the input ids
    per_sequence_positions = cfg.position_offset > 0  # RoBERTa's positions count the non-padding tokens
    lookup_macs = B * (V + T) * E + position_rows * E * (B if per_sequence_positions else 1)
    partial = cfg.sharing in ("attention", "ffn")
    out = Terms(
        config=cfg,
        batch=B,
        seq_len=S,
        forward=fb.forward,
        scores=scores,
        params=pb.total,
        executed_params=pb.unshared_total,
        per_token_weights=per_token,
        per_sequence_weights=per_seq_flops // (2 * B),
        bias_norm=biases + norm_params,
        lookup_tables=(position_rows + T) * E + (0 if tied else V * E),
        bias_adds=bias_adds,
        norm_elements=0 if rms else normed,
        softmax_elements=B * cfg.num_heads * S * S * X,
        act_elements=N * X * I + (transform and cfg.head_act == "hidden") * N * E + disc * N * H,
        reused_slots=(cfg.num_layers - cfg.num_hidden_groups) if partial else 0,
        attention_block=4 * H * H + 6 * H,
        ffn_block=2 * H * I + I + 3 * H,
        tied_decoder=V * E if tied else 0,
        unused=unused_params(cfg),  # BERT's lineage only: ELECTRA's, ModernBERT's, EuroBERT's decoders use their bias
        dense_excess=dense_masked_excess(cfg, B, S),
        lookup_macs=lookup_macs,
        relative_projection=relative_projection,
        relative_scores=relative - relative_projection,
        relative_table=rows * H,
    )
    # every executed parameter is a matmul weight, a bias or norm parameter, a looked-up or relative table, or unused
    accounted = (out.per_token_weights + out.per_sequence_weights + out.bias_norm + out.lookup_tables + out.unused
                 + out.relative_table)
    assert accounted == out.executed_params, (accounted, out.executed_params)
    return out


# ----------------------------------------------------------------------------- causes
@dataclass(frozen=True)
class Cause:
    """One reason a tool's figure differs from the exact one, and by how much (signed, in exact units:
    parameters or FLOPs)."""

    what: str
    amount: int


MACS = "reports multiply-accumulates (MACs), half the FLOPs"
FVCORE_MACS = MACS + " (fvcore's 'flop' is one multiply-add)"
SDPA_MISSED = "attention matmuls QKᵀ and A·V inside scaled_dot_product_attention not seen"
FVCORE_SDPA = "aten::scaled_dot_product_attention unsupported: skipped"
NORM_5 = "LayerNorm counted as 5 per element"
THOP_NORM = "LayerNorm counted as 4 per element (2, doubled for the affine weights)"
PTFLOPS_NORM = "LayerNorm counted as 1 per element"
BIAS_ADDS = "bias additions counted (one per output element)"
SOFTMAX = "softmax counted as 1 per element (F.softmax)"
CALFLOPS_RELU = "ReLU counted as 1 per element (F.relu)"
SILU = "SiLU counted as 1 per element (nn.SiLU runs F.silu, which the tool patches)"
CALFLOPS_BMM = "attention matmuls run as torch.bmm (DeBERTa), which calflops does not patch: QKᵀ, A·V, c2p, p2c"
DENSE_MASKED = (
    "local attention scored on every pair and masked (transformers' ModernBERT): the pairs outside the window counted"
)


def explain(tool: Tool | str, t: Terms) -> tuple[Cause, ...]:
    """Every cause of ``tool``'s difference from the exact figure on the config and workload of ``t``
    (amounts computed from the config, non-zero ones only)."""
    tool = tool if isinstance(tool, Tool) else tool_by_key(tool)
    cfg, B, N = t.config, t.batch, t.tokens
    H = cfg.hidden_size
    sdpa = tool.attention == "sdpa" and has_sdpa(cfg)
    # transformers calls ReLU as nn.ReLU (ptflops counts its module and its F.relu: twice; calflops once);
    # "gelu" through a reference to F.gelu taken before the tools patch it, "gelu_new" as tensor
    # arithmetic: neither is counted.
    relu = t.act_elements if cfg.hidden_act == "relu" else 0
    # SiLU (EuroBERT's and NomicBERT's gate) is nn.SiLU, whose forward calls F.silu: ptflops (no module hook for
    # it) and calflops count it through their F.silu patch, once
    silu = t.act_elements if cfg.hidden_act == "silu" else 0
    # ModernBERT's local layers: transformers' eager and SDPA attention score every pair and mask those outside
    # the window; a tool that sees those matmuls counts the masked pairs too (the exact figure counts the window)
    dense = (DENSE_MASKED, t.dense_excess // (2 if tool.unit == "MACs" else 1))
    positions = (
        "RoBERTa's position table once per sequence" if cfg.position_offset > 0
        else "the position table once per batch" if cfg.has_position_table
        else "each table once per sequence"
    )
    norms = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
    K = cfg.inner_group_num
    # torchinfo places a layer's blocks by call order: in a layer that calls shared blocks it does not hold,
    # its own K blocks are counted 2K-1 times over (attention shared) or K-1 (FFN shared, called last)
    recounted = t.reused_slots * (
        (2 * K - 1) * t.ffn_block if cfg.sharing == "attention" else (K - 1) * t.attention_block
    )
    macs = (MACS, -t.forward // 2) if tool.unit == "MACs" else None
    rules: dict[str, list[tuple[str, int] | None]] = {
        "parameters": [],
        "state_dict": [
            (
                "tied MLM decoder weight and bias listed under both names",
                t.tied_decoder + (cfg.vocab_size if t.tied_decoder and cfg.separate_decoder_bias else 0),
            ),
        ],
        "per_module": [
            ("tied MLM decoder weight counted in the embeddings and again in the MLM head", t.tied_decoder)
        ],
        "torchinfo": [
            ("tied MLM decoder weight counted in the embeddings and again in the MLM head", t.tied_decoder),
            (
                "module tree rebuilt from call order: a layer calling shared blocks it does not hold has its "
                "own blocks counted again",
                recounted,
            ),
        ],
        "flop_counter": [dense],
        "torchinfo_macs": [
            macs,
            ("attention matmuls have no parameters: not counted", -t.scores // 2),
            (
                "each weight counted once per sequence (batch size x parameters), not once per token",
                -(N - B) * t.per_token_weights,
            ),
            (f"biases and {norms} parameters counted as multiply-adds", B * t.bias_norm),
            (f"embedding lookups counted as multiply-adds ({positions})", t.lookup_macs),
            (
                "relative attention (DeBERTa): the c2p and p2c matmuls not counted, the relative table's "
                "projections through Q and K counted once per layer (batch 1)",
                -(t.relative_projection + t.relative_scores) // 2
                + (t.relative_table > 0) * cfg.executed_layers * 2 * (H * H + cfg.attention_bias * H),
            ),
            (
                "the relative table's LayerNorm counted with the table's rows as its batch",
                (t.relative_table > 0) * (2 * cfg.position_buckets - B) * cfg.norm_size * H,
            ),
        ],
        "fvcore": [
            (FVCORE_MACS, -t.forward // 2),
            (FVCORE_SDPA, -t.scores // 2) if sdpa else dense,
            (NORM_5, 5 * t.norm_elements),
        ],
        "thop": [
            macs,
            dense,
            (THOP_NORM, 4 * t.norm_elements),
        ],
        "ptflops": [
            macs,
            (SDPA_MISSED, -t.scores // 2) if sdpa else dense,
            (BIAS_ADDS, t.bias_adds),
            (PTFLOPS_NORM, t.norm_elements),
            (SOFTMAX, t.softmax_elements) if not sdpa else None,
            ("ReLU counted twice, 1 per element each (nn.ReLU's hook and the F.relu patch)", 2 * relu),
            (SILU, silu),
        ],
        "calflops": [
            (SDPA_MISSED, -t.scores) if sdpa else dense,
            (NORM_5, 5 * t.norm_elements),
            (SOFTMAX, t.softmax_elements) if not sdpa else None,
            (CALFLOPS_RELU, relu),
            (SILU, silu),
            (
                CALFLOPS_BMM,
                -(t.relative_table > 0) * (t.scores + t.relative_scores),
            ),
        ],
        "6n": [
            ("attention matmuls QKᵀ and A·V have no parameters: not in 6N", -3 * t.scores),
            ("embedding lookups counted as matmuls (6 per table entry per token)", 6 * N * t.lookup_tables),
            (f"biases and {norms} parameters counted as matmul weights", 6 * N * t.bias_norm),
            (
                "pooler and SOP/NSP head run on one token per sequence, counted for every token",
                6 * (N - B) * t.per_sequence_weights,
            ),
            ("unused parameter counted (predictions.bias of an untied MLM head)", 6 * N * t.unused),
            (
                "relative attention (DeBERTa): the table's projections run once per layer, not per token, and the "
                "c2p and p2c matmuls have no parameters: not in 6N",
                -3 * (t.relative_projection + t.relative_scores),
            ),
            ("relative position table counted as a matmul weight (6 per entry per token)", 6 * N * t.relative_table),
        ],
    }
    family = _family(tool)
    if family.startswith("6n"):
        rules_for = list(rules["6n"])
        if family == "6n_unique":
            rules_for.append(
                (
                    "shared blocks run once per executed layer, N counts them once",
                    -6 * N * (t.executed_params - t.params),
                )
            )
    else:
        rules_for = rules[family]
    return _causes(rules_for)


def _family(tool: Tool) -> str:
    """The tool without its attention variant: "fvcore" for "fvcore-sdpa"."""
    return tool.key.rsplit("-", 1)[0] if tool.attention else tool.key


def _causes(rules) -> tuple[Cause, ...]:
    return tuple(Cause(what, int(n)) for what, n in filter(None, rules) if n)


def exact_figure(tool: Tool, t: Terms) -> int:
    """The exact figure ``tool`` is compared with: parameters, forward FLOPs or training FLOPs."""
    return {"parameters": t.params, "forward": t.forward, "training": 3 * t.forward}[tool.quantity]


def tool_by_key(key: str) -> Tool:
    for tool in TOOLS:
        if tool.key == key:
            return tool
    raise ValueError(f"tool must be one of {', '.join(TOOL_KEYS)}; got {key!r:.40}")


# ----------------------------------------------------------------------------- rows
class _Compared:
    """A figure beside the exact one, and the causes of the difference (``figure``, ``exact``, ``causes``)."""

    figure: int | None
    exact: int
    causes: tuple[Cause, ...]

    @property
    def ran(self) -> bool:
        return self.figure is not None

    @property
    def difference(self) -> int | None:
        return None if self.figure is None else self.figure - self.exact

    @property
    def explained(self) -> int:
        return sum(c.amount for c in self.causes)

    @property
    def unexplained(self) -> int | None:
        return None if self.figure is None else self.figure - self.exact - self.explained

    @property
    def ratio(self) -> float | None:
        return None if self.figure is None or not self.exact else self.figure / self.exact

    def _compared(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "exact": self.exact,
            "ratio": self.ratio,
            "difference": self.difference,
            "explained": self.explained,
            "unexplained": self.unexplained,
            "causes": [{"what": c.what, "amount": c.amount} for c in self.causes],
        }


@dataclass(frozen=True)
class ComponentRow(_Compared):
    """One component's figure as a per-module tool reports it (``module``: the module it reads; None when
    the component runs a module an earlier layer holds, so the tool has no figure under its own name)."""

    component: str  # `Part.key`
    label: str
    module: str | None
    exact: int
    figure: int | None
    causes: tuple[Cause, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "label": self.label, "module": self.module, **self._compared()}


@dataclass(frozen=True)
class AuditRow(_Compared):
    """One tool's figure beside the exact one. ``figure`` is None when the tool did not run (``status``
    says why); ``config`` is the size it ran at (the small twin for the CPU tools). ``components``: the
    same tool's figure per component, for the tools that report per module (`PER_MODULE`)."""

    tool: Tool
    config: ModelConfig
    run_on: str
    exact: int
    figure: int | None
    causes: tuple[Cause, ...]
    status: str  # "ran", "computed", "not installed", or "failed: ..."
    version: str | None = None
    components: tuple[ComponentRow, ...] = ()

    @property
    def unexplained_components(self) -> int:
        return sum(1 for c in self.components if c.unexplained)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool.key,
            "label": self.tool.label,
            "quantity": self.tool.quantity,
            "unit": self.tool.unit,
            "attention": self.tool.attention,
            "run_on": self.run_on,
            "config": config_name(self.config),
            "status": self.status,
            "version": self.version,
            **self._compared(),
            "components": [c.to_dict() for c in self.components],
        }


@dataclass(frozen=True)
class Audit:
    config: ModelConfig
    batch: int
    seq_len: int
    rows: tuple[AuditRow, ...] = field(default_factory=tuple)
    # a sharing scheme since ALBERT: no transformers model to run the tools on, the audit's own arithmetic instead
    scheme: tuple[SchemeCheck, ...] = ()

    @property
    def unexplained(self) -> int:
        """Rows whose difference is not fully explained (0 is the goal)."""
        return sum(1 for r in self.rows if r.unexplained)

    @property
    def unexplained_components(self) -> int:
        """Per-component rows whose difference is not fully explained (0 is the goal)."""
        return sum(r.unexplained_components for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": config_name(self.config),
            "batch": self.batch,
            "seq_len": self.seq_len,
            "unexplained_rows": self.unexplained,
            "unexplained_component_rows": self.unexplained_components,
            "rows": [r.to_dict() for r in self.rows],
            "scheme": [c.to_dict() for c in self.scheme],
            "scheme_mismatches": sum(not c.matches for c in self.scheme),
        }

    def to_frame(self):
        """A pandas DataFrame, one row per tool (causes joined into one text column)."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    **{k: v for k, v in r.to_dict().items() if k not in ("causes", "components")},
                    "causes": "; ".join(f"{c.what}: {c.amount:+,}" for c in r.causes),
                }
                for r in self.rows
            ]
        )


# ----------------------------------------------------------------------------- per component
# The tools that report per module, and what they report per component: parameters held (torchinfo's
# per-layer rows) or forward FLOPs / MACs (FlopCounterMode's get_flop_counts(), fvcore's by_module(), thop's
# per-layer tree, the per-module counts ptflops and calflops print; `_measure` reads them).
PER_MODULE = ("flop_counter", "fvcore", "torchinfo", "thop", "ptflops", "calflops")


@dataclass(frozen=True)
class Part:
    """One component of the model as per-module tools see it: the embeddings (lookups and their LayerNorm),
    ALBERT's E->H projection, each of the L layers (with its K inner layers), the pooler, the MLM head and
    the SOP/NSP head. ``params``: the exact parameters it holds (a shared block held by the first layer that
    runs it); ``forward``: the exact forward matmul FLOPs it runs; ``module``: the transformers module the
    tools report it under, None for a layer that calls a layer-group module an earlier layer holds. The families
    after BERT (`_family_parts`) add DeBERTa's relative table and its norm, a pre-norm encoder's final norm, ELECTRA's
    discriminator, and split an MLM head held by two modules (transform, decoder) in two."""

    key: str
    label: str
    module: str | None
    params: int
    forward: int


def _modules(cfg: ModelConfig) -> Modules:
    """transformers' module names of ``cfg``'s family (its record's)."""
    return family_of(cfg.family).transformers.modules


def _prefix(cfg: ModelConfig) -> str:
    """The base model's path in ``build_hf_model(cfg)`` ("" for the bare model), with its dot."""
    return "" if cfg.head == "model" else _modules(cfg).base + "."


def _layer_modules(cfg: ModelConfig) -> list[tuple[str, str]]:
    """(module path, first layer calling it) of each layer of ``build_hf_model(cfg)``: one module per layer, but
    where the class holds layer groups (ALBERT's, `Modules.block`), one per group, called by each of its layers."""
    layer = _prefix(cfg) + _modules(cfg).layer
    if _modules(cfg).block is None:  # built by transformers' own class: unshared, one module per layer
        return [(layer.format(i=i), str(i)) for i in range(cfg.num_layers)]
    groups = cfg.num_hidden_groups if cfg.sharing == "all" else cfg.num_layers  # the built model's groups
    first: dict[int, int] = {}
    out = []
    for i in range(cfg.num_layers):
        g = cfg.group_of_layer(i, groups)
        out.append((layer.format(i=g), str(first.setdefault(g, i))))
    return out


def _owner(cfg: ModelConfig, i: int) -> int:
    """The first layer of layer ``i``'s group: the one whose module holds the group's shared blocks."""
    return next(j for j in range(cfg.num_layers) if cfg.group_of_layer(j) == cfg.group_of_layer(i))


def parts(cfg: ModelConfig, batch: int = 1, seq_len: int = 128) -> tuple[Part, ...]:
    """The `Part`s of ``cfg``, their exact figures summed from `count_params` / `count_flops` components
    (the parts' parameters add up to the total, their FLOPs to the forward)."""
    bp, fb = count_params(cfg).by_name(), count_flops(cfg, batch, seq_len).by_name()
    if not family_of(cfg.family).paper:
        return _family_parts(cfg, bp, fb, batch, seq_len)

    def total(counts: dict[str, int], *names: str) -> int:
        return sum(n for name, n in counts.items() if name.startswith(names))

    m = _modules(cfg)
    p = _prefix(cfg)
    mlm, order = m.mlm_modules[0], m.order[0] if m.order else None
    proj = "encoder.embedding_hidden_mapping_in"
    K, L = cfg.inner_group_num, cfg.num_layers
    att = total(bp, "encoder.attention.") // cfg.attention_copies
    ffn = total(bp, "encoder.ffn.") // cfg.ffn_copies
    layer_flops = total(fb, "encoder.attention.", "encoder.ffn.") // L

    def held(i: int, shared: bool, block: int) -> int:
        return K * block if not shared or _owner(cfg, i) == i else 0

    out = [Part("embeddings", "Embeddings", p + m.embeddings, total(bp, "embeddings."), 0)]
    if cfg.is_factorized:
        out.append(Part("projection", "Embedding projection E→H", p + m.projection, bp[proj], fb[proj]))
    for i, (module, first) in enumerate(_layer_modules(cfg)):
        params = held(i, cfg.attention_shared, att) + held(i, cfg.ffn_shared, ffn)
        out.append(Part(f"layer {i}", f"Layer {i}", module if first == str(i) else None, params, layer_flops))
    if cfg.has_pooler:
        out.append(Part("pooler", "Pooler", f"{p}pooler", bp["pooler"], fb["pooler"]))
    if cfg.has_mlm_head:
        out.append(Part("mlm_head", "MLM head", mlm, total(bp, "predictions"), total(fb, "predictions")))
    if cfg.has_order_head:
        name = order_head_name(cfg.family)
        out.append(Part("order_head", COMPONENT_INFO[name][0], order, bp[name], fb[name]))
    return tuple(out)


def _layer_scores(cfg: ModelConfig, batch: int, seq_len: int, i: int) -> tuple[int, int]:
    """Layer ``i``'s exact attention-matmul FLOPs (QKᵀ and A·V over the pairs it attends to) and what an
    implementation scoring every pair and masking the window adds (0 on a global layer)."""
    B, S, H = batch, seq_len, cfg.hidden_size
    pairs = S * S if cfg.is_global_layer(i) else local_attention_pairs(S, cfg.local_window)
    return 4 * B * pairs * H, 4 * B * (S * S - pairs) * H


def _family_parts(cfg: ModelConfig, bp: dict[str, int], fb: dict[str, int], batch: int, seq_len: int
                  ) -> tuple[Part, ...]:
    """The `Part`s of an encoder after BERT, as transformers' class of its family holds its modules (unshared:
    the audit runs only what that class builds; ValueError for an ALBERTized one, which it does not)."""
    if problem := no_transformers_model(cfg):
        raise ValueError(f"no per-component rows for a config transformers cannot build: {problem}")
    p, L, m = _prefix(cfg), cfg.num_layers, _modules(cfg)
    proj = "encoder.embedding_hidden_mapping_in"
    nested = cfg.norm_after_projection  # DeBERTa's embed_proj sits inside its embeddings module
    emb_params = sum(n for name, n in bp.items() if name.startswith("embeddings.") and "relative" not in name)
    out = [Part("embeddings", "Embeddings", p + m.embeddings, emb_params + nested * bp.get(proj, 0),
                nested * fb.get(proj, 0))]
    if cfg.is_factorized and not nested:  # ELECTRA's embeddings_project
        out.append(Part("projection", "Embedding projection E→H", p + m.projection, bp[proj], fb[proj]))
    if cfg.position == "relative":  # DeBERTa: the table is read as a weight, normed once, projected by every layer
        out += [
            Part("relative_table", COMPONENT_INFO["embeddings.relative_embeddings"][0], p + m.relative[0],
                 bp["embeddings.relative_embeddings"], 0),
            Part("relative_norm", COMPONENT_INFO["embeddings.relative_LayerNorm"][0], p + m.relative[1],
                 bp["embeddings.relative_LayerNorm"], 0),
        ]
    layer_params = {k: v for k, v in bp.items() if k.startswith(("encoder.attention.", "encoder.ffn."))}
    missing = 0 if cfg.first_layer_norm else cfg.norm_size * cfg.hidden_size  # layer 0's attention norm: identity
    per_layer = (sum(layer_params.values()) + missing) // L
    matmuls = sum(f for k, f in fb.items() if k.startswith(("encoder.attention.", "encoder.ffn."))
                  and k != "encoder.attention.scores") // L
    for i, (module, _) in enumerate(_layer_modules(cfg)):
        params = per_layer - (missing if i == 0 else 0)
        out.append(Part(f"layer {i}", f"Layer {i}", module, params, matmuls + _layer_scores(cfg, batch, seq_len, i)[0]))
    if cfg.norm_placement == "pre":
        out.append(Part("final_norm", COMPONENT_INFO["encoder.final_norm"][0], p + m.final_norm,
                        bp["encoder.final_norm"], 0))
    if cfg.has_pooler:
        out.append(Part("pooler", "Pooler", f"{p}pooler", bp["pooler"], fb["pooler"]))
    if cfg.has_mlm_head:
        transform, decoder = m.mlm_modules
        head_params = {k: v for k, v in bp.items() if k.startswith("predictions")}
        head_flops = {k: v for k, v in fb.items() if k.startswith("predictions")}
        if decoder is None:
            out.append(Part("mlm_head", "MLM head", transform, sum(head_params.values()), sum(head_flops.values())))
        else:
            if transform is not None:
                out.append(Part("mlm_head", "MLM transform", transform,
                                head_params.get("predictions.dense", 0) + head_params.get("predictions.LayerNorm", 0),
                                head_flops.get("predictions.dense", 0)))
            out.append(Part("mlm_decoder", "MLM decoder", decoder,
                            head_params.get("predictions", 0) + head_params.get("predictions.decoder", 0),
                            head_flops["predictions.decoder"]))
    if cfg.has_discriminator:
        names = ("discriminator.dense", "discriminator.prediction")
        out.append(Part("discriminator", "Discriminator head", m.discriminator_module,
                        sum(bp[n] for n in names), sum(fb[n] for n in names)))
    return tuple(out)


@dataclass(frozen=True)
class _Work:
    """The work under one module as the per-module counters see it: the exact forward matmul FLOPs, of which
    ``scores`` are the attention matmuls QKᵀ and A·V, and the elements through LayerNorm, softmax and ReLU,
    and the bias additions of its linears."""

    forward: int
    scores: int = 0
    norm: int = 0
    bias: int = 0
    softmax: int = 0
    relu: int = 0
    silu: int = 0  # elements through nn.SiLU
    excess: int = 0  # local attention's masked pairs, scored by transformers' ModernBERT (not in ``forward``)

    def __add__(self, other: _Work) -> _Work:
        return _Work(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def times(self, k: int) -> _Work:
        return _Work(*(k * a for a in astuple(self)))


def _block_work(t: Terms) -> tuple[_Work, _Work]:
    """One inner layer's attention block (Q/K/V, scores, softmax, output, its LayerNorm) and FFN block (up and
    down projections, the LayerNorm after them; the activation is the layer's own module)."""
    cfg, B, S, N = t.config, t.batch, t.seq_len, t.tokens
    H, I = cfg.hidden_size, cfg.intermediate_size  # noqa: E741
    scores = 4 * B * S * S * H
    attention = _Work(8 * N * H * H + scores, scores, N * H, 4 * N * H, B * cfg.num_heads * S * S)
    return attention, _Work(4 * N * H * I, 0, N * H, N * (I + H))


def _part_work(t: Terms, part: Part) -> _Work:
    """The `_Work` under ``part``'s module (a layer's from `_block_work`, the others' exact forward from
    `parts`)."""
    cfg, B, N = t.config, t.batch, t.tokens
    if not family_of(cfg.family).paper:
        return _family_part_work(t, part)
    E, H, V = cfg.embedding_size, cfg.hidden_size, cfg.vocab_size
    relu = cfg.hidden_act == "relu"
    if part.key.startswith("layer"):
        attention, ffn = _block_work(t)
        return (attention + ffn + _Work(0, relu=relu * N * cfg.intermediate_size)).times(cfg.inner_group_num)
    norm, bias, act = {
        "embeddings": (N * E, 0, 0),
        "projection": (0, N * H, 0),
        "pooler": (0, B * H, 0),
        "mlm_head": (N * E, N * (E + V), relu * N * E),
        "order_head": (0, 2 * B, 0),
    }[part.key]
    return _Work(part.forward, norm=norm, bias=bias, relu=act)


def _family_part_work(t: Terms, part: Part) -> _Work:
    """`_part_work` for the families after BERT, from the config's axes: norms of either kind (the tools' rules
    know nn.LayerNorm only), biases where the config has them, a GLU's gate through the activation, the local
    layers' window, DeBERTa's relative attention."""
    cfg, B, S, N = t.config, t.batch, t.seq_len, t.tokens
    E, H, I, V = cfg.embedding_size, cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size  # noqa: E741
    layer_norm = cfg.norm == "layernorm"  # the tools count an nn.LayerNorm; EuroBERT's RMSNorm is a module of its own
    act = {"relu": "relu", "silu": "silu"}.get(cfg.hidden_act)
    rows = 2 * cfg.position_buckets
    key = part.key
    if key.startswith("layer"):
        i = int(key.split()[1])
        scores, excess = _layer_scores(cfg, B, S, i)
        norms = 2 - (i == 0 and not cfg.first_layer_norm)
        work = _Work(
            part.forward,
            scores + t.relative_scores // cfg.num_layers,  # DeBERTa's c2p and p2c: matmuls without weights too
            layer_norm * norms * N * H,
            N * (cfg.attention_bias * (2 * H + 2 * cfg.kv_size) + cfg.mlp_bias * (cfg.ffn_width + H))
            + cfg.attention_bias * 2 * rows * H,
            B * cfg.num_heads * S * S,
            excess=excess,
        )
        return work + _activation(act, N * I)
    transform = cfg.has_mlm_head and cfg.head_transform
    if key == "embeddings":
        return _Work(part.forward, norm=layer_norm * cfg.embedding_norm * N * (H if cfg.norm_after_projection else E))
    if key == "projection":
        return _Work(part.forward, bias=N * H)
    if key == "relative_norm":
        return _Work(0, norm=rows * H)
    if key == "final_norm":
        return _Work(0, norm=layer_norm * N * H)
    if key == "pooler":
        return _Work(part.forward, bias=B * H)
    head_act = act if cfg.head_act == "hidden" else None  # RoBERTa's, ELECTRA's heads call GELU themselves
    transform_work = _Work(0, norm=N * E * layer_norm, bias=cfg.head_bias * N * E) + _activation(head_act, N * E)
    decoder_work = _Work(0, bias=cfg.decoder_bias * N * V)
    if key == "mlm_head":
        both = transform_work + (decoder_work if _modules(cfg).mlm_modules[1] is None else _Work(0))
        return _Work(part.forward) + (both if transform else _Work(0))
    if key == "mlm_decoder":
        return _Work(part.forward) + decoder_work
    if key == "discriminator":
        return _Work(part.forward, bias=N * (H + 1)) + _activation(act, N * H)
    return _Work(part.forward)  # the relative table: read, never called


def _activation(act: str | None, elements: int) -> _Work:
    return _Work(0, relu=elements if act == "relu" else 0, silu=elements if act == "silu" else 0)


@dataclass(frozen=True)
class _ModuleRule:
    """How a per-module FLOP counter counts the work under a module. Each field is the cause's text (None:
    not counted that way), with the count per element where it has one."""

    macs: str | None = None  # matmuls reported as multiply-adds
    norm: tuple[str, int] | None = None  # LayerNorm, per element
    bias: str | None = None  # bias additions, one per output element
    softmax: str | None = None  # softmax, one per element, under the attention module
    relu: str | None = None  # ReLU, one per element, under the activation module
    scores: str | None = None  # why the attention matmuls are not under the layer's module
    silu: str | None = None  # SiLU, one per element, under the activation module
    # None: the tool follows the calls (a block called from a layer is that layer's); else why a shared
    # block is reported under the layer whose module holds it
    held_by: str | None = None


_HOOKED = "a hook on the shared module adds up every call where the module sits in the tree"


def _module_rule(tool: Tool, cfg: ModelConfig | None = None) -> _ModuleRule:
    """The counting rule per module of a FLOP counter in `PER_MODULE` (on ``tool``'s attention, for ``cfg``'s
    family: DeBERTa runs eager attention only, as torch.bmm)."""
    sdpa = tool.attention == "sdpa" and (cfg is None or has_sdpa(cfg))
    bmm = cfg is not None and cfg.position == "relative"
    return {
        "flop_counter": _ModuleRule(),
        "fvcore": _ModuleRule(
            FVCORE_MACS,
            (NORM_5, 5),
            scores=FVCORE_SDPA if sdpa else None,
            held_by="fvcore names an operator by the module that runs it, not by the layer calling it",
        ),
        "thop": _ModuleRule(
            MACS,
            (THOP_NORM, 4),
            scores="attention matmuls counted by thop's function counter: in its total, under no module",
            held_by=_HOOKED,
        ),
        "ptflops": _ModuleRule(
            MACS,
            (PTFLOPS_NORM, 1),
            BIAS_ADDS,
            relu="ReLU counted as 1 per element by nn.ReLU's hook (the F.relu patch's second count is in the "
            "total only)",
            scores=SDPA_MISSED
            if sdpa
            else f"attention matmuls counted by ptflops' torch.{'bmm' if bmm else 'matmul'} patch: in its total, "
            "under no module",
            held_by=_HOOKED,
        ),
        "calflops": _ModuleRule(
            norm=(NORM_5, 5),
            softmax=None if sdpa else SOFTMAX,
            relu=CALFLOPS_RELU,
            scores=SDPA_MISSED if sdpa else (CALFLOPS_BMM if bmm else None),
            silu=SILU,
            held_by=_HOOKED,
        ),
    }[_family(tool)]


def _work_causes(rule: _ModuleRule, work: _Work) -> list[tuple[str, int]]:
    """The causes of the difference between what ``rule``'s tool reports for ``work`` and its exact FLOPs."""
    half = 2 if rule.macs else 1
    return [
        (rule.macs, -work.forward // 2) if rule.macs else None,
        (rule.norm[0], rule.norm[1] * work.norm) if rule.norm else None,
        (rule.bias, work.bias) if rule.bias else None,
        (rule.softmax, work.softmax) if rule.softmax else None,
        (rule.relu, work.relu) if rule.relu else None,
        (rule.scores, -work.scores // half) if rule.scores else None,
        # the masked pairs are where the tool puts the attention matmuls: under the module, or nowhere in it
        (DENSE_MASKED, work.excess // half) if not rule.scores else None,
        (rule.silu, work.silu) if rule.silu else None,
    ]


def _counted(rule: _ModuleRule, work: _Work) -> int:
    """What ``rule``'s tool reports for ``work``."""
    return work.forward + sum(c.amount for c in _causes(_work_causes(rule, work)))


def explain_part(tool: Tool | str, t: Terms, part: Part) -> tuple[Cause, ...]:
    """Every cause of the difference between ``tool``'s figure for ``part`` and the part's exact figure
    (computed from the config by the tool's rule per module, as `explain` does for the totals)."""
    tool = tool if isinstance(tool, Tool) else tool_by_key(tool)
    family = _family(tool)
    if family not in PER_MODULE:
        return ()
    if family == "torchinfo":
        decoder = "mlm_decoder" if _modules(t.config).mlm_modules[1] else "mlm_head"
        tied = ("tied MLM decoder weight (the word table) counted in the MLM head", t.tied_decoder)
        never = ("the relative table is read as a weight, never called: torchinfo has no row for it", -part.params)
        return _causes([tied] if part.key == decoder else [never] if part.key == "relative_table" else [])
    rule, work = _module_rule(tool, t.config), _part_work(t, part)
    rules = _work_causes(rule, work)
    if part.key.startswith("layer"):
        cfg, i = t.config, int(part.key.split()[1])
        modules = _layer_modules(cfg)
        callers = [j for j, m in enumerate(modules) if m == modules[i]]
        rules += _reported_elsewhere(
            i, callers, _counted(rule, work), "the layer group", "one shared module, one name"
        )
        if rule.held_by and cfg.sharing in ("attention", "ffn"):
            attention, ffn = _block_work(t)
            block = attention if cfg.sharing == "attention" else ffn
            group = [j for j in range(cfg.num_layers) if _owner(cfg, j) == _owner(cfg, i)]
            rules += _reported_elsewhere(
                i,
                group,
                cfg.inner_group_num * _counted(rule, block),
                f"the shared {cfg.sharing} block",
                rule.held_by,
            )
    return _causes(rules)


def _reported_elsewhere(
    i: int, callers: list[int], amount: int, what: str, why: str
) -> list[tuple[str, int]]:
    """A module called by the layers ``callers`` is reported under the first caller's name only: there, the
    ``amount`` of every other call is added; the others lose their own."""
    if i != callers[0]:
        return [(f"{what} it runs is reported under layer {callers[0]} ({why})", -amount)]
    others = callers[1:]
    if not others:
        return []
    names = f"layer{'s' * (len(others) > 1)} {', '.join(map(str, others))}"
    return [(f"{what} as run by {names} is reported here ({why})", len(others) * amount)]


def part_figures(family: str, model, measured: Any) -> dict[str, int]:
    """Each module path's figure as the tool reports it, from what `_measure` kept of the tool's run."""
    if family == "flop_counter":  # names are the root's class name, then the module path
        root = type(model).__name__
        return {
            name.removeprefix(root).removeprefix("."): sum(ops.values())
            for name, ops in measured.items()
            if name.startswith(root)
        }
    if family == "torchinfo":  # one row per call; a module's first row is its own (later: "(recursive)")
        names = {id(m): name for name, m in model.named_modules()}
        out: dict[str, int] = {}
        for row in measured:
            if row.layer_id in names:
                out.setdefault(names[row.layer_id], row.num_params)
        return out
    return dict(measured)  # fvcore, thop, ptflops, calflops: already by module path


def component_rows(tool: Tool, t: Terms, model, measured: Any) -> tuple[ComponentRow, ...]:
    """``tool``'s figure for every part of ``t.config`` beside the exact one, causes computed."""
    figures = part_figures(_family(tool), model, measured)
    return tuple(
        ComponentRow(
            part.key,
            part.label,
            part.module,
            part.params if tool.quantity == "parameters" else part.forward,
            0 if part.module is None else int(figures.get(part.module, 0)),
            explain_part(tool, t, part),
        )
        for part in parts(t.config, t.batch, t.seq_len)
    )


# ----------------------------------------------------------------------------- sizes
SMALL_HEAD_DIM = 8
SMALL_MAX_HEADS = 4
SMALL_VOCAB = 512
SMALL_EMBEDDING = 16


def small_twin(cfg: ModelConfig, seq_len: int) -> ModelConfig:
    """The config a CPU tool runs on: the same family, head, sharing, G, K, L, activation, tying and type
    vocabulary, with at most 4 heads of 8, E at most 16, V at most 512, I scaled with H."""
    heads = min(cfg.num_heads, SMALL_MAX_HEADS)
    hidden = min(cfg.hidden_size, heads * SMALL_HEAD_DIM)
    heads = heads if hidden % heads == 0 else 1
    inner = max(1, cfg.intermediate_size * hidden // cfg.hidden_size)
    embedding = min(cfg.embedding_size, SMALL_EMBEDDING)
    if not cfg.always_project:  # an E->H projection exactly when E != H: keep it so
        embedding = hidden if not cfg.is_factorized else (embedding if embedding != hidden else hidden // 2 or 1)
    kv = cfg.num_kv_heads
    if kv:  # grouped queries: the same group size where it divides the twin's heads, else one key/value head
        group = cfg.num_heads // kv
        kv = heads // group if heads % group == 0 else 1
    return cfg.replace(
        vocab_size=min(cfg.vocab_size, SMALL_VOCAB),
        embedding_size=embedding,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv,
        intermediate_size=inner,
        max_position_embeddings=max(seq_len + cfg.position_offset, min(cfg.max_position_embeddings, 512)),
    )


def runs_on_cpu(tool: Tool, cfg: ModelConfig) -> bool:
    """Whether ``tool`` runs on the CPU on the small twin of ``cfg``: ptflops always, and every tool that runs a
    forward pass on DeBERTa-v2 (its relative positions call .item(), which the meta device cannot answer)."""
    forward = tool.quantity != "parameters" or tool.key == "torchinfo"
    return tool.device == "cpu-small" or (cfg.position == "relative" and forward and tool.quantity != "training")


def no_transformers_model(cfg: ModelConfig) -> str | None:
    """Why the tools cannot run on ``cfg`` (None: they can): an encoder after BERT with ALBERT's ideas applied (E
    where its class has no projection, cross-layer sharing), and any config with a sharing scheme designed since
    ALBERT (block order, unique ends, repeat, LoRA: `uses_sharing_scheme`), has no transformers model to run them
    on. BERT's and ALBERT's partial sharing modes are built here (`build_hf_model`)."""
    if uses_sharing_scheme(cfg):
        return (f"transformers has no model of the sharing scheme {scheme_words(cfg)} (designed since ALBERT), so "
                "the counters are not run on it: the audit covers it only with its own arithmetic (the 6N rows and "
                "the scheme's checks: `scheme_checks`)")
    return None if family_of(cfg.family).paper else hf_class_mismatch(cfg)


def uses_sharing_scheme(cfg: ModelConfig) -> bool:
    """Whether ``cfg`` sets any of the sharing schemes since ALBERT off ALBERT's own (contiguous groups, no unique
    ends, each layer once, no LoRA)."""
    return any(getattr(cfg, name) != value for name, value in SHARING_SCHEME.items())


def scheme_words(cfg: ModelConfig) -> str:
    """The scheme's fields off ALBERT's, as written: "repeat=2, lora_rank=8"."""
    return ", ".join(f"{name}={getattr(cfg, name)!r}" for name, value in SHARING_SCHEME.items()
                     if getattr(cfg, name) != value)


@dataclass(frozen=True)
class SchemeCheck:
    """One figure of a sharing scheme since ALBERT, from the audit's own arithmetic (the executed schedule
    enumerated layer by layer: `_schedule`), beside the library's count (``exact``)."""

    what: str
    own: int
    exact: int

    @property
    def matches(self) -> bool:
        return self.own == self.exact

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "own": self.own, "exact": self.exact, "matches": self.matches}


def _schedule(cfg: ModelConfig) -> list[tuple[int, int, bool]]:
    """Every executed block in order, as (attention copy, FFN copy, a middle layer's) : layer i runs its K blocks,
    ``repeat`` times in a row. A shared kind's copy set: the first and last layers' own with unique ends, else the
    group of the layer among the (middle) layers, contiguous runs as transformers' ALBERT (int(j / (n / G))) or i mod
    G in a cycle; an unshared kind's: the layer's own. Written here, apart from ModelConfig's mapping."""
    L, G, K = cfg.num_layers, cfg.num_hidden_groups, cfg.inner_group_num
    ends = bool(cfg.unique_ends)
    out = []
    for i in range(L):
        middle = not (ends and i in (0, L - 1))
        if not middle:
            shared_set = ("end", i)
        else:
            j, n = (i - 1, L - 2) if ends else (i, L)
            shared_set = ("group", j % G if cfg.block_order == "cycle" else int(j / (n / G)))
        for _ in range(cfg.repeat):
            for k in range(K):
                att = (shared_set, k) if cfg.sharing in ("all", "attention") else (("layer", i), k)
                ffn = (shared_set, k) if cfg.sharing in ("all", "ffn") else (("layer", i), k)
                out.append((att, ffn, middle))
    return out


def scheme_checks(cfg: ModelConfig, batch: int = 1, seq_len: int = 128) -> tuple[SchemeCheck, ...]:
    """The audit's own arithmetic of a sharing scheme beside the library's counts: blocks executed (from the qkv
    FLOPs of `count_flops`), distinct blocks held (BERT's and ALBERT's block sizes: from `count_params`' encoder
    parameters), and each LoRA's parameters (r x (d_in + d_out) at each position that carries it: a block of a
    shared kind in the middle layers, or of an unshared kind when every layer runs more than once). Empty for a
    config with ALBERT's own scheme."""
    if not uses_sharing_scheme(cfg):
        return ()
    schedule = _schedule(cfg)
    params, flops = count_params(cfg).by_name(), count_flops(cfg, batch, seq_len).by_name()
    H, I, N = cfg.hidden_size, cfg.intermediate_size, batch * seq_len  # noqa: E741
    kv = (cfg.num_kv_heads or cfg.num_heads) * (H // cfg.num_heads)
    up = I * (2 if cfg.ffn_kind == "glu" else 1)
    out = [SchemeCheck("blocks executed (L x K x repeat)", len(schedule),
                       flops["encoder.attention.qkv"] // (2 * N * H * (H + 2 * kv)))]
    held_att, held_ffn = len({a for a, _, _ in schedule}), len({f for _, f, _ in schedule})
    if family_of(cfg.family).paper:  # BERT's and ALBERT's blocks: attention 4H^2 + 6H, FFN 2HI + I + 3H
        encoder = sum(n for name, n in params.items()
                      if name.startswith(("encoder.attention.", "encoder.ffn.")))
        own = held_att * (4 * H * H + 6 * H) + held_ffn * (2 * H * I + I + 3 * H)
        out.append(SchemeCheck(f"encoder block parameters ({held_att} attention, {held_ffn} FFN blocks held)", own,
                               encoder))
    shapes = {"q": (H, H), "k": (H, kv), "v": (H, kv), "o": (H, H), "in": (H, up), "out": (I, H)}
    if cfg.lora_rank:
        attention_shared, ffn_shared = cfg.sharing in ("all", "attention"), cfg.sharing in ("all", "ffn")
        for m in cfg.lora_targets.split("-"):
            shared = attention_shared if m in ("q", "k", "v", "o") else ffn_shared
            positions = sum(1 for _, _, middle in schedule if (middle if shared else cfg.repeat > 1))
            own = positions * cfg.lora_rank * sum(shapes[m])
            out.append(SchemeCheck(f"LoRA on {m}: {positions} positions x r {cfg.lora_rank} x "
                                   f"({shapes[m][0]:,} + {shapes[m][1]:,})", own, params.get(f"encoder.lora.{m}", 0)))
    return tuple(out)


def has_sdpa(cfg: ModelConfig) -> bool:
    """Whether transformers' class of ``cfg`` has an SDPA attention (DeBERTa-v2's is eager only: its SDPA rows run
    the eager model)."""
    return family_of(cfg.family).transformers.sdpa


# ----------------------------------------------------------------------------- running the tools
def installed(tool: Tool) -> str | None:
    """The installed version of ``tool``'s package ("torch x" for torch's own), or None."""
    if tool.dist is None:  # torch's own (a dependency of albert_core) or this project's arithmetic
        return "torch " + importlib.metadata.version("torch") if tool.module == "torch" else None
    if importlib.util.find_spec(tool.module) is None:
        return None
    try:
        return importlib.metadata.version(tool.dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def build_hf_model(cfg: ModelConfig, attention: str, device: str = "meta"):
    """transformers' model of ``cfg`` in eval mode. Partial sharing: an ALBERT with one layer group per
    layer in which every layer of a group calls the first layer's attention (or FFN) module, held once
    (as transformers calls a shared layer group: once per use, one module in the tree)."""
    import torch
    import transformers

    hf = config_to_hf(cfg) if cfg.sharing in ("none", "all") else config_to_hf(cfg.replace(sharing="none"))
    conf = transformers.AutoConfig.for_model(**hf)
    with torch.device(device):
        model = getattr(transformers, hf_class_name(cfg))._from_config(conf, attn_implementation=attention)
    if cfg.sharing in ("attention", "ffn"):
        groups = (model if cfg.head == "model" else getattr(model, _modules(cfg).base)).encoder.albert_layer_groups
        names = (
            ("attention",) if cfg.sharing == "attention" else ("ffn", "ffn_output", "full_layer_layer_norm")
        )
        first: dict[int, int] = {}
        for i in range(cfg.num_layers):
            owner = first.setdefault(cfg.group_of_layer(i), i)
            if owner == i:
                continue
            for k in range(cfg.inner_group_num):
                layer, source = groups[i].albert_layers[k], groups[owner].albert_layers[k]
                for name in names:
                    del layer._modules[name]  # not a child here: the owner's module is called instead
                    object.__setattr__(layer, name, getattr(source, name))
    return model.eval()


def _quiet():
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    stack.callback(logging.disable, previous)
    return stack


def _measure(tool: Tool, model, ids) -> tuple[int, Any]:
    """The tool's own figure on ``model`` run on ``ids`` (its documented call for a transformers model), and
    for the `PER_MODULE` tools what it reports per module (None for the others)."""
    import torch

    family = _family(tool)
    if family == "parameters":
        return sum(p.numel() for p in model.parameters()), None
    if family == "state_dict":
        return sum(t.numel() for t in model.state_dict().values()), None
    if family == "per_module":
        return sum(sum(p.numel() for p in child.parameters()) for child in model.children()), None
    if family in ("torchinfo", "torchinfo_macs"):
        import torchinfo

        stats = torchinfo.summary(model, input_data=[ids], verbose=0, device=ids.device)
        if family == "torchinfo":
            return stats.total_params, stats.summary_list
        return stats.total_mult_adds, None
    if family == "flop_counter":
        from torch.utils.flop_counter import FlopCounterMode

        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(ids)
        return counter.get_total_flops(), counter.get_flop_counts()
    if family == "fvcore":
        from fvcore.nn import FlopCountAnalysis

        analysis = FlopCountAnalysis(model, (ids,))
        analysis.unsupported_ops_warnings(False)
        analysis.uncalled_modules_warnings(False)
        return analysis.total(), analysis.by_module()
    if family == "thop":
        import thop

        macs, _, layers = thop.profile(model, inputs=(ids,), verbose=False, ret_layer_info=True)
        return macs, _thop_by_path(layers)
    if family == "ptflops":
        import ptflops

        # the per-layer print (print_per_layer_stat) writes to ``ost`` while every module still holds its
        # count; each module's figure there is its accumulate_flops() over the batch counter
        counts = _CountsAtPrint(model, lambda m: m.accumulate_flops() / model.__batch_counter__)
        macs, _ = ptflops.get_model_complexity_info(
            model,
            tuple(ids.shape[1:]),
            input_constructor=lambda _: {"input_ids": ids},
            as_strings=False,
            print_per_layer_stat=True,
            ost=counts,
            backend="pytorch",
        )
        return macs, counts.by_module()
    if family == "calflops":
        import calflops
        from calflops.utils import get_module_flops

        # print_results prints (to stdout) before calflops removes its per-module __flops__
        counts = _CountsAtPrint(model, get_module_flops)
        with contextlib.redirect_stdout(counts):
            flops, _, _ = calflops.calculate_flops(
                model,
                kwargs={"input_ids": ids},
                output_as_string=False,
                print_results=True,
                print_detailed=False,
            )
        return flops, counts.by_module()
    raise ValueError(f"no measurement for tool {tool.key!r}")


def _thop_by_path(layers: dict, prefix: str = "") -> dict[str, float]:
    """thop's ``ret_layer_info`` tree (child name -> (ops of its subtree, params, its children's tree)) by
    module path."""
    out: dict[str, float] = {}
    for name, (ops, _, children) in layers.items():
        out[prefix + name] = ops
        out.update(_thop_by_path(children, f"{prefix}{name}."))
    return out


class _CountsAtPrint(io.TextIOBase):
    """A stream for a tool's per-module print. ptflops and calflops print while their counts are still on the
    modules and delete them before returning: at the first write, this reads ``count(module)`` of every named
    module of ``model`` (numbers from the modules, not the printed text) into ``figures``."""

    def __init__(self, model, count: Callable[[Any], float]):
        super().__init__()
        self.model, self.count = model, count
        self.figures: dict[str, float] | None = None

    def write(self, text: str) -> int:
        if self.figures is None:
            self.figures = {name: self.count(m) for name, m in self.model.named_modules()}
        return len(text)

    def by_module(self) -> dict[str, float]:
        if self.figures is None:
            raise RuntimeError("the tool printed nothing: its per-module counts were not read")
        return self.figures


# ptflops and calflops patch torch functions process-wide while they count: one tool at a time.
_RUN_LOCK = threading.Lock()


def _run_rows(cfg: ModelConfig, batch: int, seq_len: int, tools: tuple[Tool, ...]) -> list[AuditRow]:
    rows: list[AuditRow] = []
    models: dict[tuple[str, str, ModelConfig], Any] = {}
    for tool in tools:
        cpu = runs_on_cpu(tool, cfg)
        run_cfg = small_twin(cfg, seq_len) if cpu else cfg
        t = terms(run_cfg, batch, seq_len)
        exact, causes = exact_figure(tool, t), explain(tool, t)
        if tool.quantity == "training":
            n = t.params if tool.key == "6n_unique" else t.executed_params
            rows.append(
                AuditRow(
                    tool, run_cfg, "computed from the config", exact, 6 * n * t.tokens, causes, "computed"
                )
            )
            continue
        device = "cpu" if cpu else "meta"
        run_on = "meta device, full size" if device == "meta" else f"CPU, small twin: {config_name(run_cfg)}"
        attention = tool.attention or "eager"
        if not has_sdpa(run_cfg) and attention == "sdpa":
            attention = "eager"
            run_on += " (transformers' DeBERTa-v2 has no SDPA attention: its eager one ran)"
        version = installed(tool)
        if version is None:
            rows.append(AuditRow(tool, run_cfg, run_on, exact, None, causes, "not installed"))
            continue
        if problem := no_transformers_model(run_cfg):
            rows.append(AuditRow(tool, run_cfg, run_on, exact, None, causes, f"not run: {problem}", version))
            continue
        try:
            import torch

            key = (attention, device, run_cfg)
            if key not in models:
                with _quiet():
                    models[key] = build_hf_model(run_cfg, key[0], device)
            ids = torch.zeros(batch, seq_len, dtype=torch.long, device=device)
            with _RUN_LOCK, _quiet():
                figure, measured = _measure(tool, models[key], ids)
            components = () if measured is None else component_rows(tool, t, models[key], measured)
        except Exception as exc:  # a third-party tool failing is a finding, not a crash
            rows.append(
                AuditRow(
                    tool,
                    run_cfg,
                    run_on,
                    exact,
                    None,
                    causes,
                    f"failed: {type(exc).__name__}: {str(exc)[:160]}",
                    version,
                )
            )
            continue
        rows.append(AuditRow(tool, run_cfg, run_on, exact, int(figure), causes, "ran", version, components))
    return rows


AUDIT_LIMITS = {"batch": (1, 64), "seq_len": (1, 4096)}


def audit(
    cfg: ModelConfig, batch: int = 1, seq_len: int = 128, tools: Callable[[Tool], bool] | None = None
) -> Audit:
    """Run every installed tool (or those ``tools`` selects) on ``cfg`` at ``batch`` x ``seq_len``."""
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    for name, value in (("batch", batch), ("seq_len", seq_len)):
        lo, hi = AUDIT_LIMITS[name]
        check_whole_number(name, value, lo, hi)
    check_seq_len(cfg, seq_len)
    chosen = tuple(t for t in TOOLS if tools is None or tools(t))
    return Audit(cfg, batch, seq_len, tuple(_run_rows(cfg, batch, seq_len, chosen)), scheme_checks(cfg, batch, seq_len))
