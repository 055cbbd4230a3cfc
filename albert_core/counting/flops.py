"""FLOPs of a forward pass and of a training step, component by component.

Default convention ``"matmul"``: every matrix product counts 2*m*n*k, the attention scores and the
attention-weighted values included (4*B*S^2*H per executed layer), embedding lookups and element-wise
work count 0. It equals, exactly, `torch.utils.flop_counter.FlopCounterMode` on the transformers model
built with ``attn_implementation="eager"``. The ``"full"`` convention adds element-wise work with
ELECTRA's constants (below).

Sharing never saves FLOPs: ALBERT runs its shared blocks L*K times, like an unshared model of depth L*K.

A training step is forward + backward, the backward costing twice the forward (one product for the
input gradient, one for the weight gradient, per matmul). ``recompute=True`` is gradient checkpointing
of every executed encoder layer, as transformers' ``gradient_checkpointing_enable()`` does for BERT
(checkpointing each ``BertLayer``): the backward runs the forward of the L*K attention + FFN layers
once more (their element-wise work too, in the "full" convention); the embeddings, ALBERT's E->H
projection and the heads are not recomputed. For bert-base at 128 tokens that is 3.78x the forward,
not 4x. ALBERT follows the same rule with each of its L*K executed layers checkpointed
(transformers 5.24's ALBERT does not support gradient checkpointing; the tests wrap each
``AlbertLayer`` in ``torch.utils.checkpoint``). The recomputed FLOPs equal FlopCounterMode's extra
count exactly (`RECOMPUTED`).
`flop_terms` is plain arithmetic on config numbers and also runs on numpy columns (sweeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from albert_core.checks import check_flag, check_number, check_whole_number
from albert_core.configuration.config import LORA_MATRICES, NUM_ORDER_LABELS, ModelConfig
from albert_core.configuration.workload import check_seq_len
from albert_core.counting.params import (
    COMPONENT_INFO,
    ParamBreakdown,
    components_frame,
    count_params,
    order_head_name,
)
from albert_core.format import fmt_flops

CONVENTIONS = ("matmul", "full")
_ORDER = {name: i for i, name in enumerate(COMPONENT_INFO)}

# Element-wise FLOPs per element, the constants of ELECTRA's `flops_computation.py`
# (Clark et al. 2020, github.com/google-research/electra/blob/master/flops_computation.py):
# DROPOUT_FLOPS = 4, LAYER_NORM_FLOPS = 5, ACTIVATION_FLOPS = 8, SOFTMAX_FLOPS = 5, and 1 for a bias
# add, a residual add and the attention scaling.
DROPOUT_FLOPS = 4
LAYER_NORM_FLOPS = 5
SOFTMAX_FLOPS = 5  # per attention score / per vocabulary logit
BIAS_FLOPS = 1
RESIDUAL_FLOPS = 1
SCALE_FLOPS = 1  # the 1/sqrt(head_dim) scaling of each attention score
# ELECTRA charges 8 for GELU (tanh approximation) and for the classifier's activation (tanh here);
# ReLU is a single comparison.
ACTIVATION_FLOPS = {"gelu": 8, "gelu_new": 8, "relu": 1, "silu": 8}  # silu: a sigmoid and a product, as costly as gelu
TANH_FLOPS = 8


def masked_tokens_per_sequence(seq_len: int, mlm_fraction: float) -> int:
    """Positions the MLM head runs on: all of them at 1.0 (what transformers computes), else the
    masked fraction rounded to whole tokens, at least one (ELECTRA: 0.15625 * 128 = 20)."""
    return seq_len if mlm_fraction == 1 else max(1, round(seq_len * mlm_fraction))


def local_attention_pairs(seq_len: Any, window: Any) -> Any:
    """(query, key) pairs a local-attention layer scores in a sequence of ``seq_len`` tokens: every key within
    window / 2 positions of its query (ModernBERT's local_attention = window; transformers' sliding_window is
    its half). Plain arithmetic (numpy columns too); a window of 0 gives the diagonal only (no local layer
    has it: `ModelConfig.local_layers` is 0 then)."""
    S, half = seq_len, window // 2
    m = (S - 1) - (S - 1 - half) * (half < S - 1)  # min(half, S - 1)
    return S + 2 * m * S - m * (m + 1)


def flop_terms(c: Any, batch: int, seq_len: int, masked: int, convention: str = "matmul") -> list[tuple[str, Any]]:
    """(name, forward FLOPs) per component; ``masked`` = MLM positions per sequence.

    ``c`` is a ModelConfig or config-shaped numpy columns (see `albert_core.counting.params.param_terms`).
    Local-attention layers score only the pairs inside their window (`local_attention_pairs`): what a
    sliding-window kernel computes. transformers' eager ModernBERT computes every pair and masks the rest, so
    FlopCounterMode on it counts S^2 for those layers too (`dense_masked_excess`).
    """
    B, S = batch, seq_len
    N, M = B * S, B * masked  # tokens through the encoder, tokens through the MLM head
    V, E, H, I = c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size  # noqa: E741 (paper notation)
    C, X = NUM_ORDER_LABELS, c.executed_layers
    KV, F = c.kv_size, c.ffn_width
    out: list[tuple[str, Any]] = []
    factorized = c.is_factorized  # a bool, or a column of them in a sweep over E or H
    if factorized is not False:
        out.append(("encoder.embedding_hidden_mapping_in", 2 * N * E * H * factorized))
    local = c.executed_local_layers
    pairs = (X - local) * S * S + local * local_attention_pairs(S, c.local_window)
    out += [
        ("encoder.attention.qkv", X * 2 * N * H * (H + 2 * KV)),
        ("encoder.attention.scores", 4 * B * pairs * H),  # QK^T and A.V, all heads together
        ("encoder.attention.dense", X * 2 * N * H * H),
        ("encoder.ffn.ffn", X * 2 * N * H * F),
        ("encoder.ffn.ffn_output", X * 2 * N * I * H),
    ]
    # a LoRA on a shared weight cannot be merged into it: x A^T (r wide), then B, at every position that carries it
    out += [(f"encoder.lora.{m}", positions * 2 * N * c.lora_rank * (d_in + d_out))
            for m, positions, d_in, d_out in c.lora_terms()]
    if c.position == "relative":
        # DeBERTa, per layer: the 2k-row relative table through the layer's query and key projections (once, not
        # per sequence), then content->position and position->content scores: (B*heads, S, d) x (d, 2k) each
        k = c.position_buckets
        out.append(("encoder.attention.relative", X * (2 * 2 * (2 * k) * H * H + 2 * 2 * B * S * (2 * k) * H)))
    if c.has_pooler:
        out.append(("pooler", 2 * B * H * H))  # the first token of each sequence only
    if c.has_mlm_head:
        if c.head_transform or factorized is not False:
            out.append(("predictions.dense", 2 * M * H * E * (1 if c.head_transform else factorized)))
        out.append(("predictions.decoder", 2 * M * E * V))
    if c.has_order_head:
        out.append((order_head_name(c.family), 2 * B * H * C))
    if c.has_discriminator:  # every token: is it the original or a replacement?
        out += [("discriminator.dense", 2 * N * H * H), ("discriminator.prediction", 2 * N * H)]
    if convention == "full":
        out += _elementwise_terms(c, B, S, M)
    return out


def dense_masked_excess(cfg: ModelConfig, batch: int, seq_len: int) -> int:
    """FLOPs an implementation that scores every pair and masks the window (transformers' eager and SDPA
    ModernBERT) spends beyond `flop_terms` on the local-attention layers: 4 x B x (S^2 - pairs) x H each."""
    local = cfg.executed_local_layers
    return local * 4 * batch * (seq_len * seq_len - local_attention_pairs(seq_len, cfg.local_window)) * cfg.hidden_size


def _elementwise_terms(c: Any, B: int, S: int, M: int) -> list[tuple[str, Any]]:
    """ELECTRA-style element-wise work per forward, summed per group (an estimate for the blocks ELECTRA's
    constants do not cover: a GLU's product, rotary, RMSNorm counted as a LayerNorm). Local-attention layers
    normalise only their window's pairs, as `flop_terms` scores them."""
    N = B * S
    # single-letter names in the paper's notation (I = intermediate size, hence the E741 exception)
    V, E, H, I, A = c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size, c.num_heads  # noqa: E741
    C, X, act = NUM_ORDER_LABELS, c.executed_layers, ACTIVATION_FLOPS[c.hidden_act]
    KV, F = c.kv_size, c.ffn_width
    att_b, mlp_b = int(c.attention_bias), int(c.mlp_bias)
    # embeddings: the adds of the tables there are, the norm, dropout, projection bias
    tables = 1 + int(c.has_position_table) + (c.type_vocab_size > 0) * 1
    emb = N * E * ((tables - 1) * RESIDUAL_FLOPS + LAYER_NORM_FLOPS * int(c.embedding_norm) + DROPOUT_FLOPS)
    factorized = c.is_factorized
    if factorized is not False:
        emb = emb + N * H * BIAS_FLOPS * int(c.projection_bias) * factorized
    layer = (
        N * ((H + 2 * KV + H) * att_b + (F + H) * mlp_b) * BIAS_FLOPS  # q, k, v, attention output, FFN up, down
        + 2 * N * H * (DROPOUT_FLOPS + RESIDUAL_FLOPS + LAYER_NORM_FLOPS)  # after attention and FFN
        + N * I * act
    )
    if c.ffn_kind == "glu":
        layer = layer + N * I  # act(gate) x up
    if c.position == "rotary":
        layer = layer + 3 * N * (H + KV)  # q and k: x cos + rotate(x) sin
    heads = 0
    if c.has_pooler:
        heads = heads + B * H * (BIAS_FLOPS + TANH_FLOPS)
    if c.has_mlm_head:
        # transform bias + activation + LayerNorm, decoder bias, and (as ELECTRA) the softmax over V
        heads = (heads + M * E * (BIAS_FLOPS + ACTIVATION_FLOPS[c.transform_act] + LAYER_NORM_FLOPS)
                 + M * V * (BIAS_FLOPS + SOFTMAX_FLOPS))
    if c.has_order_head:
        heads = heads + B * C * BIAS_FLOPS
    if c.has_discriminator:
        heads = heads + N * H * (BIAS_FLOPS + act) + N * BIAS_FLOPS
    # the scores' scale, softmax and dropout: every pair of a global layer, the window's pairs of a local one (as
    # the matmuls count them: a sliding-window kernel)
    local = c.executed_local_layers
    scores = B * A * ((X - local) * S * S + local * local_attention_pairs(S, c.local_window))
    encoder = X * layer + scores * (SCALE_FLOPS + SOFTMAX_FLOPS + DROPOUT_FLOPS)
    for _, positions, _, d_out in c.lora_terms():  # each LoRA's output added to its matrix's
        encoder = encoder + positions * N * d_out * RESIDUAL_FLOPS
    out = [("elementwise.embeddings", emb), ("elementwise.encoder", encoder)]
    if c.has_pooler or c.has_mlm_head or c.has_discriminator:
        out.append(("elementwise.heads", heads))
    return out


# The components that gradient checkpointing recomputes: the work inside the executed encoder layers.
RECOMPUTED = frozenset(
    {
        "encoder.attention.qkv",
        "encoder.attention.scores",
        "encoder.attention.dense",
        "encoder.ffn.ffn",
        "encoder.ffn.ffn_output",
        "encoder.attention.relative",
        *(f"encoder.lora.{m}" for m in LORA_MATRICES),
        "elementwise.encoder",
    }
)
assert set(COMPONENT_INFO) >= RECOMPUTED


def training_factor(recompute: bool, name: str | None = None) -> int:
    """Training FLOPs / forward FLOPs of a component: forward + 2x backward, + 1 recomputed forward
    with ``recompute`` for the encoder layers' components (``name`` in `RECOMPUTED`)."""
    return 4 if recompute and name in RECOMPUTED else 3


@dataclass(frozen=True)
class FlopComponent:
    name: str
    label: str
    group: str
    forward: int
    training: int


@dataclass(frozen=True)
class FlopBreakdown:
    config: ModelConfig
    batch: int
    seq_len: int
    convention: str
    mlm_fraction: float
    recompute: bool
    components: tuple[FlopComponent, ...]

    @property
    def forward(self) -> int:
        return sum(c.forward for c in self.components)

    @property
    def backward(self) -> int:
        return 2 * self.forward

    @property
    def recomputed(self) -> int:
        """Forward FLOPs the backward runs again (0 unless ``recompute``)."""
        return self.training - 3 * self.forward

    @property
    def training(self) -> int:
        return sum(c.training for c in self.components)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the forward matmuls (FLOPs / 2), as most FLOP counters report."""
        return sum(c.forward for c in self.components if not c.name.startswith("elementwise.")) // 2

    @property
    def tokens(self) -> int:
        return self.batch * self.seq_len

    @property
    def per_token_training(self) -> float:
        return self.training / self.tokens

    def by_name(self) -> dict[str, int]:
        return {c.name: c.forward for c in self.components}

    def to_frame(self):
        """A pandas DataFrame: component, label, group, forward, training, share (of the forward)."""
        return components_frame(self.components, "forward")


def check_flop_args(batch: Any, seq_len: Any, convention: Any, mlm_fraction: Any) -> None:
    """Validate the workload arguments that do not depend on the config (ValueError naming them)."""
    for name, value in (("batch", batch), ("seq_len", seq_len)):
        check_whole_number(name, value)
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}; got {convention!r:.40}")
    f = mlm_fraction
    check_number("mlm_fraction", f, 0, 1, lo_open=True)


def count_flops(
    cfg: ModelConfig,
    batch: int = 1,
    seq_len: int = 128,
    *,
    convention: str = "matmul",
    mlm_fraction: float = 1.0,
    recompute: bool = False,
) -> FlopBreakdown:
    """FLOPs of ``cfg`` on ``batch`` sequences of ``seq_len`` tokens (see the module docstring)."""
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    check_flop_args(batch, seq_len, convention, mlm_fraction)
    check_seq_len(cfg, seq_len)
    check_flag("recompute", recompute)
    masked = masked_tokens_per_sequence(seq_len, mlm_fraction)
    terms = sorted(flop_terms(cfg, batch, seq_len, masked, convention), key=lambda t: _ORDER[t[0]])
    comps = tuple(
        FlopComponent(name, *COMPONENT_INFO[name], int(f), int(f) * training_factor(recompute, name))
        for name, f in terms
    )
    return FlopBreakdown(cfg, batch, seq_len, convention, float(mlm_fraction), recompute, comps)


def training_rule(recompute: bool) -> str:
    """How training FLOPs follow from the forward's, in words (the JSON report's convention): with gradient
    checkpointing the encoder layers' forward runs once more (not the embeddings or the heads)."""
    return ("training = 3 x forward + the encoder layers' forward again (gradient checkpointing)" if recompute
            else "training = 3 x forward")


