"""Measurements on a live model, for the Live model and Paper pages (torch here; no streamlit).

- `measure_latency`: median / p10 / p90 wall time of a forward pass.
- `achieved_gflops`, `matmul_peak_gflops`, `peak_fraction`: analytic FLOPs per second, and that as a
  share of the best fp32 matmul throughput this machine shows in a short cached probe.
- `layer_smoothness`: the ALBERT paper's Figure 2 (L2 distance and cosine similarity between the input
  and output hidden states of every layer).
- `attention_maps`: one head's (T, T) attention weights with unique token labels for a heatmap.
- `saved_activation_bytes`: bytes autograd really saves for backward in a training-mode forward.
- `make_sop_pairs`, `make_nsp_pairs`, `ngram_mask`: the paper's pre-training inputs, deterministic by seed.
"""

from __future__ import annotations

import functools
import random
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from albert_core.config import ModelConfig
from albert_core.tokenizer import SPECIAL_TOKENS, Encoded

__all__ = [
    "LatencyResult",
    "MaskResult",
    "Pair",
    "achieved_gflops",
    "attention_maps",
    "layer_smoothness",
    "make_nsp_pairs",
    "make_sop_pairs",
    "matmul_peak_gflops",
    "measure_matmul_gflops",
    "measure_latency",
    "ngram_length_probs",
    "ngram_mask",
    "ngram_spans",
    "peak_fraction",
    "saved_activation_bytes",
]


def _model_kwargs(inputs: Any) -> dict[str, Any]:
    """Model keyword arguments from an `Encoded`, a mapping of tensors, or an input_ids tensor."""
    if isinstance(inputs, Encoded):
        return inputs.tensors()
    if isinstance(inputs, torch.Tensor):
        return {"input_ids": inputs}
    if isinstance(inputs, Mapping) and "input_ids" in inputs:
        return dict(inputs)
    raise ValueError("inputs must be an Encoded, an input_ids tensor or a mapping with 'input_ids'")


def _positive_int(name: str, value: Any, lo: int = 1, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        rule = f">= {lo}" if hi is None else f"between {lo} and {hi}"
        raise ValueError(f"{name} must be a whole number {rule}, got {value!r:.40}")
    return value


# ----------------------------------------------------------------------------- speed
@dataclass(frozen=True)
class LatencyResult:
    median_s: float
    p10: float  # seconds, 10th percentile
    p90: float  # seconds, 90th percentile
    runs: tuple[float, ...]  # every timed run, seconds, in order


def measure_latency(model: torch.nn.Module, inputs: Any, n: int = 10, warmup: int = 2) -> LatencyResult:
    """Wall time of `n` forward passes (after `warmup` untimed ones) under torch.inference_mode."""
    _positive_int("n", n, hi=1000)
    _positive_int("warmup", warmup, lo=0, hi=100)
    kwargs = _model_kwargs(inputs)
    runs = []
    with torch.inference_mode():
        for i in range(warmup + n):
            t0 = time.perf_counter()
            model(**kwargs)
            if i >= warmup:
                runs.append(time.perf_counter() - t0)
    q10, q90 = np.quantile(runs, [0.1, 0.9])
    return LatencyResult(statistics.median(runs), float(q10), float(q90), tuple(runs))


def achieved_gflops(cfg: ModelConfig, batch: int, seq: int, seconds: float) -> float:
    """Analytic forward FLOPs (albert_core.flops, matmul convention) per second, in GFLOP/s."""
    from albert_core.flops import count_flops

    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"seconds must be a positive number, got {seconds!r:.40}")
    return count_flops(cfg, batch, seq).forward / seconds / 1e9


# (m, k, n): the encoder's own products at 512 tokens (QKV, FFN in, FFN out) and a 1024 cube.
PROBE_SHAPES = ((512, 768, 2304), (512, 768, 3072), (512, 3072, 768), (1024, 1024, 1024))


def matmul_peak_gflops(budget_s: float = 0.5) -> float:
    """Best median fp32 matmul throughput (GFLOP/s; torch.matmul or oneDNN, see probe_kernels) over PROBE_SHAPES, in about `budget_s`
    seconds. Cached per thread count and budget: the first call of a process pays for it."""
    _check_budget(budget_s)
    return _cached_probe(torch.get_num_threads(), float(budget_s))


