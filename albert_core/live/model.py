"""The live PyTorch encoder: BERT and ALBERT layouts, every sharing mode, the three heads.

One module per architectural part, named exactly as `count_params` names its components
(docs/architecture.md), so `component_of(name)` of every parameter is a component of the breakdown.
The model serves inference and analysis (the Live model and Paper pages) and is the model the lab trains
(`albert_core.lab.trainer`, MLM + SOP/NSP). There is no dropout anywhere: outputs equal transformers'
models in eval mode, and training runs without dropout (as ALBERT pretrains). Attention runs through
`scaled_dot_product_attention` with one fused Q/K/V projection; when attention maps are requested they
are computed explicitly instead.

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

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = fastpath.EAGER_ACT  # gelu: erf; gelu_new: tanh


@dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H)
    prediction_logits: torch.Tensor | None = None  # (B, T, V); (N, V) for the N positions of an mlm_mask
    order_logits: torch.Tensor | None = None  # (B, 2): SOP for ALBERT, NSP for BERT
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L*K + 1 tensors (B, T, H), as transformers
    attentions: tuple[torch.Tensor, ...] | None = None  # L*K tensors (B, nh, T, T)


# ----------------------------------------------------------------------------- modules
# The model is always created on the meta device and then either left there (shapes only) or given
# real storage and initialised once by `build_model` / filled by `from_hf`: torch's own per-layer
# initialisation would be wasted work (seconds for the deepest configs), so these skip it.
class Linear(nn.Linear):
    def __init__(self, in_features: int, out_features: int):
        super().__init__(in_features, out_features, device="meta")

    def reset_parameters(self) -> None:
        pass


class LayerNorm(nn.LayerNorm):
    def __init__(self, n: int, eps: float):
        super().__init__(n, eps=eps, device="meta")

    def reset_parameters(self) -> None:
        pass


class Embedding(nn.Embedding):
    def __init__(self, num: int, dim: int):
        super().__init__(num, dim, device="meta")

    def reset_parameters(self) -> None:
        pass


class Embeddings(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        E = cfg.embedding_size
        self.word_embeddings = Embedding(cfg.vocab_size, E)
        self.position_embeddings = Embedding(cfg.max_position_embeddings, E)
        self.token_type_embeddings = Embedding(cfg.type_vocab_size, E)
        self.LayerNorm = LayerNorm(E, eps=cfg.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        T = input_ids.shape[1]
        x = self.word_embeddings(input_ids)  # (B, T, E)
        if token_type_ids is None:
            x = x + self.token_type_embeddings.weight[0]  # transformers' default: all type 0
        else:
            x = x + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings.weight[:T]  # (T, E) broadcast over the batch
        return self.LayerNorm(x)


# The linears run oneDNN's fused kernel at inference where a one-time probe measured it faster on this
# machine, eager torch otherwise (`albert_core.live.fastpath`).
linear, residual_linear = fastpath.linear, fastpath.residual_linear


class Attention(nn.Module):
    """Post-LN self-attention block: LayerNorm(x + dense(attention(x)))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H = cfg.hidden_size
        self.n_head = cfg.num_heads
        self.qkv = Linear(H, 3 * H)  # Q, K and V in one matmul
        self.dense = Linear(H, H)
        self.LayerNorm = LayerNorm(H, eps=cfg.layer_norm_eps)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, T, H = x.shape
        hs = H // self.n_head
        # (B, T, 3H) -> 3 x (B, nh, T, hs)
        q, k, v = linear(x, self.qkv).view(B, T, 3, self.n_head, hs).permute(2, 0, 3, 1, 4).unbind(0)
        att = None
        if need_weights:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, T)
            if mask is not None:
                att = att + mask
            att = att.softmax(dim=-1)
            y = att @ v  # (B, nh, T, hs)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, H)  # (B, T, H)
        return self.LayerNorm(residual_linear(x, self.dense, y)), att


