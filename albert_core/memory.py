"""Memory of a BERT- or ALBERT-style encoder: weights, gradients, optimizer states, activations.

Weights, gradients and optimizer states are exact (parameter count times bytes per element).
Activations are an analytic estimate written as plain arithmetic on the config's numbers, so that
`activation_bytes_terms` also runs on numpy int64 columns of many configs (`albert_core.sweeps`).

- training=True: the bytes transformers' eager model (train() mode) saves for backward, tensor by
  tensor, including the MLM loss's log-softmax (a training step computes it; the B*S*V logits
  themselves are an output, not saved). With device="cpu" it equals the unique storages measured
  with `torch.autograd.graph.saved_tensors_hooks` (the test allows 10%); device="cuda" (default)
  differs only in dropout masks (1-byte bools there, activation dtype on the CPU) and LayerNorm
  statistics (fp32 there). Hidden states / attention maps kept as outputs are not included.
- training=False: a conservative estimate of the peak forward working set (no autograd graph),
  an upper bound of the live tensor bytes and of the RSS growth of eager forward passes on the
  CPU (measured 1.5-1.8x the RSS growth for base/large shapes; see `_inference_terms`).

This module imports neither torch nor transformers.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from albert_core.config import ModelConfig
from albert_core.params import count_params
from albert_core.workload import DTYPE_BYTES, OPTIMIZERS, Workload, check_seq_len

# Optimizer states per trainable parameter, each in the weights' dtype (as torch keeps them).
# The scalar `step` tensors Adam/AdamW keep per parameter tensor are not counted (a few bytes each).
OPTIMIZER_STATES = {"none": 0, "sgd": 1, "adam": 2, "adamw": 2}
assert set(OPTIMIZER_STATES) == set(OPTIMIZERS)

# Tensors an activation function saves for backward per element of the FFN intermediate, counting
# the activation's output (the input saved by the next Linear / LayerNorm):
# transformers' gelu_new is written in Python (pow, tanh, two products): input, tanh output,
# 0.5*x and 1+tanh, plus the output; torch's gelu saves its input; relu saves only its output.
ACT_SAVED = {"gelu_new": 5, "gelu": 2, "relu": 1}

# Family defaults of cfg.to_hf() (hidden and attention-probability dropout).
DEFAULT_DROPOUT = {"albert": 0.0, "bert": 0.1}
DEVICES = ("cuda", "cpu")
INDEX_BYTES = 8  # int64 token ids / labels


def _max(a: Any, b: Any) -> Any:
    """Element-wise max of ints or numpy int arrays without importing numpy."""
    return (a + b + abs(a - b)) // 2


def activation_bytes_terms(
    c: Any,
    batch: Any,
    seq_len: Any,
    bytes_per_el: int,
    training: bool,
    dropout: float,
    *,
    device: str = "cuda",
) -> dict[str, Any]:
    """Activation bytes by group (``embeddings``, ``encoder``, ``heads``); their sum is the estimate.

    ``c`` is a ModelConfig or anything with the same fields and properties; its numbers, ``batch``
    and ``seq_len`` may be numpy int64 arrays (family, head and hidden_act stay scalars). With
    Python ints in, Python ints come out. ``dropout`` is one scalar for every dropout layer.
    ``device`` (training only) changes what dropout masks and LayerNorm statistics cost: "cuda"
    keeps bool masks (1 byte) and fp32 statistics, the CPU keeps both in the activation dtype.
    """
    V, E, H, inner = c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size
    B, S, b = batch, seq_len, bytes_per_el
    N = B * S  # tokens
    scores = B * c.num_heads * S * S  # one (B, heads, S, S) tensor
    act = ACT_SAVED[c.hidden_act]
    E_head = E if c.is_factorized else H  # MLM transform width (BERT's transform is H -> H)
    if not training:
        return _inference_terms(c, N, scores, b, E_head)

    m = (1 if device == "cuda" else b) if dropout > 0 else 0  # p == 0: torch saves no mask
    stats = 4 if device == "cuda" else b  # LayerNorm mean and rstd per row (fp32 on CUDA)

    def layer_norm(width: Any) -> Any:  # input plus mean and rstd
        return N * width * b + 2 * N * stats

    # Embeddings: token ids (word lookup), gathered token-type ids (S int64), LayerNorm, dropout
    # mask; ALBERT's projection saves its E-wide input.
    emb = N * INDEX_BYTES + S * INDEX_BYTES + layer_norm(E) + N * E * m
    if c.is_factorized:
        emb += N * E * b

    # One executed layer: Q/K/V input, Q, K, V, softmax output, context (dense input), the two
    # LayerNorm inputs, the FFN input, the activation's tensors; with dropout the masks and the
    # dropped probabilities (the input of probs @ V).
    ffn_drop = 0 if c.family == "albert" else N * H * m  # ALBERT has no dropout after ffn_output
    layer = (
        N * H * b * 6
        + scores * b
        + 2 * layer_norm(H)
        + N * inner * b * act
        + N * H * m
        + ffn_drop
    )
    if dropout > 0:
        layer += scores * (m + b)
    enc = c.executed_layers * layer

    # Heads. The last hidden state is saved by the pooler (a view of it) or the MLM transform.
    heads = N * H * b
    if c.has_pooler:
        heads += B * H * b  # tanh output
    if c.has_mlm_head:
        # transform: activation tensors, LayerNorm, decoder input; loss: log-softmax (B*S*V) + labels
        heads += N * E_head * b * act + 2 * N * stats + N * E_head * b
        heads += N * V * b + N * INDEX_BYTES + b  # (+ the loss's scalar total weight)
    if c.has_order_head:
        heads += B * 2 * b + B * INDEX_BYTES + b  # order loss: log-softmax + labels
        if c.family == "albert" and dropout > 0:
            heads += B * H * (m + b)  # SOP dropout: mask and the classifier's input
    return {"embeddings": emb, "encoder": enc, "heads": heads}


def _inference_terms(c: Any, N: Any, scores: Any, b: int, E_head: Any) -> dict[str, Any]:
    """Peak forward working set, no autograd graph: an upper estimate of CPU memory growth.

    Summed rather than maxed over stages, so it bounds both the live tensor bytes and the process's
    RSS growth measured on transformers' eager models (see the module docstring):
    - the residual stream and LayerNorm temporaries of a layer (6 x B*S*H);
    - the larger of attention (Q, K, V, contiguous copies for the batched matmul, the context: 7 x
      B*S*H, plus three (B, heads, S, S) tensors: raw scores, scaled scores, softmax output) and the
      FFN (B*S*I tensors: input, output and, for the Python gelu_new, three temporaries);
    - scratch the CPU matmul kernels may take to repack the largest weight matrix;
    - the MLM head's transform output and the B*S*V logits (the model's output, so they stay);
    - a quarter on top for the allocator (measured RSS growth exceeds live tensor bytes by up to
      ~30%, and varies by ~10% from run to run).
    """
    H, inner, V = c.hidden_size, c.intermediate_size, c.vocab_size
    resident = 6 * N * H * b
    attention = 7 * N * H * b + 3 * scores * b
    ffn = (5 if c.hidden_act == "gelu_new" else 3) * N * inner * b + N * H * b
    weight = H * inner
    heads = 0
    if c.has_mlm_head:
        heads = (N * V + 2 * N * E_head) * b
        weight = _max(weight, V * E_head)
    emb = N * (INDEX_BYTES + 3 * c.embedding_size * b)
    encoder = resident + _max(attention, ffn) + weight * b
    return {k: v * 5 // 4 for k, v in (("embeddings", emb), ("encoder", encoder), ("heads", heads))}


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes for one configuration and workload. ``exact`` says which figures are exact."""

    weights: int
    gradients: int
    optimizer: int
    activations: int
    activation_groups: dict[str, int]
    dtype: str
    training: bool

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def exact(self) -> dict[str, bool]:
        return {"weights": True, "gradients": True, "optimizer": True, "activations": False}

    @property
    def note(self) -> str:
        what = (
            "activations saved for backward (transformers eager model, train mode)"
            if self.training
            else "peak forward working set of activations"
        )
        return f"Weights, gradients and optimizer states are exact; {what} is an estimate."

    def as_dict(self) -> dict[str, int]:
        """Bytes per kind plus the total, in stacking order."""
        out = {f.name: getattr(self, f.name) for f in fields(self)[:4]}
        out["total"] = self.total
        return out

    def to_frame(self):
        """A pandas DataFrame (kind, bytes, exact) for stacked bars; total not included."""
        import pandas as pd

        kinds = ("weights", "gradients", "optimizer", "activations")
        return pd.DataFrame(
            {
                "kind": list(kinds),
                "bytes": [getattr(self, k) for k in kinds],
                "exact": [self.exact[k] for k in kinds],
            }
        )


