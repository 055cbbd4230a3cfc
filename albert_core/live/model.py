"""The live PyTorch encoder: every config of the architecture axes (BERT, ALBERT, RoBERTa, XLM-R, ELECTRA,
DeBERTa-v3, ModernBERT, EuroBERT, NomicBERT and their ALBERTized variants), every sharing mode, every head.

One module per architectural part, named exactly as `count_params` names its components
(docs/architecture.md), so `component_of(name)` of every parameter is a component of the breakdown.
The model serves inference and analysis (the Live model and Paper pages) and is the model the lab trains
(`albert_core.lab.trainer`, MLM + SOP/NSP). There is no dropout anywhere: outputs equal transformers'
models in eval mode, and training runs without dropout (as ALBERT pretrains). Attention runs through
`scaled_dot_product_attention` with one fused Q/K/V projection; when attention maps are requested (and for
DeBERTa's relative scores) they are computed explicitly instead. One attention block (`Attention`), one
feed-forward block (`FeedForward`) and one encoder loop serve every layout; each position scheme is one object
(`LearnedPositions`, `RotaryPositions`, `RelativePositions`) that gives the blocks what they read; which kernel runs
a linear is decided in three small helpers (`project`, `project_act`, `add_projected`): the fused inference kernels
(`albert_core.live.fastpath`) for blocks of BERT's layout (`paper_blocks`), plain `F.linear` for the others.

Nothing big is allocated without a budget check: `build_model` on a real device first estimates the
bytes of the weights plus one forward pass and refuses above the memory budget (`check_budget`), and
the built model refuses inputs larger than what that check covered.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.workload import check_seq_len
from albert_core.counting.params import order_head_name
from albert_core.live import budget, fastpath
from albert_core.live.budget import (
    INIT_CHUNK,
    INIT_SCRATCH_BYTES,
    ForwardGuard,
    MemoryBudgetError,
    check_budget,
)

INIT_STD = 0.02  # transformers' initializer_range for BERT and ALBERT

TORCH_DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

# gelu: erf; gelu_new: tanh; silu (x * sigmoid(x): EuroBERT's and NomicBERT's SwiGLU gate)
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {**fastpath.EAGER_ACT, "silu": F.silu}


@dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H)
    prediction_logits: torch.Tensor | None = None  # (B, T, V); (N, V) for the N positions of an mlm_mask
    order_logits: torch.Tensor | None = None  # (B, 2): SOP for ALBERT, NSP for BERT
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L*K + 1 tensors (B, T, H), as transformers
    attentions: tuple[torch.Tensor, ...] | None = None  # L*K tensors (B, nh, T, T)
    discriminator_logits: torch.Tensor | None = None  # (B, T): ELECTRA's replaced-token logits


# ----------------------------------------------------------------------------- modules
# The model is always created on the meta device and then either left there (shapes only) or given
# real storage and initialised once by `build_model` / filled by `from_hf`: torch's own per-layer
# initialisation would be wasted work (seconds for the deepest configs), so these skip it.
class Linear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__(in_features, out_features, bias=bias, device="meta")

    def reset_parameters(self) -> None:
        pass


class LayerNorm(nn.LayerNorm):
    def __init__(self, n: int, eps: float, bias: bool = True):
        super().__init__(n, eps=eps, bias=bias, device="meta")

    def reset_parameters(self) -> None:
        pass


class RMSNorm(nn.Module):
    """Scale-only norm, EuroBERT's (and Llama's) formula: weight * x * rsqrt(mean(x^2) + eps), the statistics in
    float32 and the result cast back before the scale."""

    def __init__(self, n: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, device="meta"))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


NORMS = (nn.LayerNorm, RMSNorm)  # modules whose weight starts at one


def make_norm(cfg: ModelConfig, n: int) -> nn.Module:
    """The config's norm over ``n`` features: a LayerNorm (with or without bias) or an RMSNorm."""
    if cfg.norm == "rmsnorm":
        return RMSNorm(n, cfg.layer_norm_eps)
    return LayerNorm(n, eps=cfg.layer_norm_eps, bias=cfg.norm_bias)


class Embedding(nn.Embedding):
    def __init__(self, num: int, dim: int):
        super().__init__(num, dim, device="meta")

    def reset_parameters(self) -> None:
        pass


