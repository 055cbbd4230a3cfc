"""Measurements on a live model, for the Live model and Paper pages (torch here; no streamlit).

- `measure_latency`: median / p10 / p90 wall time of a forward pass.
- `achieved_gflops`, `matmul_peak_gflops`, `peak_fraction`: analytic FLOPs per second, and that as a
  share of the best fp32 matmul throughput this machine shows in a short cached probe.
- `layer_smoothness`: the ALBERT paper's Figure 2 (L2 distance and cosine similarity between the input
  and output hidden states of every layer).
- `attention_maps`: one head's (T, T) attention weights with unique token labels for a heatmap.
- `saved_activation_bytes`: bytes autograd really saves for backward in a training-mode forward.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from albert_core.checks import check_number, check_whole_number
from albert_core.configuration.config import ModelConfig
from albert_core.live import fastpath
from albert_core.text.encoding import Encoded

__all__ = [
    "LatencyResult",
    "achieved_gflops",
    "attention_maps",
    "layer_smoothness",
    "matmul_peak_gflops",
    "measure_matmul_gflops",
    "measure_latency",
    "peak_fraction",
    "saved_activation_bytes",
]


def _model_kwargs(inputs: Any, model: Any = None) -> dict[str, Any]:
    """Model keyword arguments from an `Encoded` (for ``model``'s token types), a mapping of tensors, or an
    input_ids tensor."""
    if isinstance(inputs, Encoded):
        return inputs.tensors(None if model is None else model.config.type_vocab_size)
    if isinstance(inputs, torch.Tensor):
        return {"input_ids": inputs}
    if isinstance(inputs, Mapping) and "input_ids" in inputs:
        return dict(inputs)
    raise ValueError("inputs must be an Encoded, an input_ids tensor or a mapping with 'input_ids'")


# ----------------------------------------------------------------------------- speed
@dataclass(frozen=True)
class LatencyResult:
    median_s: float
    p10: float  # seconds, 10th percentile
    p90: float  # seconds, 90th percentile
    runs: tuple[float, ...]  # every timed run, seconds, in order


def measure_latency(
    model: torch.nn.Module, inputs: Any, n: int = 10, warmup: int = 2,
    should_stop: Callable[[], bool] | None = None,
) -> LatencyResult:
    """Wall time of `n` forward passes (after `warmup` untimed ones) under torch.inference_mode.
    ``should_stop()`` is asked before each pass; True stops with `budget.Cancelled` (e.g. the visitor
    who asked has gone)."""
    from albert_core.live.budget import Cancelled

    check_whole_number("n", n, hi=1000)
    check_whole_number("warmup", warmup, lo=0, hi=100)
    kwargs = _model_kwargs(inputs, model)
    runs = []
    with torch.inference_mode():
        for i in range(warmup + n):
            if should_stop is not None and should_stop():
                raise Cancelled(f"stopped after {i} of {warmup + n} forward passes: nobody is waiting for them")
            t0 = time.perf_counter()
            model(**kwargs)
            if i >= warmup:
                runs.append(time.perf_counter() - t0)
    q10, q90 = np.quantile(runs, [0.1, 0.9])
    return LatencyResult(statistics.median(runs), float(q10), float(q90), tuple(runs))


def achieved_gflops(cfg: ModelConfig, batch: int, seq: int, seconds: float) -> float:
    """Analytic forward FLOPs (albert_core.counting.flops, matmul convention) per second, in GFLOP/s."""
    from albert_core.counting.flops import count_flops

    check_number("seconds", seconds, 0, math.inf, lo_open=True)
    return count_flops(cfg, batch, seq).forward / seconds / 1e9


# (m, k, n): the encoder's own products at 512 tokens (QKV, FFN in, FFN out) and a 1024 cube.
PROBE_SHAPES = ((512, 768, 2304), (512, 768, 3072), (512, 3072, 768), (1024, 1024, 1024))


def matmul_peak_gflops(budget_s: float = 0.5) -> float:
    """Best median fp32 matmul throughput (GFLOP/s; torch.matmul or oneDNN, see probe_kernels) over
    PROBE_SHAPES, in about `budget_s` seconds. Cached per thread count and budget: the first call of a
    process pays for it."""
    _check_budget(budget_s)
    return _cached_probe(torch.get_num_threads(), float(budget_s))


def probe_kernels() -> list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]]:
    """The fp32 matmul kernels the probe times, each as ``fn(a (m, k), w (n, k)) -> (m, n)`` like a
    Linear: torch.matmul (MKL on this build) and, where torch has it, oneDNN's linear, the kernel the
    live model may run (`albert_core.live.fastpath`). The machine's limit is the faster of the two."""
    kernels: list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]] = [
        ("torch.matmul", lambda a, w: torch.matmul(a, w.t()))
    ]
    if fastpath.AVAILABLE:
        kernels.append(("onednn linear", lambda a, w: fastpath.onednn_linear(a, w, None, None)))
    return kernels


