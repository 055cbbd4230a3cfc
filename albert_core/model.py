"""The live PyTorch encoder: BERT and ALBERT layouts, every sharing mode, the three heads.

One module per architectural part, named exactly as `count_params` names its components
(docs/architecture.md), so `component_of(name)` of every parameter is a component of the breakdown.
The model is for inference and analysis: there is no dropout anywhere (outputs equal transformers'
models in eval mode). Attention runs through `scaled_dot_product_attention` with one fused Q/K/V
projection; when attention maps are requested they are computed explicitly instead.

Nothing big is allocated without a budget check: `build_model` on a real device first estimates the
bytes of the weights plus one forward pass and refuses above the memory budget (`check_budget`), and
the built model refuses inputs larger than what that check covered.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from albert_core import fastpath
from albert_core.config import DTYPE_BYTES, ModelConfig, Workload, check_seq_len
from albert_core.format import fmt_bytes
from albert_core.memory import estimate_memory
from albert_core.params import order_head_name

BUDGET_ENV = "ALBERT_EXPLORER_MEMORY_BUDGET"
DEFAULT_BUDGET = 2**30  # 1 GiB
INIT_STD = 0.02  # transformers' initializer_range for BERT and ALBERT

TORCH_DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = fastpath.EAGER_ACT  # gelu: erf; gelu_new: tanh


@dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H)
    prediction_logits: torch.Tensor | None = None  # (B, T, V)
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
# machine, eager torch otherwise (`albert_core.fastpath`).
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
    """A BERT- or ALBERT-style encoder with the heads of ``cfg.head``; inference only (no dropout).

    ``forward(input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False,
    output_attentions=False) -> EncoderOutput``. ``attention_mask`` is 1 for tokens to attend to
    and 0 for padding, turned into transformers' additive mask (a fully masked row attends
    uniformly, as transformers' eager attention does). Create it with `build_model` or
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
    ) -> EncoderOutput:
        self._check_inputs(input_ids, attention_mask, token_type_ids)
        if self.guard is not None:
            keeps_graph = torch.is_grad_enabled() and self.embeddings.LayerNorm.weight.requires_grad
            self.guard.check(input_ids.shape, output_hidden_states, output_attentions, keeps_graph)
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
            out.prediction_logits = self.predictions(x, self.embeddings.word_embeddings.weight)
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
class MemoryBudgetError(ValueError):
    """A model or input whose estimated memory exceeds the budget."""


_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_BUDGET_RE = re.compile(r"(\d+(?:\.\d+)?) ?([a-z]*)")


def parse_bytes(text: str, name: str = BUDGET_ENV) -> int:
    """'1073741824', '512MiB', '2GiB', '1GB', '1.5 GiB' -> bytes; anything else -> ValueError naming ``name``."""
    m = _BUDGET_RE.fullmatch(text.strip().lower())
    if not m or m.group(2) not in _UNITS:
        raise ValueError(
            f"{name} must be a number of bytes, optionally with a unit (e.g. 536870912, 512MiB, 2GiB, 1GB); "
            f"got {text[:40]!r}"
        )
    if "." in m.group(1) and _UNITS[m.group(2)] == 1:
        raise ValueError(f"{name} must be a whole number of bytes, got {text[:40]!r}")
    value = int(float(m.group(1)) * _UNITS[m.group(2)])
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {text[:40]!r}")
    return value


def memory_budget(budget_bytes: int | None = None) -> int:
    """The budget in bytes: the argument, else $ALBERT_EXPLORER_MEMORY_BUDGET, else 1 GiB."""
    if budget_bytes is not None:
        if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes <= 0:
            raise ValueError(f"budget_bytes must be a positive whole number of bytes, got {budget_bytes!r}")
        return budget_bytes
    raw = os.environ.get(BUDGET_ENV)
    return DEFAULT_BUDGET if raw is None or not raw.strip() else parse_bytes(raw)


def dtype_name(dtype: torch.dtype | str) -> str:
    """torch.float32 / 'fp32' -> 'fp32' (the names of config.DTYPE_BYTES)."""
    for name, t in TORCH_DTYPES.items():
        if dtype in (t, name):
            return name
    raise ValueError(f"dtype must be one of {', '.join(TORCH_DTYPES)} (torch float32/float16/bfloat16), got {dtype!r}")


def _estimate(cfg: ModelConfig, batch: int, seq_len: int, dtype: str, device: str, training: bool = False) -> int:
    """Bytes of the weights plus one forward pass (with training=True: plus the activations autograd
    keeps), from `estimate_memory`; this model has no dropout."""
    kind = "cuda" if device == "cuda" else "cpu"
    est = estimate_memory(cfg, batch, seq_len, dtype, optimizer="none", training=training, dropout=0.0, device=kind)
    return int(est.total)


@dataclass(frozen=True)
class BudgetCheck:
    estimate: int  # bytes: weights + one forward pass
    budget: int  # bytes
    ok: bool
    message: str