class Embeddings(nn.Module):
    """Word embeddings, plus the learned position table and the token-type table where the config has them,
    then the embedding norm (DeBERTa: after its E->H projection, which ``project`` applies). DeBERTa's relative
    position table and its norm live here too (used by every layer's attention)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        E = cfg.embedding_size
        self.word_embeddings = Embedding(cfg.vocab_size, E)
        if cfg.has_position_table:
            self.position_embeddings = Embedding(cfg.max_position_embeddings, E)
        if cfg.type_vocab_size:
            self.token_type_embeddings = Embedding(cfg.type_vocab_size, E)
        if cfg.embedding_norm:
            self.LayerNorm = make_norm(cfg, cfg.hidden_size if cfg.norm_after_projection else E)
        if cfg.position == "relative":
            self.relative_embeddings = Embedding(2 * cfg.position_buckets, cfg.hidden_size)
            self.relative_LayerNorm = LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)
        # RoBERTa: positions count the non-padding tokens from padding_idx + 1 (see `roberta_positions`)
        self.padding_idx = cfg.position_offset - 1 if cfg.position_offset else None
        self.project_first = cfg.norm_after_projection and cfg.is_factorized

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None, project: nn.Module | None = None
    ) -> torch.Tensor:
        T = input_ids.shape[1]
        x = self.word_embeddings(input_ids)  # (B, T, E)
        if hasattr(self, "token_type_embeddings"):
            if token_type_ids is None:
                x = x + self.token_type_embeddings.weight[0]  # transformers' default: all type 0
            else:
                x = x + self.token_type_embeddings(token_type_ids)
        if hasattr(self, "position_embeddings"):
            if self.padding_idx is None:
                x = x + self.position_embeddings.weight[:T]  # (T, E) broadcast over the batch
            else:
                x = x + self.position_embeddings(roberta_positions(input_ids, self.padding_idx))
        if self.project_first:
            x = project(x)  # DeBERTa: E -> H before its norm
        if hasattr(self, "LayerNorm"):
            x = self.LayerNorm(x)
        return x

    def relative_table(self) -> torch.Tensor | None:
        """DeBERTa's relative position embeddings after their norm, (2 x buckets, H); None without them."""
        if not hasattr(self, "relative_embeddings"):
            return None
        return self.relative_LayerNorm(self.relative_embeddings.weight)


def roberta_positions(input_ids: torch.Tensor, padding_idx: int) -> torch.Tensor:
    """RoBERTa's (and XLM-R's) position ids, as transformers builds them from the input ids: every token that is
    not ``padding_idx`` counts from padding_idx + 1, padding tokens take padding_idx itself. For an input without
    padding tokens these are padding_idx + 1, ..., padding_idx + T (the table's rows after its offset)."""
    mask = input_ids.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


# ----------------------------------------------------------------------------- kernels
def paper_blocks(cfg: ModelConfig) -> bool:
    """The encoder's blocks have BERT's layout (post-LN with biases, dense FFN, full multi-head attention, no
    positions inside the blocks, an activation the fused kernels have: BERT, ALBERT, RoBERTa, XLM-R, ELECTRA): their
    linears run the fused inference kernels (`albert_core.live.fastpath`: oneDNN's linear with its bias, activation
    and residual inside the GEMM where a probe measured it faster; the residual inside an in-place addmm_ otherwise),
    every other layout plain `F.linear`."""
    return (cfg.ffn_kind == "dense" and cfg.position == "learned" and cfg.norm == "layernorm" and cfg.norm_bias
            and cfg.norm_placement == "post" and cfg.attention_bias and cfg.mlp_bias
            and cfg.kv_heads == cfg.num_heads and not cfg.local_window and cfg.hidden_act in fastpath.ONEDNN_ACT
            and not cfg.lora_rank)  # a LoRA adds its output before the activation and the residual


def project(x: torch.Tensor, layer: nn.Linear, fused: bool) -> torch.Tensor:
    """layer(x), by the fast path's kernel when ``fused``."""
    return fastpath.linear(x, layer) if fused else F.linear(x, layer.weight, layer.bias)


def project_act(x: torch.Tensor, layer: nn.Linear, act: str, fused: bool) -> torch.Tensor:
    """act(layer(x)), the activation inside the fast path's GEMM when ``fused``."""
    return fastpath.linear(x, layer, act) if fused else ACTIVATIONS[act](F.linear(x, layer.weight, layer.bias))


def add_projected(x: torch.Tensor, layer: nn.Linear, y: torch.Tensor, fused: bool) -> torch.Tensor:
    """x + layer(y), the residual inside the fast path's GEMM when ``fused``."""
    return fastpath.residual_linear(x, layer, y) if fused else x + F.linear(y, layer.weight, layer.bias)


