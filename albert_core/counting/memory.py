"""Memory of a BERT- or ALBERT-style encoder: weights, gradients, optimizer states, activations.

Weights, gradients and optimizer states are exact: the bytes of the tensors torch holds after one
optimizer step (`state_bytes`). Parameters that take no part in the loss get no gradient and no
optimizer state: transformers 5 keeps ``predictions.bias`` [V] when the MLM decoder is untied but
adds the decoder's own bias instead (`unused_params`).

Precision (``precision``, with a 16-bit ``dtype``):
- "pure": everything in ``dtype`` (the model cast with ``.to(dtype)`` and torch's optimizer on it:
  its states take the weights' dtype). fp32 AdamW: 4 + 4 + 8 = 16 bytes per parameter, bf16 8.
- "mixed": the model (weights, gradients, activations) in ``dtype`` plus an fp32 master copy of
  every parameter that the optimizer updates, with fp32 optimizer states (the mixed-precision
  recipe of Micikevicius et al. 2018 and ZeRO's accounting, Rajbhandari et al. 2020): AdamW
  2 + 2 + (4 + 8) = 16 bytes per parameter, the master copy counted with the optimizer states.
  The fp32 copies of the gradients that the optimizer step reads are transient and not counted
  (training-memory calculators that keep a persistent fp32 gradient buffer count 4 bytes more per
  parameter). torch.autocast on an fp32 model is not this recipe: its weights, gradients and states
  are fp32 (``dtype="fp32"``), only some activations are 16-bit.

Activations are an analytic estimate written as plain arithmetic on the config's numbers, so that
`activation_bytes_terms` also runs on numpy int64 columns of many configs (`albert_core.counting.sweeps`).

- training=True: the bytes transformers' eager model (train() mode) saves for backward, tensor by
  tensor, including the MLM loss's log-softmax (a training step computes it; the B*S*V logits
  themselves are an output, not saved). With device="cpu" it equals the unique storages measured
  with `torch.autograd.graph.saved_tensors_hooks` (the test allows 10%); device="cuda" (default)
  differs only in dropout masks (1-byte bools there, activation dtype on the CPU) and LayerNorm
  statistics (fp32 there). Hidden states / attention maps kept as outputs are not included.
- training=True, checkpointing=True (gradient checkpointing of every executed encoder layer, as
  transformers' ``gradient_checkpointing_enable()`` does for BERT): the input of each of the L*K
  layers is kept, plus the tensors one layer saves again while the backward recomputes it, plus the
  embeddings' and heads' saved tensors (not checkpointed). Summed, so it is an upper estimate of
  the peak (the heads' tensors are freed before the first layer is recomputed).
- training=False: a conservative estimate of the peak forward working set (no autograd graph),
  an upper bound of the live tensor bytes and of the RSS growth of eager forward passes on the
  CPU (measured 1.5-1.8x the RSS growth for base/large shapes; see `_inference_terms`).

This module imports neither torch nor transformers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from albert_core.checks import check_flag, check_number
from albert_core.configuration.config import ModelConfig, family_of
from albert_core.configuration.workload import DTYPE_BYTES, OPTIMIZERS, PRECISIONS, Workload, check_seq_len
from albert_core.counting.flops import local_attention_pairs
from albert_core.counting.params import count_params

# Optimizer states per trained parameter, each in the weights' dtype (as torch keeps them), fp32 under
# mixed precision. The scalar `step` tensors Adam/AdamW keep per parameter tensor are not counted.
OPTIMIZER_STATES = {"none": 0, "sgd": 1, "adam": 2, "adamw": 2}
assert set(OPTIMIZER_STATES) == set(OPTIMIZERS)
MASTER_BYTES = DTYPE_BYTES["fp32"]  # mixed precision: master weights and optimizer states

# Tensors an activation function saves for backward per element of the FFN intermediate, counting
# the activation's output (the input saved by the next Linear / LayerNorm):
# transformers' gelu_new is written in Python (pow, tanh, two products): input, tanh output,
# 0.5*x and 1+tanh, plus the output; torch's gelu saves its input; relu saves only its output.
ACT_SAVED = {"gelu_new": 5, "gelu": 2, "relu": 1, "silu": 2}  # silu keeps its input and (as gelu) its output

DEVICES = ("cuda", "cpu")
# the attention implementations the training estimate knows: transformers' "eager" (every matmul and the softmax
# visible) and "sdpa" (torch's scaled_dot_product_attention, transformers' default), and "windowed": eager, but
# local-attention layers run a sliding-window kernel that scores and keeps only their window's pairs (what the time
# model assumes, as `count_flops` counts them)
ATTENTIONS = ("eager", "sdpa", "windowed")
LOGSUMEXP_BYTES = 4  # SDPA's fused kernels keep one fp32 logsumexp per attention row, whatever the dtype
INDEX_BYTES = 8  # int64 token ids / labels


def _max(a: Any, b: Any) -> Any:
    """Element-wise max of ints or numpy int arrays without importing numpy."""
    return (a + b + abs(a - b)) // 2


def unused_params(c: Any) -> Any:
    """Parameters that get no gradient in a training step: the untied MLM head's ``predictions.bias`` in BERT's
    lineage (transformers 5 unties the decoder's bias together with its weight and uses that one); ELECTRA's,
    ModernBERT's and EuroBERT's decoders hold their own bias, so nothing is left unused there."""
    stray = c.has_mlm_head and not c.tie_word_embeddings and c.decoder_bias and c.separate_decoder_bias
    return c.vocab_size if stray else 0 * c.vocab_size


def state_bytes(
    params: Any, unused: Any, dtype: str, optimizer: str, training: bool, precision: str = "pure"
) -> dict[str, Any]:
    """Exact bytes of weights, gradients, optimizer states and (their part) fp32 master weights.

    ``params`` parameters of which ``unused`` get no gradient (ints or numpy arrays). See the module
    docstring for the precisions; int8 weights count 1 byte each (inference only).
    """
    nbytes = DTYPE_BYTES[dtype]
    weights = params * nbytes
    zero = 0 * weights
    if not training:
        return {"weights": weights, "gradients": zero, "optimizer": zero, "master_weights": zero}
    trained = params - unused
    states = OPTIMIZER_STATES[optimizer]
    master = zero
    if precision == "mixed" and states:
        master = params * MASTER_BYTES  # a copy of every parameter handed to the optimizer
        optimizer_bytes = master + trained * states * MASTER_BYTES
    else:
        optimizer_bytes = trained * states * nbytes
    return {"weights": weights, "gradients": trained * nbytes, "optimizer": optimizer_bytes, "master_weights": master}


def activation_bytes_terms(
    c: Any,
    batch: Any,
    seq_len: Any,
    bytes_per_el: int,
    training: bool,
    dropout: float,
    *,
    device: str = "cuda",
    checkpointing: bool = False,
    attention: str = "eager",
) -> dict[str, Any]:
    """Activation bytes by group (``embeddings``, ``encoder``, ``heads``); their sum is the estimate.

    ``c`` is a ModelConfig or anything with the same fields and properties; its numbers, ``batch``
    and ``seq_len`` may be numpy int64 arrays (family, head and hidden_act stay scalars). With
    Python ints in, Python ints come out. ``dropout`` is one scalar for every dropout layer.
    ``device`` (training only) changes what dropout masks and LayerNorm statistics cost: "cuda"
    keeps bool masks (1 byte) and fp32 statistics, the CPU keeps both in the activation dtype.
    ``checkpointing`` (training only): every executed encoder layer checkpointed, see the module
    docstring. ``attention`` (training only): "eager" keeps each layer's attention probabilities (and with
    dropout their mask and the dropped probabilities); "sdpa" runs a fused kernel that keeps one fp32
    logsumexp per attention row instead, except on the CPU with dropout > 0, where torch's SDPA takes its
    math path and saves what eager saves (both measured on the CPU; the CUDA kernels' saved tensors are
    taken from their definitions, output and logsumexp, and not measured here); "windowed" is eager but for the
    local-attention layers, which keep only their window's probabilities (a sliding-window kernel).
    """
    V, E, H, inner = c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size
    B, S, b = batch, seq_len, bytes_per_el
    N = B * S  # tokens
    scores = B * c.num_heads * S * S  # one (B, heads, S, S) tensor
    act = ACT_SAVED[c.hidden_act]
    E_head = E  # MLM transform width (BERT's transform is H -> H: E = H there)
    factorized = c.is_factorized  # a bool, or a column of them
    KV = c.kv_size
    if not training:
        return _inference_terms(c, N, scores, b, E_head)

    m = (1 if device == "cuda" else b) if dropout > 0 else 0  # p == 0: torch saves no mask
    stats = 4 if device == "cuda" else b  # LayerNorm mean and rstd per row (fp32 on CUDA)

    rms = c.norm == "rmsnorm"

    def layer_norm(width: Any) -> Any:  # input plus mean and rstd; an RMSNorm module: input, rstd, normed input
        return N * width * b * 2 + N * stats if rms else N * width * b + 2 * N * stats

    # Embeddings: token ids (word lookup), gathered token-type ids (S int64), LayerNorm, dropout
    # mask; ALBERT's projection saves its E-wide input.
    emb = N * INDEX_BYTES + S * INDEX_BYTES + N * E * m
    if c.embedding_norm:  # EuroBERT has none
        emb += layer_norm(E)
    if factorized is not False:
        emb += N * E * b * factorized

    # One executed layer: Q/K/V input, Q, K, V, softmax output, context (dense input), the two
    # LayerNorm inputs, the FFN input, the activation's tensors; with dropout the masks and the
    # dropped probabilities (the input of probs @ V).
    record = family_of(c.family)
    ffn_drop = N * H * m * record.ffn_dropout  # none after ALBERT's ffn_output
    if attention == "sdpa" and (dropout == 0 or device == "cuda"):
        probs = B * c.num_heads * S * LOGSUMEXP_BYTES  # the fused kernel's logsumexp, no probabilities
    else:
        probs = scores * b + (scores * (m + b) if dropout > 0 else 0)  # softmax output (+ mask, dropped)
    # A GLU also keeps its up projection and the gated product (estimate: the new blocks are not measured yet).
    ffn_act = N * inner * b * (act + 2 if c.ffn_kind == "glu" else act)
    # K and V as the scores' and context's matmuls read them: eager attention repeats grouped key/value heads to
    # every query head first (transformers' repeat_kv: H wide), SDPA's kernel reads them narrow
    kv_saved = KV if attention == "sdpa" else H
    layer = (
        N * H * b * 4 + 2 * N * kv_saved * b  # Q/K/V input, Q, context, FFN input; K and V
        + probs
        + 2 * layer_norm(H)
        + ffn_act
        + N * H * m
        + ffn_drop
    )
    if c.position == "relative":  # DeBERTa, measured on its eager model: per layer, the 2k-row position keys and
        # queries repeated per sequence, the content->position and position->content scores the gathers keep with
        # their int64 indices (S x S each, expanded over the batch and heads), and the keys divided by their scale;
        # once, the normed relative table and the (B, 1, S, S) bool mask every layer reads
        k2 = 2 * c.position_buckets
        layer = layer + B * (2 * k2 * H + 2 * c.num_heads * S * k2 + S * H) * b + 2 * S * S * INDEX_BYTES
        emb += k2 * H * b + 2 * k2 * stats + B * S * S
    # Checkpointing: each layer keeps only its input (one of the six B*S*H tensors above), and one
    # layer's tensors are saved again while the backward recomputes it.
    X = c.executed_layers
    enc = (X - 1) * N * H * b + layer if checkpointing else X * layer
    if not checkpointing:  # each LoRA keeps its r-wide x A^T for B's gradient (its input is its matrix's, kept above)
        for _, positions, _, _ in c.lora_terms():
            enc = enc + positions * N * c.lora_rank * b
    if attention == "windowed" and not checkpointing:  # (checkpointed: the recomputed layer may be a global one)
        local = c.executed_local_layers  # executed local layers: the pairs outside the window never exist
        outside = B * c.num_heads * (S * S - local_attention_pairs(S, c.local_window))
        enc = enc - local * (outside * b + (outside * (m + b) if dropout > 0 else 0))
    if c.norm_placement == "pre":
        enc = enc + layer_norm(H)  # the final norm after the last layer

    # Heads. The last hidden state is saved by the pooler (a view of it), the MLM transform or the discriminator's
    # dense; a bare model without a pooler keeps nothing after the encoder.
    heads = N * H * b * (c.has_pooler or c.has_mlm_head or c.has_discriminator)
    if c.has_pooler:
        heads += B * H * b  # tanh output
    if c.has_mlm_head:
        # transform: activation tensors, LayerNorm, decoder input; loss: log-softmax (B*S*V) + labels
        if c.head_transform:  # EuroBERT's head is the decoder alone
            heads += N * E_head * b * ACT_SAVED[c.transform_act] + 2 * N * stats + N * E_head * b
        heads += N * V * b + N * INDEX_BYTES + b  # (+ the loss's scalar total weight)
    if c.has_order_head:
        heads += B * 2 * b + B * INDEX_BYTES + b  # order loss: log-softmax + labels
        if record.order_dropout and dropout > 0:
            heads += B * H * (m + b)  # SOP dropout: mask and the classifier's input
    if c.has_discriminator:  # the activation's tensors (its output is the logits' input); the BCE loss
        heads += N * H * b * act + 2 * N * b
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
    """Bytes for one configuration and workload. ``exact`` says which figures are exact.

    ``optimizer`` includes ``master_weights``, the fp32 master copy of mixed precision (0 otherwise).
    """

    weights: int
    gradients: int
    optimizer: int
    activations: int
    activation_groups: dict[str, int]
    dtype: str
    training: bool
    precision: str = "pure"
    checkpointing: bool = False
    master_weights: int = 0
    attention: str = "eager"

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations

    @property
    def exact(self) -> dict[str, bool]:
        return {"weights": True, "gradients": True, "optimizer": True, "activations": False}

    @property
    def note(self) -> str:
        if not self.training:
            what = "peak forward working set of activations"
        elif self.checkpointing:
            what = "activations with gradient checkpointing (layer inputs + one recomputed layer)"
        else:
            what = f"activations saved for backward (transformers {self.attention} model, train mode)"
        states = "optimizer states (fp32 master weights included)" if self.master_weights else "optimizer states"
        return f"Weights, gradients and {states} are exact; {what} is an estimate."

    def part_labels(self) -> dict[str, str]:
        """A visitor-facing name per kind: the optimizer names its fp32 master copy, activations say
        they are an estimate."""
        from albert_core.format import fmt_bytes

        opt = "optimizer"
        if self.master_weights:
            opt = f"optimizer (incl. fp32 master copy {fmt_bytes(self.master_weights)})"
        acts = "activations (estimate, checkpointed)" if self.checkpointing else "activations (estimate)"
        return {"weights": "weights", "gradients": "gradients", "optimizer": opt, "activations": acts}

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
    precision: str = "pure",
    checkpointing: bool = False,
    dropout: float | None = None,
    device: str = "cuda",
    attention: str = "eager",
) -> MemoryEstimate:
    """Memory of ``cfg`` for a batch of ``batch`` sequences of ``seq_len`` tokens.

    Weights: parameters (tied weights once) times the dtype's bytes. Gradients (training only): the
    parameters that get one (see `unused_params`) times the same. Optimizer states: sgd (with
    momentum) 1, adam / adamw 2 per trained parameter, in the weights' dtype (``precision="pure"``)
    or in fp32 plus an fp32 master copy of every parameter (``precision="mixed"``, 16-bit ``dtype``
    only); torch's scalar ``step`` tensors are left out. These three are exact.
    Activations are an estimate (see the module docstring), in ``dtype`` for both precisions; int8
    weights are inference-only and their activations are counted in fp32 (dynamic quantization
    computes in float). ``checkpointing`` (training only): gradient checkpointing of every executed
    encoder layer, see the module docstring; its recomputation FLOPs are `count_flops(recompute=True)`.
    ``dropout`` (every dropout layer) defaults to the family default of ``config_to_hf(cfg)``: BERT 0.1,
    ALBERT 0.0 (to_hf leaves ALBERT's SOP classifier dropout at transformers' 0.1, a B*H mask left
    out here). ``device``: "cuda" (default) or "cpu"; ``attention`` (training): "eager" (default), "windowed" or
    transformers' default "sdpa"; see `activation_bytes_terms`.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    Workload(batch=batch, seq_len=seq_len, dtype=dtype, optimizer=optimizer)  # validates all four
    check_seq_len(cfg, seq_len)
    check_flag("training", training)
    if training and dtype == "int8":
        raise ValueError("dtype 'int8' is inference-only: training needs fp32, fp16 or bf16 weights")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r:.40}")
    if precision == "mixed" and dtype not in ("fp16", "bf16"):
        raise ValueError(f"precision 'mixed' needs dtype fp16 or bf16 (the compute dtype), got {dtype!r}")
    check_flag("checkpointing", checkpointing)
    if checkpointing and not training:
        raise ValueError("checkpointing applies to training only, not to inference")
    if dropout is None:
        dropout = family_of(cfg.family).dropout
    check_number("dropout", dropout, 0, 1, hi_open=True)
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {device!r}")
    if attention not in ATTENTIONS:
        raise ValueError(f"attention must be one of {', '.join(ATTENTIONS)}; got {attention!r:.40}")

    return _estimate(cfg, batch, seq_len, dtype, optimizer, training, precision, checkpointing, dropout, device,
                     attention)