def probe_kernels() -> list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]]:
    """The fp32 matmul kernels the probe times, each as ``fn(a (m, k), w (n, k)) -> (m, n)`` like a
    Linear: torch.matmul (MKL on this build) and, where torch has it, oneDNN's linear, the kernel the
    live model runs (albert_core.model.linear). The machine's limit is the faster of the two."""
    kernels: list[tuple[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]] = [
        ("torch.matmul", lambda a, w: torch.matmul(a, w.t()))
    ]
    if torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise"):
        kernels.append(("onednn linear", lambda a, w: torch.ops.mkldnn._linear_pointwise(a, w, None, "none", [], "")))
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
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not 0 < budget_s <= 60:
        raise ValueError(f"budget_s must be a number of seconds in (0, 60], got {budget_s!r:.40}")


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
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(attns):
        raise ValueError(f"layer must be in 0..{len(attns) - 1}, got {layer!r:.40}")
    a = attns[layer]  # (B, nh, T, T)
    if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < a.shape[1]:
        raise ValueError(f"head must be in 0..{a.shape[1] - 1}, got {head!r:.40}")
    if isinstance(batch_index, bool) or not isinstance(batch_index, int) or not 0 <= batch_index < a.shape[0]:
        raise ValueError(f"batch_index must be in 0..{a.shape[0] - 1}, got {batch_index!r:.40}")
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
    """
    kwargs = _model_kwargs(inputs)
    params = list(model.parameters())
    if any(p.device.type == "meta" for p in params):
        raise ValueError("a model on the meta device has no activations to measure")
    param_storages = {p.untyped_storage().data_ptr() for p in params}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in param_storages:
            saved[ptr] = max(saved.get(ptr, 0), storage.nbytes())
        return t

    was_training = model.training
    grads = [p.requires_grad for p in params]
    try:
        model.train()
        for p in params:
            p.requires_grad_(True)
        with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(**kwargs)  # kept alive until counted: no saved storage is freed and reused
        total = sum(saved.values())
        del out
    finally:
        model.train(was_training)
        for p, g in zip(params, grads, strict=True):
            p.requires_grad_(g)
    return total


# ----------------------------------------------------------------------------- pre-training inputs
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _documents(text: str) -> list[list[str]]:
    """Documents (paragraphs split by blank lines) as lists of sentences."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    docs = []
    for para in re.split(r"\n\s*\n", text):
        sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(para.split())) if s.strip()]
        if sentences:
            docs.append(sentences)
    return docs


@dataclass(frozen=True)
class Pair:
    """Two segments and the label a pre-training classifier learns (0 = positive, as transformers'
    sentence_order_label / next_sentence_label)."""

    a: str
    b: str
    label: int
    kind: str  # "in order" / "swapped" (SOP), "is next" / "random next" (NSP)


def make_sop_pairs(text: str) -> list[Pair]:
    """ALBERT's sentence-order prediction: for every two consecutive sentences of a document, the
    positive (A, B in their order, label 0) and the negative (the same two swapped, label 1)."""
    pairs = []
    for doc in _documents(text):
        for a, b in zip(doc, doc[1:], strict=False):
            pairs += [Pair(a, b, 0, "in order"), Pair(b, a, 1, "swapped")]
    return pairs


def make_nsp_pairs(text: str, seed: int = 0) -> list[Pair]:
    """BERT's next-sentence prediction: for every two consecutive sentences, the positive (label 0)
    and a negative whose B is a random sentence (label 1) from another document (paragraph) when
    the text has several, else from a random non-adjacent place. Deterministic for a given seed."""
    _positive_int("seed", seed, lo=0)
    docs = _documents(text)
    rng = random.Random(seed)
    flat = [(d, j, s) for d, doc in enumerate(docs) for j, s in enumerate(doc)]
    pairs = []
    for d, doc in enumerate(docs):
        for j, (a, b) in enumerate(zip(doc, doc[1:], strict=False)):
            if len(docs) > 1:
                pool = [s for dd, _, s in flat if dd != d]
            else:  # one document: anything but A and its true next sentence
                pool = [s for _, jj, s in flat if jj not in (j, j + 1)]
            pairs.append(Pair(a, b, 0, "is next"))
            if pool:
                pairs.append(Pair(a, rng.choice(pool), 1, "random next"))
    return pairs