# ----------------------------------------------------------------------------- position schemes
def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) over the two halves of the last dimension (the non-interleaved rotary layout that
    transformers' ModernBERT, EuroBERT and NomicBERT all use)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rotary_tables(T: int, head_dim: int, theta: float, device: torch.device, dtype: torch.dtype
                  ) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (T, head_dim) of positions 0..T-1, each frequency repeated over both halves (transformers'
    default rotary embedding, every dimension rotated: no partial rotary)."""
    if head_dim % 2:
        raise ValueError(f"rotary positions need an even head size (hidden_size / num_heads), got {head_dim}")
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float, device=device) / head_dim))
    freqs = torch.arange(T, device=device, dtype=torch.float)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def log_bucket_positions(T: int, buckets: int, max_position: int, device: torch.device) -> torch.Tensor:
    """DeBERTa's relative positions i - j (T, T), log-bucketed beyond +-buckets/2 (transformers'
    make_log_bucket_position, the same float32 operations)."""
    mid = buckets // 2
    if mid < 1:
        raise ValueError(f"DeBERTa's log buckets need position_buckets of at least 2 (half of them on each side), "
                         f"got {buckets}")
    ids = torch.arange(T, dtype=torch.long, device=device)
    rel = ids[:, None] - ids[None, :]
    sign = torch.sign(rel)
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1).type_as(rel), torch.abs(rel))
    log_pos = torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid))
                         * (mid - 1)) + mid
    return torch.where(abs_pos <= mid, rel.type_as(log_pos), log_pos * sign).to(torch.long)


@dataclass
class RelativeInputs:
    """What every DeBERTa attention block reads: the normed relative table and the bucket of each (i, j)."""

    table: torch.Tensor  # (2S, H)
    c2p: torch.Tensor  # (T, T): clamp(bucket(i - j) + S) for query i, key j
    p2c: torch.Tensor  # (T, T): clamp(-bucket(i - j) + S), read transposed


class LearnedPositions:
    """A learned table added to the embeddings (BERT's; RoBERTa's counted from after the padding id,
    `roberta_positions`): nothing inside attention."""

    rotary = relative = masks_padding = False

    def inputs(self, T: int, device: torch.device, dtype: torch.dtype, table: torch.Tensor | None,
               local: bool) -> None:
        return None


class RotaryPositions:
    """Rotary positions (no table): every block rotates its queries and keys by the angles of positions 0..T-1,
    at ``rope_theta`` in global layers and ``local_rope_theta`` in local ones (ModernBERT)."""

    rotary, relative, masks_padding = True, False, False

    def __init__(self, cfg: ModelConfig):
        self.head_dim, self.theta, self.local_theta = cfg.head_dim, cfg.rope_theta, cfg.local_rope_theta

    def inputs(self, T: int, device: torch.device, dtype: torch.dtype, table: torch.Tensor | None,
               local: bool) -> tuple[torch.Tensor, torch.Tensor]:
        return rotary_tables(T, self.head_dim, self.local_theta if local else self.theta, device, dtype)

    @staticmethod
    def rotate(q: torch.Tensor, k: torch.Tensor, tables: tuple[torch.Tensor, torch.Tensor]
               ) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = tables
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class RelativePositions:
    """DeBERTa's disentangled relative attention: the normed relative table (`Embeddings.relative_table`) projected
    by each block's own query and key projections, read at the log bucket of i - j (content->position and
    position->content scores beside the content scores, all scaled by 1/sqrt(3 d)). DeBERTa also zeroes the
    embeddings of padding tokens and masks every key of a padding query."""

    rotary, relative, masks_padding = False, True, True

    def __init__(self, cfg: ModelConfig):
        self.buckets, self.max_position = cfg.position_buckets, cfg.max_position_embeddings

    def inputs(self, T: int, device: torch.device, dtype: torch.dtype, table: torch.Tensor | None,
               local: bool) -> RelativeInputs:
        S = self.buckets
        rel = log_bucket_positions(T, S, self.max_position, device)
        return RelativeInputs(table=table, c2p=torch.clamp(rel + S, 0, 2 * S - 1),
                              p2c=torch.clamp(-rel + S, 0, 2 * S - 1))

    @staticmethod
    def scores(attention: Attention, q: torch.Tensor, k: torch.Tensor, rel: RelativeInputs) -> torch.Tensor:
        """q . k / sqrt(3 d) plus the c2p and p2c scores (B, nh, T, T)."""
        nh, hs = q.shape[1], q.shape[-1]
        H, kv, n_kv = nh * hs, attention.kv, attention.n_kv
        scale = math.sqrt(hs * 3)  # content, c2p and p2c scores: DeBERTa's scale_factor 3
        w, b = attention.qkv.weight, attention.qkv.bias
        pos_q = F.linear(rel.table, w[:H], None if b is None else b[:H])  # (2S, H)
        pos_k = F.linear(rel.table, w[H:H + kv], None if b is None else b[H:H + kv])  # (2S, kv)
        pos_q = pos_q.view(-1, nh, hs).transpose(0, 1)  # (nh, 2S, hs)
        pos_k = pos_k.view(-1, n_kv, hs).transpose(0, 1).repeat_interleave(nh // n_kv, dim=0)
        B, T = q.shape[0], q.shape[2]
        c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, rel.c2p.expand(B, nh, T, T))  # [i, j]: q_i . pos_k
        p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, rel.p2c.expand(B, nh, T, T)).transpose(-1, -2)
        return q @ (k.transpose(-2, -1) / scale) + (c2p / scale + p2c / scale)


PositionScheme = LearnedPositions | RotaryPositions | RelativePositions


def position_scheme(cfg: ModelConfig) -> PositionScheme:
    """The object of ``cfg``'s position scheme."""
    if cfg.position == "rotary":
        return RotaryPositions(cfg)
    if cfg.position == "relative":
        return RelativePositions(cfg)
    return LearnedPositions()