def _estimate(
    cfg: ModelConfig, batch: int, seq_len: int, dtype: str, optimizer: str, training: bool, precision: str,
    checkpointing: bool, dropout: float, device: str, attention: str = "eager",
) -> MemoryEstimate:
    """`estimate_memory` on validated arguments (the batch not bounded by the workload's limit)."""
    params = count_params(cfg).total
    states = state_bytes(params, unused_params(cfg), dtype, optimizer, training, precision)
    act_bytes = DTYPE_BYTES["fp32"] if dtype == "int8" else DTYPE_BYTES[dtype]
    groups = activation_bytes_terms(
        cfg, batch, seq_len, act_bytes, training, dropout, device=device, checkpointing=checkpointing,
        attention=attention,
    )
    groups = {k: int(v) for k, v in groups.items()}
    return MemoryEstimate(
        weights=int(states["weights"]),
        gradients=int(states["gradients"]),
        optimizer=int(states["optimizer"]),
        activations=sum(groups.values()),
        activation_groups=groups,
        dtype=dtype,
        training=training,
        precision=precision,
        checkpointing=checkpointing,
        master_weights=int(states["master_weights"]),
        attention=attention,
    )


MAX_FIT_BATCH = 65_536  # the search's upper bound: "at least this many" beyond it
DEVICE_MEMORY_GB = (16, 24, 40, 80, 141)  # common accelerator sizes, decimal GB (10^9 bytes)