def measure_matmul_gflops(budget_s: float = 0.5) -> float:
    """The same probe, measured afresh (benchmarks repeat it beside the model runs)."""
    _check_budget(budget_s)
    gen = torch.Generator().manual_seed(0)
    best = 0.0
    kernels = probe_kernels()
    per_run = budget_s / (len(PROBE_SHAPES) * len(kernels))
    with torch.inference_mode():
        for m, k, n in PROBE_SHAPES:
            a, w = torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen)
            for _, fn in kernels:
                fn(a, w)  # warm up (packing buffers, thread pool)
                times: list[float] = []
                deadline = time.perf_counter() + per_run
                while len(times) < 2 or (time.perf_counter() < deadline and len(times) < 50):
                    t0 = time.perf_counter()
                    fn(a, w)
                    times.append(time.perf_counter() - t0)
                best = max(best, 2 * m * k * n / statistics.median(times) / 1e9)
    return best


def _check_budget(budget_s: Any) -> None:
    check_number("budget_s", budget_s, 0, 60, lo_open=True)


@functools.lru_cache(maxsize=8)
def _cached_probe(threads: int, budget_s: float) -> float:
    return measure_matmul_gflops(budget_s)


def peak_fraction(gflops: float, budget_s: float = 0.5) -> float:
    """`gflops` as a fraction of `matmul_peak_gflops()` (1.0 = as fast as the best plain matmul)."""
    return gflops / matmul_peak_gflops(budget_s)


# ----------------------------------------------------------------------------- representations
def layer_smoothness(hidden_states: Sequence[Any], attention_mask: Any = None) -> pd.DataFrame:
    """Per layer, how far its output moved from its input (the ALBERT paper, Figure 2).

    Row i (layer = i, from 1) compares x = hidden_states[i-1] (the layer's input) and y = hidden_states[i]
    (its output); hidden_states is the model's tuple of (B, T, H) tensors, embeddings first. For every
    token position (b, t) that is not padding (attention_mask 1; all positions without a mask):
      l2_distance       = ||y[b,t] - x[b,t]||_2            (Euclidean norm over the H features)
      cosine_similarity = <x[b,t], y[b,t]> / (||x[b,t]|| ||y[b,t]||)
      angle_degrees     = degrees(arccos(cosine_similarity))
    and each column is the plain mean of those per-token values over all such positions of the batch.
    """
    if len(hidden_states) < 2:
        raise ValueError("hidden_states must hold at least the embeddings and one layer output")
    xs = [torch.as_tensor(h).detach().to("cpu", torch.float64) for h in hidden_states]
    shape = xs[0].shape
    if len(shape) != 3 or any(h.shape != shape for h in xs):
        raise ValueError(f"hidden_states must be tensors of one shape (B, T, H), got {[tuple(h.shape) for h in xs]}")
    keep = torch.ones(shape[:2], dtype=torch.bool)
    if attention_mask is not None:
        mask = torch.as_tensor(attention_mask)
        if mask.shape != shape[:2]:
            raise ValueError(f"attention_mask must have shape {tuple(shape[:2])}, got {tuple(mask.shape)}")
        keep = mask.to("cpu") != 0
    rows = []
    for i in range(1, len(xs)):
        x, y = xs[i - 1][keep], xs[i][keep]  # (N, H) over kept positions
        dist = (y - x).norm(dim=-1)
        cos = torch.nn.functional.cosine_similarity(x, y, dim=-1, eps=1e-12).clamp(-1.0, 1.0)
        rows.append(
            {
                "layer": i,
                "l2_distance": dist.mean().item(),
                "cosine_similarity": cos.mean().item(),
                "angle_degrees": torch.rad2deg(torch.arccos(cos)).mean().item(),
            }
        )
    return pd.DataFrame(rows)