def flop_differences(a: FlopBreakdown, b: FlopBreakdown) -> list[tuple[str, int]]:
    """(component name, ``a``'s forward FLOPs minus ``b``'s) for every component whose forward FLOPs differ,
    the largest difference first: where two configs' compute parts ways."""
    fa, fb = a.by_name(), b.by_name()
    diffs = [(name, fa.get(name, 0) - fb.get(name, 0)) for name in COMPONENT_INFO if name in fa or name in fb]
    return sorted(((n, d) for n, d in diffs if d), key=lambda nd: -abs(nd[1]))


def differences_words(diffs: list[tuple[str, int]], limit: int = 3) -> str:
    """`flop_differences` in words, the largest ``limit`` named: 'MLM decoder -4.9 GFLOP, MLM transform
    -125.8 MFLOP and Embedding projection E→H +25.2 MFLOP' ('' when nothing differs)."""
    parts = [f"{COMPONENT_INFO[n][0]} {'+' if d > 0 else ''}{fmt_flops(d)}" for n, d in diffs[:limit]]
    if len(diffs) > limit:
        parts.append(f"{len(diffs) - limit} more")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + (" and " + parts[-1] if parts else "")


def outside_layers(diffs: list[tuple[str, int]]) -> bool:
    """Whether every difference is outside the executed encoder layers (embeddings, E->H projection, heads)."""
    return not any(n in RECOMPUTED for n, _ in diffs)