class FeedForward(nn.Module):
    """Post-LN feed-forward block: LayerNorm(x + ffn_output(act(ffn(x))))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, inner = cfg.hidden_size, cfg.intermediate_size
        self.act = cfg.hidden_act
        self.ffn = Linear(H, inner)
        self.ffn_output = Linear(inner, H)
        self.LayerNorm = LayerNorm(H, eps=cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(residual_linear(x, self.ffn_output, linear(x, self.ffn, self.act)))  # (B, T, H)


class Encoder(nn.Module):
    """L layers; layer i runs attention copy set a(i) and FFN copy set f(i), each K blocks deep.

    a(i) / f(i) is the layer's group when that block is shared (G contiguous runs of layers, as
    transformers' ALBERT) and the layer itself when it is not.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.is_factorized:
            self.embedding_hidden_mapping_in = Linear(cfg.embedding_size, cfg.hidden_size)
        K = cfg.inner_group_num
        n_att = cfg.attention_copies // K
        n_ffn = cfg.ffn_copies // K
        self.attention = nn.ModuleList(
            nn.ModuleList(Attention(cfg) for _ in range(K)) for _ in range(n_att)
        )
        self.ffn = nn.ModuleList(nn.ModuleList(FeedForward(cfg) for _ in range(K)) for _ in range(n_ffn))
        self.plan = [
            (cfg.block_index(i, cfg.attention_shared), cfg.block_index(i, cfg.ffn_shared))
            for i in range(cfg.num_layers)
        ]

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, keep_hidden: bool, keep_attn: bool
    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        if hasattr(self, "embedding_hidden_mapping_in"):
            x = self.embedding_hidden_mapping_in(x)  # (B, T, E) -> (B, T, H)
        hidden = [x] if keep_hidden else []
        attns: list[torch.Tensor] = []
        for a, f in self.plan:
            for att_block, ffn_block in zip(self.attention[a], self.ffn[f], strict=True):
                x, w = att_block(x, mask, keep_attn)
                x = ffn_block(x)
                if keep_hidden:
                    hidden.append(x)
                if w is not None:
                    attns.append(w)
        return x, hidden, attns


class MLMHead(nn.Module):
    """dense -> act -> LayerNorm -> decoder (tied to the word embeddings unless untied) + bias."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        E = cfg.embedding_size
        self.act = ACTIVATIONS[cfg.hidden_act]
        self.dense = Linear(cfg.hidden_size, E)  # BERT: H -> H (E == H)
        self.LayerNorm = LayerNorm(E, eps=cfg.layer_norm_eps)
        self.bias = nn.Parameter(torch.empty(cfg.vocab_size, device="meta"))
        if not cfg.tie_word_embeddings:
            # transformers unties the decoder's bias along with its weight; `bias` then stays unused
            self.decoder = Linear(E, cfg.vocab_size)

    def forward(self, x: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        h = self.LayerNorm(self.act(self.dense(x)))  # (B, T, E)
        if hasattr(self, "decoder"):
            return self.decoder(h)  # (B, T, V)
        return F.linear(h, word_embeddings, self.bias)  # (B, T, V)


class EncoderModel(nn.Module):
    """A BERT- or ALBERT-style encoder with the heads of ``cfg.head``; no dropout (inference and training).

    ``forward(input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False,
    output_attentions=False, mlm_mask=None) -> EncoderOutput``. ``attention_mask`` is 1 for tokens to attend to
    and 0 for padding, turned into transformers' additive mask (a fully masked row attends
    uniformly, as transformers' eager attention does). ``mlm_mask`` (bool, shape of ``input_ids``) asks
    the MLM head for the masked positions only, ``prediction_logits`` then (N, V) in row-major order:
    what the pretraining loss reads, as the papers' own code gathers ``masked_lm_positions``, without
    the vocabulary-wide logits at every other position. Create it with `build_model` or
    `interop.from_hf`: constructed directly it has shapes only (meta device).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.encoder = Encoder(cfg)
        if cfg.has_pooler:
            self.pooler = Linear(cfg.hidden_size, cfg.hidden_size)
        if cfg.has_mlm_head:
            self.predictions = MLMHead(cfg)
        self.order_head = order_head_name(cfg.family) if cfg.has_order_head else None
        if self.order_head:
            self.add_module(self.order_head, Linear(cfg.hidden_size, 2))
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
        keeps_graph = torch.is_grad_enabled() and self.embeddings.LayerNorm.weight.requires_grad
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
        x = self.embeddings(input_ids, token_type_ids)  # (B, T, E)
        mask = None
        # an all-ones mask is no mask (transformers skips it too): SDPA runs its fastest kernel
        if attention_mask is not None and (attention_mask.device.type == "meta" or not bool(attention_mask.all())):
            # (B, 1, 1, T): 0 where attended, the dtype's most negative value on padding
            keep = attention_mask[:, None, None, :].to(x.dtype)
            mask = (1.0 - keep) * torch.finfo(x.dtype).min
        x, hidden, attns = self.encoder(x, mask, output_hidden_states, output_attentions)
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
    0.02), LayerNorm ones/zeros, biases zero), and the model refuses inputs larger than (batch, seq_len).
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
    and dtype: weights normal(0, ``std``) (transformers: 0.02), biases zero, LayerNorm weights one.

    Drawn in place, INIT_CHUNK elements at a time (fp32 CPU weights directly into the parameter,
    others through one fp32 scratch buffer of INIT_CHUNK elements), so the only memory beyond the
    weights is that buffer. The values equal one draw per parameter (torch's CPU normal_ consumes
    the generator element by element; chunks stay multiples of 16, the last at least 16 long)."""
    gen = torch.Generator().manual_seed(seed)
    scratch: torch.Tensor | None = None
    for name, p in model.named_parameters():
        if name.endswith("LayerNorm.weight"):
            p.fill_(1.0)
            continue
        if name.endswith("bias"):
            p.zero_()
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