def attention_maps(
    output: Any, layer: int, head: int, tokens: Sequence[str] | None = None, batch_index: int = 0
) -> tuple[np.ndarray, list[str]]:
    """One head's attention weights (T, T): row = query token, column = key token (rows sum to 1),
    plus labels "i token" (unique, so a Plotly heatmap does not merge repeated tokens).
    `output` is an EncoderOutput (or transformers output) computed with output_attentions=True;
    `layer` indexes its `attentions` tuple (one entry per executed layer)."""
    attns = getattr(output, "attentions", None)
    if not attns:
        raise ValueError("output has no attentions: run the model with output_attentions=True")
    check_whole_number("layer", layer, 0, len(attns) - 1)
    a = attns[layer]  # (B, nh, T, T)
    check_whole_number("head", head, 0, a.shape[1] - 1)
    check_whole_number("batch_index", batch_index, 0, a.shape[0] - 1)
    weights = a[batch_index, head].detach().to("cpu", torch.float32).numpy()
    T = weights.shape[0]
    if tokens is not None and len(tokens) != T:
        raise ValueError(f"tokens must hold {T} labels (one per position), got {len(tokens)}")
    labels = [f"{i} {t}" for i, t in enumerate(tokens)] if tokens is not None else [str(i) for i in range(T)]
    return weights, labels


# ----------------------------------------------------------------------------- memory
def saved_activation_bytes(model: torch.nn.Module, inputs: Any) -> int:
    """Bytes autograd saves for backward in one training-mode forward of `model` on `inputs`.

    Every tensor the forward saves goes through a `saved_tensors_hooks` pack hook; the bytes of each
    distinct storage are counted once (views and tensors saved by two ops share a storage), and the
    model's parameters are left out (they are weights, not activations). Comparable with
    `estimate_memory(...).activations` (training=True). The model's mode is restored afterwards.

    The pass leaves nothing behind: the pack hook hands autograd a plain number, not the tensor (a saved
    output packed as itself makes a cycle through autograd's C++ graph that Python's collector cannot see,
    so the graph, and with it every parameter, would outlive the model), the storages are held in a local
    list only until the forward's output has been counted, and the graph is dropped before returning.
    The graph cannot be used for a backward pass.
    """
    kwargs = _model_kwargs(inputs, model)
    params = list(model.parameters())
    if any(p.device.type == "meta" for p in params):
        raise ValueError("a model on the meta device has no activations to measure")
    param_storages = {p.untyped_storage().data_ptr() for p in params}
    saved: dict[int, int] = {}
    # held until counted, so no saved storage is freed and its address reused by another within the pass
    storages: list[torch.UntypedStorage] = []

    def pack(t: torch.Tensor) -> int:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in param_storages:
            saved[ptr] = max(saved.get(ptr, 0), storage.nbytes())
            storages.append(storage)
        return len(storages)

    def unpack(_: int) -> torch.Tensor:
        raise RuntimeError("the saved-activation pass keeps no tensors: its graph has no backward")

    was_training = model.training
    grads = [p.requires_grad for p in params]
    out = None
    try:
        model.train()
        for p in params:
            p.requires_grad_(True)
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = model(**kwargs)
        return sum(saved.values())
    finally:
        del out  # the graph, and its references to the parameters, go with the output
        storages.clear()
        model.train(was_training)
        for p, g in zip(params, grads, strict=True):
            p.requires_grad_(g)