# ----------------------------------------------------------------------------- blocks
class LoRA(nn.Module):
    """A low-rank update of one matrix at one executed position: x -> B(A x), A (r x d_in), B (d_out x r), no bias.
    On a weight that other positions share it cannot be merged into it: it runs beside it (`ModelConfig.lora_terms`).
    `init_weights` starts B at zero, so a new LoRA leaves its block's output as it is."""

    def __init__(self, d_in: int, d_out: int, rank: int):
        super().__init__()
        self.A = nn.Parameter(torch.empty(rank, d_in, device="meta"))
        self.B = nn.Parameter(torch.empty(d_out, rank, device="meta"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(F.linear(x, self.A), self.B)


def plus_lora(y: torch.Tensor, lora: nn.ModuleDict | None, name: str, x: torch.Tensor) -> torch.Tensor:
    """y + lora[name](x) when this position carries a LoRA on that matrix, else y."""
    return y + lora[name](x) if lora is not None and name in lora else y


class Attention(nn.Module):
    """Self-attention of any layout of the axes: post-norm LayerNorm(x + dense(attention(x))) or pre-norm
    x + dense(attention(norm(x))) (LayerNorm with or without bias, or RMSNorm), with or without biases,
    grouped-query (K and V narrower, each serving num_heads / kv_heads query heads), the position scheme's work
    inside attention (rotary angles, DeBERTa's relative scores) and any mask (padding, sliding window). One fused
    Q/K/V projection: [Q (H), K (kv), V (kv)]. Scores through `scaled_dot_product_attention`, or explicitly when
    attention maps are asked for (and for DeBERTa's relative scores).

    ``norm=False``: no norm held (ModernBERT's first block, whose attention norm is the identity).
    """

    def __init__(self, cfg: ModelConfig, positions: PositionScheme, norm: bool = True):
        super().__init__()
        H, kv = cfg.hidden_size, cfg.kv_size
        self.n_head, self.n_kv, self.kv = cfg.num_heads, cfg.kv_heads, kv
        self.pre = cfg.norm_placement == "pre"
        self.fused = paper_blocks(cfg)
        self.positions = positions
        self.qkv = Linear(H, H + 2 * kv, bias=cfg.attention_bias)
        self.dense = Linear(H, H, bias=cfg.attention_bias)
        if norm:
            self.LayerNorm = make_norm(cfg, H)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool, pos: object = None,
        skip_norm: bool = False, lora: nn.ModuleDict | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, T, H = x.shape
        nh, hs = self.n_head, H // self.n_head
        h = self.LayerNorm(x) if self.pre and not skip_norm else x
        q, k, v = project(h, self.qkv, self.fused).split([H, self.kv, self.kv], dim=-1)
        if lora is not None:  # this position's low-rank updates of the shared projections
            q, k, v = plus_lora(q, lora, "q", h), plus_lora(k, lora, "k", h), plus_lora(v, lora, "v", h)
        q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_kv, hs).transpose(1, 2)  # (B, kv heads, T, hs)
        v = v.view(B, T, self.n_kv, hs).transpose(1, 2)
        if self.positions.rotary:
            q, k = self.positions.rotate(q, k, pos)
        if self.n_kv != nh:  # each K/V head serves nh / kv consecutive query heads
            k = k.repeat_interleave(nh // self.n_kv, dim=1)
            v = v.repeat_interleave(nh // self.n_kv, dim=1)
        att = None
        if self.positions.relative or need_weights:
            if self.positions.relative:
                scores = self.positions.scores(self, q, k, pos)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, T)
            if mask is not None:
                scores = scores + mask
            att = scores.softmax(dim=-1)
            y = att @ v  # (B, nh, T, hs)
            att = att if need_weights else None
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, H)  # (B, T, H)
        out = plus_lora(add_projected(x, self.dense, y, self.fused), lora, "o", y)
        return (out if self.pre else self.LayerNorm(out)), att


class FeedForward(nn.Module):
    """Feed-forward block of any layout: dense (up, act, down) or GLU (one fused H -> 2I linear whose first half is
    the gate that gets the activation and whose second half is the up projection: ModernBERT's Wi; EuroBERT's
    and NomicBERT's gate_proj and up_proj concatenated), post-norm LayerNorm(x + down(...)) or pre-norm
    x + down(...(norm(x))), with or without biases."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, inner = cfg.hidden_size, cfg.intermediate_size
        self.act = cfg.hidden_act
        self.glu = cfg.ffn_kind == "glu"
        self.pre = cfg.norm_placement == "pre"
        self.fused = paper_blocks(cfg)
        self.ffn = Linear(H, cfg.ffn_width, bias=cfg.mlp_bias)
        self.ffn_output = Linear(inner, H, bias=cfg.mlp_bias)
        self.LayerNorm = make_norm(cfg, H)

    def forward(self, x: torch.Tensor, lora: nn.ModuleDict | None = None) -> torch.Tensor:
        h = self.LayerNorm(x) if self.pre else x
        if self.glu:
            gate, up = plus_lora(project(h, self.ffn, self.fused), lora, "in", h).chunk(2, dim=-1)
            u = ACTIVATIONS[self.act](gate) * up  # (B, T, I)
        elif lora is not None and "in" in lora:
            u = ACTIVATIONS[self.act](F.linear(h, self.ffn.weight, self.ffn.bias) + lora["in"](h))
        else:
            u = project_act(h, self.ffn, self.act, self.fused)  # (B, T, I)
        out = plus_lora(add_projected(x, self.ffn_output, u, self.fused), lora, "out", u)  # (B, T, H)
        return out if self.pre else self.LayerNorm(out)


@dataclass
class LayerInputs:
    """What the blocks of a forward pass read besides the hidden states: the additive masks and the position
    scheme's inputs (rotary angles, relative buckets) of the global and of the local layers."""

    mask: torch.Tensor | None = None
    local_mask: torch.Tensor | None = None
    pos: object = None
    local_pos: object = None


class Encoder(nn.Module):
    """L layers; layer i runs attention copy set a(i) and FFN copy set f(i), each K blocks deep, ``repeat`` times
    in a row.

    a(i) / f(i) is the layer's group when that block is shared (`ModelConfig.shared_group_of_layer`: G contiguous
    runs of layers as transformers' ALBERT, or i mod G, with or without unique first and last layers) and the layer
    itself when it is not. With a LoRA, ``lora[x]`` holds executed block x's low-rank updates (one per target
    matrix of a block that position shares). Pre-norm encoders end with a final norm.
    """

    def __init__(self, cfg: ModelConfig, positions: PositionScheme):
        super().__init__()
        if cfg.is_factorized:
            self.embedding_hidden_mapping_in = Linear(cfg.embedding_size, cfg.hidden_size, bias=cfg.projection_bias)
        self.project_here = cfg.is_factorized and not cfg.norm_after_projection
        K = cfg.inner_group_num
        n_att = cfg.attention_copies // K
        n_ffn = cfg.ffn_copies // K
        # without first_layer_norm the first block's attention norm is the identity: its copy holds none when no
        # later block runs it (count_params' attention_norms)
        bare = not cfg.first_layer_norm and cfg.attention_norms < cfg.attention_copies
        self.attention = nn.ModuleList(
            nn.ModuleList(Attention(cfg, positions, norm=not (bare and c == 0 and k == 0)) for k in range(K))
            for c in range(n_att)
        )
        self.ffn = nn.ModuleList(nn.ModuleList(FeedForward(cfg) for _ in range(K)) for _ in range(n_ffn))
        if cfg.norm_placement == "pre":
            self.final_norm = make_norm(cfg, cfg.hidden_size)
        self.skip_first_norm = not cfg.first_layer_norm
        self.plan = [
            (cfg.block_index(i, cfg.attention_shared), cfg.block_index(i, cfg.ffn_shared), not cfg.is_global_layer(i))
            for i in range(cfg.num_layers) for _ in range(cfg.repeat)
        ]
        if cfg.lora_rank:
            self.lora = nn.ModuleList(
                nn.ModuleDict({m: LoRA(d_in, d_out, cfg.lora_rank) for m, d_in, d_out in targets})
                for targets in _lora_plan(cfg)
            )

    def forward(
        self, x: torch.Tensor, inputs: LayerInputs, keep_hidden: bool, keep_attn: bool,
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        if self.project_here:
            x = self.embedding_hidden_mapping_in(x)  # (B, T, E) -> (B, T, H)
        hidden = [x] if keep_hidden else []
        attns: list[torch.Tensor] = []
        first = self.skip_first_norm
        lora = iter(self.lora) if hasattr(self, "lora") else None
        for a, f, local in self.plan:
            mask, pos = (inputs.local_mask, inputs.local_pos) if local else (inputs.mask, inputs.pos)
            for att_block, ffn_block in zip(self.attention[a], self.ffn[f], strict=True):
                here = next(lora) if lora is not None else None
                x, w = att_block(x, mask, keep_attn, pos, first, here)
                first = False
                x = ffn_block(x, here)
                if keep_hidden:
                    hidden.append(x)
                if w is not None:
                    attns.append(w)
        if hasattr(self, "final_norm"):
            x = self.final_norm(x)
            if keep_hidden:  # transformers reports the normed output as the last hidden state
                hidden[-1] = x
        return x, hidden, attns


def _lora_plan(cfg: ModelConfig) -> list[list[tuple[str, int, int]]]:
    """Per executed block, in order, the (matrix, d_in, d_out) of the LoRAs it carries (`ModelConfig.lora_targets_at`:
    the positions `ModelConfig.lora_terms` counts)."""
    shapes = cfg.lora_shapes
    return [[(m, *shapes[m]) for m in cfg.lora_targets_at(i)]
            for i in range(cfg.num_layers) for _ in range(cfg.repeat * cfg.inner_group_num)]


class MLMHead(nn.Module):
    """[dense -> act -> norm] (or, without a transform, a bias-free H -> E map when factorized) -> decoder (tied to
    the word embeddings unless untied) + bias (where the config has one)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        E = cfg.embedding_size
        self.act = ACTIVATIONS[cfg.transform_act]  # RoBERTa's, XLM-R's, ELECTRA's: GELU whatever hidden_act is
        self.transform = cfg.head_transform
        if cfg.head_transform:
            self.dense = Linear(cfg.hidden_size, E, bias=cfg.head_bias)  # BERT: H -> H (E == H)
            self.LayerNorm = make_norm(cfg, E)
        elif cfg.is_factorized:
            self.dense = Linear(cfg.hidden_size, E, bias=False)
        if cfg.decoder_bias:
            self.bias = nn.Parameter(torch.empty(cfg.vocab_size, device="meta"))
        if not cfg.tie_word_embeddings:
            # transformers unties the BERT lineage's decoder bias along with its weight; `bias` then stays unused.
            # ELECTRA's, ModernBERT's and EuroBERT's decoders hold their one bias (ours: `bias`) themselves.
            self.decoder = Linear(E, cfg.vocab_size, bias=cfg.decoder_bias and cfg.separate_decoder_bias)

    def forward(self, x: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        if self.transform:
            h = self.LayerNorm(self.act(self.dense(x)))  # (B, T, E)
        elif hasattr(self, "dense"):
            h = self.dense(x)
        else:
            h = x
        if hasattr(self, "decoder"):
            if self.decoder.bias is not None:
                return self.decoder(h)  # (B, T, V)
            return F.linear(h, self.decoder.weight, getattr(self, "bias", None))
        return F.linear(h, word_embeddings, getattr(self, "bias", None))  # (B, T, V)


class DiscriminatorHead(nn.Module):
    """ELECTRA's replaced-token head: prediction(act(dense(x))), one logit per token."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.act = ACTIVATIONS[cfg.hidden_act]
        self.dense = Linear(cfg.hidden_size, cfg.hidden_size)
        self.prediction = Linear(cfg.hidden_size, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.prediction(self.act(self.dense(x))).squeeze(-1)  # (B, T)


class EncoderModel(nn.Module):
    """An encoder of any family of the axes with the heads of ``cfg.head``; no dropout (inference and training).

    ``forward(input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False,
    output_attentions=False, mlm_mask=None) -> EncoderOutput``. ``attention_mask`` is 1 for tokens to attend to
    and 0 for padding, turned into transformers' additive mask (a fully masked row attends
    uniformly, as transformers' eager attention does). ``mlm_mask`` (bool, shape of ``input_ids``) asks
    the MLM head for the masked positions only, ``prediction_logits`` then (N, V) in row-major order:
    what the pretraining loss reads, as the papers' own code gathers ``masked_lm_positions``, without
    the vocabulary-wide logits at every other position. Create it with `build_model` or
    `interop.from_hf`: constructed directly it has shapes only (meta device).

    Positions as transformers builds them with no ``position_ids`` given: 0..T-1 (learned table, rotary, DeBERTa's
    relative buckets), and RoBERTa's / XLM-R's from the input ids (`roberta_positions`: padding_idx + 1, ... for
    the tokens that are not padding_idx = position_offset - 1).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.positions = position_scheme(cfg)
        self.encoder = Encoder(cfg, self.positions)
        if cfg.has_pooler:
            self.pooler = Linear(cfg.hidden_size, cfg.hidden_size)
        if cfg.has_mlm_head:
            self.predictions = MLMHead(cfg)
        self.order_head = order_head_name(cfg.family) if cfg.has_order_head else None
        if self.order_head:
            self.add_module(self.order_head, Linear(cfg.hidden_size, 2))
        if cfg.has_discriminator:
            self.discriminator = DiscriminatorHead(cfg)
        self.guard: ForwardGuard | None = None  # set by build_model / interop: the budget-checked size

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        output_attentions: bool = False,
        mlm_mask: torch.Tensor | None = None,
    ) -> EncoderOutput:
        self._check_inputs(input_ids, attention_mask, token_type_ids)
        if mlm_mask is not None and (not isinstance(mlm_mask, torch.Tensor) or mlm_mask.dtype != torch.bool
                                     or mlm_mask.shape != input_ids.shape):
            raise ValueError(f"mlm_mask must be a bool tensor of the same shape as input_ids {tuple(input_ids.shape)}")
        args = (input_ids, attention_mask, token_type_ids, output_hidden_states, output_attentions, mlm_mask)
        if self.guard is None:
            return self._forward(*args)
        keeps_graph = torch.is_grad_enabled() and self.embeddings.word_embeddings.weight.requires_grad
        with self.guard.forward(tuple(input_ids.shape), output_hidden_states, output_attentions, keeps_graph):
            return self._forward(*args)

    def _forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None,
        token_type_ids: torch.Tensor | None,
        output_hidden_states: bool,
        output_attentions: bool,
        mlm_mask: torch.Tensor | None = None,
    ) -> EncoderOutput:
        project = getattr(self.encoder, "embedding_hidden_mapping_in", None)
        x = self.embeddings(input_ids, token_type_ids, project)  # (B, T, E)
        # an all-ones mask is no mask (transformers skips it too): SDPA runs its fastest kernel
        padded = attention_mask is not None and (attention_mask.device.type == "meta"
                                                 or not bool(attention_mask.all()))
        inputs = self._layer_inputs(x, attention_mask if padded else None)
        if self.positions.masks_padding and padded:  # DeBERTa zeroes the embeddings of padding tokens
            x = x * attention_mask[..., None].to(x.dtype)
        x, hidden, attns = self.encoder(x, inputs, output_hidden_states, output_attentions)
        out = EncoderOutput(last_hidden_state=x)
        if output_hidden_states:
            out.hidden_states = tuple(hidden)
        if output_attentions:
            out.attentions = tuple(attns)
        if hasattr(self, "pooler"):
            out.pooler_output = torch.tanh(self.pooler(x[:, 0]))  # (B, H)
        if hasattr(self, "predictions"):
            shown = x if mlm_mask is None else x[mlm_mask]  # (B, T, H) or (N, H)
            out.prediction_logits = self.predictions(shown, self.embeddings.word_embeddings.weight)
        if self.order_head:
            out.order_logits = getattr(self, self.order_head)(out.pooler_output)  # (B, 2)
        if hasattr(self, "discriminator"):
            out.discriminator_logits = self.discriminator(x)  # (B, T)
        return out

    def _layer_inputs(self, x: torch.Tensor, attention_mask: torch.Tensor | None) -> LayerInputs:
        """The additive masks (0 where attended, the dtype's most negative value elsewhere) and the position
        scheme's inputs of this input: transformers' masks, i.e. keys that are padding masked; local layers also
        mask keys further than local_window / 2 from the query (ModernBERT); DeBERTa also masks every key of a
        padding query."""
        cfg = self.config
        T, device, dtype = x.shape[1], x.device, x.dtype
        lowest = torch.finfo(dtype).min
        out = LayerInputs()
        keep = None
        if attention_mask is not None:
            if self.positions.masks_padding:
                keep = (attention_mask[:, None, None, :].bool() & attention_mask[:, None, :, None].bool()).to(dtype)
            else:
                keep = attention_mask[:, None, None, :].to(dtype)  # (B, 1, 1, T)
            out.mask = (1.0 - keep) * lowest
        out.local_mask = out.mask
        half = cfg.local_window // 2
        if cfg.local_layers and half < T - 1:
            ids = torch.arange(T, device=device)
            window = ((ids[:, None] - ids[None, :]).abs() <= half).to(dtype)  # (T, T)
            both = window if keep is None else window * keep
            out.local_mask = (1.0 - both) * lowest
            if out.local_mask.dim() == 2:
                out.local_mask = out.local_mask[None, None]
        table = self.embeddings.relative_table()
        out.pos = out.local_pos = self.positions.inputs(T, device, dtype, table, local=False)
        if cfg.local_layers and self.positions.rotary and cfg.local_rope_theta != cfg.rope_theta:
            out.local_pos = self.positions.inputs(T, device, dtype, table, local=True)
        return out

    def _check_inputs(
        self, ids: torch.Tensor, mask: torch.Tensor | None, types: torch.Tensor | None
    ) -> None:
        cfg = self.config
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype not in (torch.long, torch.int):
            raise ValueError("input_ids must be an integer tensor of shape (batch, seq_len)")
        if ids.shape[0] < 1 or ids.shape[1] < 1:
            raise ValueError(f"input_ids must hold at least one token, got shape {tuple(ids.shape)}")
        check_seq_len(cfg, ids.shape[1])
        for name, t in (("attention_mask", mask), ("token_type_ids", types)):
            if t is not None and (not isinstance(t, torch.Tensor) or t.shape != ids.shape):
                raise ValueError(f"{name} must be a tensor of the same shape as input_ids {tuple(ids.shape)}")
        _check_range("input_ids", ids, cfg.vocab_size, "vocab_size")
        if types is not None:
            if not cfg.type_vocab_size:
                raise ValueError(f"token_type_ids must be None: {cfg.label} has no token-type table "
                                 "(type_vocab_size 0)")
            _check_range("token_type_ids", types, cfg.type_vocab_size, "type_vocab_size")


def _check_range(name: str, t: torch.Tensor, n: int, field: str) -> None:
    if t.is_floating_point():
        raise ValueError(f"{name} must be an integer tensor")
    if t.device.type == "meta" or t.numel() == 0:
        return
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{name} must lie in 0..{n - 1} ({field}={n}), got values {lo}..{hi}")


# ----------------------------------------------------------------------------- memory budget
# The budget lives in albert_core.live.budget (one ledger per process); these names stay importable from here.
def dtype_name(dtype: torch.dtype | str) -> str:
    """torch.float32 / 'fp32' -> 'fp32' (the names of config.DTYPE_BYTES)."""
    return budget.dtype_name(dtype)


# ----------------------------------------------------------------------------- building
def build_model(
    cfg: ModelConfig,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    *,
    batch: int = 1,
    seq_len: int | None = None,
    budget_bytes: int | None = None,
    seed: int = 0,
    wait_s: float = 0.0,
    init_std: float = INIT_STD,
) -> EncoderModel:
    """The live model of ``cfg`` in eval mode.

    On the meta device any size builds at once (shapes only, nothing allocated, no budget check).
    On a real device the bytes of the weights plus one forward pass at (batch, seq_len) are checked
    against the memory budget first (MemoryBudgetError above it); weights are then initialised
    deterministically from ``seed`` as transformers does (normal(0, ``init_std``, default transformers'
    0.02), norms ones/zeros, biases zero), and the model refuses inputs larger than (batch, seq_len).
    ``seq_len`` defaults to 128, or the position table's length if that is shorter.

    Without ``budget_bytes`` the bytes are also reserved in the process-wide ledger
    (`albert_core.live.budget.PROCESS_BUDGET`): the weights for the model's lifetime, each forward pass's
    working set while it runs; when other models or runs hold them, this waits up to ``wait_s``
    seconds and then raises BusyError. An explicit ``budget_bytes`` is a caller-managed budget.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    name = dtype_name(dtype)
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be a torch device such as 'cpu' or 'meta', got {device!r}") from None
    model = EncoderModel(cfg)  # on the meta device, see Linear
    if name != "fp32":
        model = model.to(TORCH_DTYPES[name])
    if device.type == "meta":
        return model.eval()
    seq_len = default_seq_len(cfg) if seq_len is None else seq_len
    check = check_budget(cfg, batch, seq_len, name, budget_bytes=budget_bytes, device=device)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    # With the process budget (no budget_bytes), the weights are reserved in its ledger for as long as
    # the model lives, and each forward pass reserves its working set while it runs.
    ledger = budget.PROCESS_BUDGET if budget_bytes is None else None
    weights = budget.weight_bytes(cfg, name)
    what = f"building {cfg.label}"
    held = ledger.reserve(weights + INIT_SCRATCH_BYTES, what, wait_s=wait_s) if ledger else None
    try:
        model.to_empty(device=device)
        init_weights(model, seed, init_std)
    except (RuntimeError, AssertionError) as exc:  # e.g. no CUDA in this torch build
        if held:
            held.release()
        raise ValueError(f"device {str(device)!r} is not available: {str(exc)[:200]}") from None
    if held:  # the scratch buffer is gone; the weights stay reserved while the model lives
        held.shrink(weights).hold_until_freed(model)
    model.guard = ForwardGuard(cfg, batch, seq_len, name, device.type, check.budget, check.estimate,
                               ledger=ledger, wait_s=wait_s)
    return model.eval()


def default_seq_len(cfg: ModelConfig) -> int:
    return min(128, cfg.max_position_embeddings)


@torch.no_grad()
def init_weights(model: nn.Module, seed: int = 0, std: float = INIT_STD) -> None:
    """transformers' initialisation, drawn in float32 on the CPU so it is the same on every device
    and dtype: weights normal(0, ``std``) (transformers: 0.02), biases zero, norm weights (LayerNorm, RMSNorm) one,
    a LoRA's A normal and its B zero.

    Drawn in place, INIT_CHUNK elements at a time (fp32 CPU weights directly into the parameter,
    others through one fp32 scratch buffer of INIT_CHUNK elements), so the only memory beyond the
    weights is that buffer. The values equal one draw per parameter (torch's CPU normal_ consumes
    the generator element by element; chunks stay multiples of 16, the last at least 16 long)."""
    gen = torch.Generator().manual_seed(seed)
    scratch: torch.Tensor | None = None
    norm_weights = {id(m.weight) for m in model.modules() if isinstance(m, NORMS) and m.weight is not None}
    for name, p in model.named_parameters():
        if id(p) in norm_weights:
            p.fill_(1.0)
            continue
        if name.endswith("bias") or (name.startswith("encoder.lora.") and name.endswith(".B")):
            p.zero_()  # biases, and a LoRA's B: a new LoRA changes nothing (LoRA's own initialisation)
            continue
        flat = p.view(-1)
        direct = p.dtype == torch.float32 and p.device.type == "cpu"
        start, n = 0, flat.numel()
        while start < n:
            stop = min(n, start + INIT_CHUNK)
            if n - stop < 16:
                stop = n  # the tail joins this chunk (the last 16-element block of a draw is special)
            if direct:
                flat[start:stop].normal_(0.0, std, generator=gen)
            else:
                if scratch is None:
                    scratch = torch.empty(INIT_SCRATCH_BYTES // 4)
                flat[start:stop].copy_(scratch[: stop - start].normal_(0.0, std, generator=gen))
            start = stop