def estimate_memory(
    cfg: ModelConfig,
    batch: int = 8,
    seq_len: int = 128,
    dtype: str = "fp32",
    optimizer: str = "adamw",
    training: bool = True,
    *,
    dropout: float | None = None,
    device: str = "cuda",
) -> MemoryEstimate:
    """Memory of ``cfg`` for a batch of ``batch`` sequences of ``seq_len`` tokens.

    Weights: parameters (tied weights once) times the dtype's bytes. Gradients (training only): the
    same. Optimizer states in the weights' dtype: sgd (with momentum) 1, adam / adamw 2 per
    parameter; torch's scalar ``step`` tensors are left out. These three are exact.
    Activations are an estimate (see the module docstring); int8 weights are inference-only and
    their activations are counted in fp32 (dynamic quantization computes in float).
    ``dropout`` (every dropout layer) defaults to the family default of ``cfg.to_hf()``: BERT 0.1,
    ALBERT 0.0 (to_hf leaves ALBERT's SOP classifier dropout at transformers' 0.1, a B*H mask left
    out here). ``device``: "cuda" (default) or "cpu", see `activation_bytes_terms`.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    Workload(batch=batch, seq_len=seq_len, dtype=dtype, optimizer=optimizer)  # validates all four
    check_seq_len(cfg, seq_len)
    if not isinstance(training, bool):
        raise ValueError(f"training must be True or False, got {training!r}")
    if training and dtype == "int8":
        raise ValueError("dtype 'int8' is inference-only: training needs fp32, fp16 or bf16 weights")
    if dropout is None:
        dropout = DEFAULT_DROPOUT[cfg.family]
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
        raise ValueError(f"dropout must be a number in [0, 1), got {dropout!r}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {device!r}")

    nbytes = DTYPE_BYTES[dtype]
    params = count_params(cfg).total
    act_bytes = DTYPE_BYTES["fp32"] if dtype == "int8" else nbytes
    groups = activation_bytes_terms(cfg, batch, seq_len, act_bytes, training, dropout, device=device)
    groups = {k: int(v) for k, v in groups.items()}
    return MemoryEstimate(
        weights=params * nbytes,
        gradients=params * nbytes if training else 0,
        optimizer=params * nbytes * OPTIMIZER_STATES[optimizer] if training else 0,
        activations=sum(groups.values()),
        activation_groups=groups,
        dtype=dtype,
        training=training,
    )