def _fit_totals(
    cfg: ModelConfig,
    seq_len: int,
    dtype: str = "fp32",
    optimizer: str = "adamw",
    precision: str = "pure",
    checkpointing: bool = False,
    *,
    training: bool = True,
    dropout: float | None = None,
) -> Callable[[int], int]:
    """The estimate's total as a function of the batch, for one config and workload: the arguments checked
    once (by the estimate at batch 1), each batch estimated once (a fit search asks for some several times)."""
    training = training and dtype != "int8"
    first = estimate_memory(cfg, 1, seq_len, dtype, optimizer, training, precision=precision,
                            checkpointing=checkpointing and training, dropout=dropout)  # validates the rest
    drop = family_of(cfg.family).dropout if dropout is None else dropout

    @functools.cache
    def total(batch: int) -> int:
        if batch == 1:
            return first.total
        return _estimate(cfg, batch, seq_len, dtype, optimizer, training, precision, first.checkpointing, drop,
                         "cuda").total

    return total


def largest_batches(cfg: ModelConfig, seq_len: int, device_bytes: Sequence[float], *args: Any, **kwargs: Any
                    ) -> list[tuple[int, int | None]]:
    """`max_batch_that_fits` for several device sizes, each with the estimate's total at that batch (None when
    not even one sequence fits): the estimate at each batch is made once for all the devices."""
    for size in device_bytes:
        check_number("device_bytes", size, 0, math.inf, lo_open=True)
    total = _fit_totals(cfg, seq_len, *args, **kwargs)
    out = []
    for size in device_bytes:
        batch = _largest_fitting(total, size)
        out.append((batch, total(batch) if batch else None))
    return out