def check_budget(
    cfg: ModelConfig,
    batch: int = 1,
    seq_len: int = 128,
    dtype: torch.dtype | str = torch.float32,
    *,
    budget_bytes: int | None = None,
    device: str | torch.device = "cpu",
    extra_bytes: int = 0,
) -> BudgetCheck:
    """Would building ``cfg`` and running one forward pass at (batch, seq_len) fit the memory budget?

    ``extra_bytes`` is added to the estimate (e.g. a second copy of the weights while loading)."""
    name = dtype_name(dtype)
    Workload(batch=batch, seq_len=seq_len, dtype=name, optimizer="none").check_fits(cfg)
    budget = memory_budget(budget_bytes)
    estimate = _estimate(cfg, batch, seq_len, name, torch.device(device).type) + extra_bytes
    ok = estimate <= budget
    what = f"{cfg.label} at batch {batch} x seq {seq_len} ({name})"
    if ok:
        message = f"{what}: about {fmt_bytes(estimate, binary=True)} of a {fmt_bytes(budget, binary=True)} budget"
    else:
        message = (
            f"{what} needs about {fmt_bytes(estimate, binary=True)} (weights + one forward pass), "
            f"over the memory budget of {fmt_bytes(budget, binary=True)}; use a smaller model, batch or "
            f"sequence, the meta device, or raise {BUDGET_ENV}"
        )
    return BudgetCheck(estimate, budget, ok, message)


@dataclass(frozen=True)
class ForwardGuard:
    """The input size a budget check covered; the model refuses anything that would allocate more."""

    cfg: ModelConfig
    batch: int
    seq_len: int
    dtype: str
    device: str
    budget: int
    estimate: int  # of weights + one forward pass at (batch, seq_len)

    def check(self, shape: torch.Size, hidden: bool, attentions: bool, keeps_graph: bool) -> None:
        batch, seq = shape
        if seq > self.seq_len or batch * seq > self.batch * self.seq_len:
            raise MemoryBudgetError(
                f"input of batch {batch} x seq {seq} is larger than this model's memory check covered "
                f"(batch {self.batch} x seq {self.seq_len}); rebuild it with "
                f"build_model(..., batch={batch}, seq_len={seq})"
            )
        extra = self._kept_bytes(batch, seq, hidden, attentions)
        if keeps_graph:  # autograd keeps every layer's activations
            extra += self._training_bytes()
        if extra and self.estimate + extra > self.budget:
            raise MemoryBudgetError(
                f"the requested outputs need about {fmt_bytes(self.estimate + extra, binary=True)} "
                f"(weights, forward pass, kept hidden states / attention maps / autograd activations), "
                f"over the memory budget of {fmt_bytes(self.budget, binary=True)}"
            )

    def _kept_bytes(self, B: int, T: int, hidden: bool, attentions: bool) -> int:
        cfg, b = self.cfg, DTYPE_BYTES[self.dtype]
        n = 0
        if hidden:
            n += (cfg.executed_layers + 1) * B * T * cfg.hidden_size
        if attentions:
            n += cfg.executed_layers * B * cfg.num_heads * T * T
        return n * b

    def _training_bytes(self) -> int:
        inference = _estimate(self.cfg, self.batch, self.seq_len, self.dtype, self.device)
        return _estimate(self.cfg, self.batch, self.seq_len, self.dtype, self.device, training=True) - inference


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
) -> EncoderModel:
    """The live model of ``cfg`` in eval mode.

    On the meta device any size builds at once (shapes only, nothing allocated, no budget check).
    On a real device the bytes of the weights plus one forward pass at (batch, seq_len) are checked
    against the memory budget first (MemoryBudgetError above it); weights are then initialised
    deterministically from ``seed`` as transformers does (normal(0, 0.02), LayerNorm ones/zeros,
    biases zero), and the model refuses inputs larger than (batch, seq_len). ``seq_len`` defaults
    to 128, or the position table's length if that is shorter.
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
    try:
        model.to_empty(device=device)
    except (RuntimeError, AssertionError) as exc:  # e.g. no CUDA in this torch build
        raise ValueError(f"device {str(device)!r} is not available: {str(exc)[:200]}") from None
    init_weights(model, seed)
    model.guard = ForwardGuard(cfg, batch, seq_len, name, device.type, check.budget, check.estimate)
    return model.eval()


def default_seq_len(cfg: ModelConfig) -> int:
    return min(128, cfg.max_position_embeddings)


@torch.no_grad()
def init_weights(model: nn.Module, seed: int = 0) -> None:
    """transformers' initialisation, drawn in float32 on the CPU so it is the same on every device
    and dtype: weights normal(0, 0.02), biases zero, LayerNorm weights one."""
    gen = torch.Generator().manual_seed(seed)
    for name, p in model.named_parameters():
        if name.endswith("LayerNorm.weight"):
            p.fill_(1.0)
        elif name.endswith("bias"):
            p.zero_()
        else:
            p.copy_(torch.empty(p.shape).normal_(0.0, INIT_STD, generator=gen))