# ----------------------------------------------------------------------------- the 6N rule of thumb
SIX_N = 6  # 2 FLOPs per multiply-add x (forward + a backward of twice the forward)


def six_n_params(params: ModelConfig | ParamBreakdown) -> int:
    """N of the rule of thumb "training FLOPs ~ 6 x N x tokens", as the Explorer states it: the
    non-embedding parameters a token passes through, i.e. the encoder's attention and feed-forward blocks
    with their LayerNorms counted once per *executed* layer (L x K copies: a shared block run 12 times counts
    12 times). Neither the unique parameters (what sharing saves) nor every executed parameter: the
    embedding tables, ALBERT's E->H projection and the heads are left out, as are the attention scores
    (matmuls without weights)."""
    bd = count_params(params) if isinstance(params, ModelConfig) else params
    if not isinstance(bd, ParamBreakdown):
        raise ValueError(f"params must be a ModelConfig or a ParamBreakdown, got {type(params).__name__}")
    return sum(c.unshared for c in bd.components if c.group == "encoder")


def six_n_flops(params: ModelConfig | ParamBreakdown, tokens: int = 1) -> int:
    """The 6N rule's training FLOPs for ``tokens`` tokens: 6 x `six_n_params` x tokens."""
    check_whole_number("tokens", tokens)
    return SIX_N * six_n_params(params) * tokens