def max_batch_that_fits(cfg: ModelConfig, seq_len: int, device_bytes: int, *args: Any, **kwargs: Any) -> int:
    """The largest batch B in 1..`MAX_FIT_BATCH` whose `estimate_memory(cfg, B, seq_len, ...).total`
    is at most ``device_bytes``; 0 if not even one sequence fits. An exact binary search over the
    estimate (monotonic in B); the estimate's activations are themselves an estimate, and nothing
    is reserved for the framework, the CUDA context or allocator fragmentation. int8 is inference.
    The other arguments: ``dtype="fp32", optimizer="adamw", precision="pure", checkpointing=False``,
    keywords ``training=True, dropout=None`` (as `estimate_memory`)."""
    return largest_batches(cfg, seq_len, [device_bytes], *args, **kwargs)[0][0]


def _largest_fitting(total: Callable[[int], int], device_bytes: float) -> int:
    one = total(1)
    if one > device_bytes:
        return 0
    # The estimate grows by the same bytes per sequence (activations scale with B, the rest is fixed), so
    # two evaluations point at the answer; two more confirm it is the boundary, else the binary search runs.
    step = total(2) - one
    if step > 0:
        guess = min(MAX_FIT_BATCH, 1 + int((device_bytes - one) // step))
        if total(guess) <= device_bytes and (guess == MAX_FIT_BATCH or total(guess + 1) > device_bytes):
            return guess
    lo, hi = 1, MAX_FIT_BATCH  # total(lo) fits; find the last batch that fits
    if total(hi) <= device_bytes:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if total(mid) <= device_bytes:
            lo = mid
        else:
            hi = mid
    return lo