def ngram_length_probs(max_n: int = 3) -> list[float]:
    """p(n) for n = 1..max_n, proportional to 1/n (ALBERT: 6/11, 3/11, 2/11 for max_n = 3)."""
    _positive_int("max_n", max_n)
    w = [1 / n for n in range(1, max_n + 1)]
    return [x / sum(w) for x in w]


@dataclass(frozen=True)
class MaskResult:
    tokens: list[str]  # the input with every selected position replaced by [MASK]
    positions: list[int]  # masked positions, ascending
    labels: list[str]  # the original tokens at those positions
    spans: list[tuple[int, int]]  # (first position, number of whole words) per n-gram, in choice order


def ngram_spans(
    words: Sequence[Sequence[int]], budget: int, rng: random.Random, max_n: int = 3
) -> list[tuple[list[int], int]]:
    """ALBERT's n-gram span choice (create_pretraining_data.py) over ``words`` (the positions of each
    whole word, in order): (positions, n) per chosen span of n consecutive words, in choice order, with
    p(n) proportional to 1/n, until ``budget`` positions are chosen. Candidate start words are visited in
    a random order; n is drawn among the n-grams that fit before the end; a span that would overshoot the
    budget is shortened (then skipped), one that overlaps a chosen span is skipped."""
    probs = ngram_length_probs(max_n)
    order = list(range(len(words)))
    rng.shuffle(order)
    chosen: set[int] = set()
    spans: list[tuple[list[int], int]] = []
    for start in order:
        if len(chosen) >= budget:
            break
        if chosen.intersection(words[start]):
            continue
        k = min(max_n, len(words) - start)  # n-grams that fit before the end, p renormalised
        n = rng.choices(range(1, k + 1), weights=probs[:k])[0]
        span = [p for w in words[start : start + n] for p in w]
        while n > 1 and len(chosen) + len(span) > budget:  # try shorter n-grams, as ALBERT does
            n -= 1
            span = [p for w in words[start : start + n] for p in w]
        if len(chosen) + len(span) > budget or chosen.intersection(span):
            continue
        chosen.update(span)
        spans.append((span, n))
    return spans


def ngram_mask(tokens: Sequence[str], seed: int = 0, max_n: int = 3, rate: float = 0.15) -> MaskResult:
    """ALBERT's n-gram masking: spans of n whole words with p(n) proportional to 1/n, n <= max_n, until
    round(rate * maskable tokens) positions (at least 1) are selected (ALBERT's create_pretraining_data.py).

    Words are WordPiece groups (a "##" piece belongs to the word before it); special tokens ([CLS],
    [SEP], ...) are never masked; spans are chosen by `ngram_spans` with a seeded generator. Every
    selected position shows [MASK] (BERT's 80/10/10 replacement is left out, so the spans are visible).
    """
    _positive_int("seed", seed, lo=0)
    ngram_length_probs(max_n)  # validates max_n
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ValueError(f"rate must be a number in (0, 1], got {rate!r:.40}")
    tokens = list(tokens)
    words: list[list[int]] = []  # positions of each maskable word
    for i, tok in enumerate(tokens):
        if tok in SPECIAL_TOKENS:
            continue
        if tok.startswith("##") and words and words[-1][-1] == i - 1:
            words[-1].append(i)
        else:
            words.append([i])
    maskable = sum(len(w) for w in words)
    if not maskable:
        return MaskResult(tokens, [], [], [])
    spans_chosen = ngram_spans(words, max(1, round(maskable * rate)), random.Random(seed), max_n)
    chosen = {p for span, _ in spans_chosen for p in span}
    spans = [(span[0], n) for span, n in spans_chosen]
    positions = sorted(chosen)
    masked = ["[MASK]" if i in chosen else t for i, t in enumerate(tokens)]
    return MaskResult(masked, positions, [tokens[i] for i in positions], spans)
