"""Which kernel runs the live model's linears at inference: oneDNN's fused linear or eager torch.

oneDNN's fp32 matmul (`torch.ops.mkldnn._linear_pointwise`, the kernel torch.compile uses for CPU
linears) applies the bias, the activation and the residual add inside the GEMM, and ran this model's
shapes 10-20% faster than eager on one machine but slower on another. It is a private torch API with
no autograd formula, so it is used only when all of these hold:

* inference (no grad), fp32, on the CPU, and torch exposes the op;
* a one-time probe on this process's machine measured it faster than eager for this shape class
  (the linear's in/out features, the kind of epilogue and the number of rows rounded up to a power of
  two): both kernels run interleaved on random inputs of that shape, and the faster median wins
  (oneDNN must be at least `MARGIN` faster). The decision is kept for the life of the process.
  Matmuls below `PROBE_MIN_MACS` are not worth a probe (it would cost more than it could save): they
  run eagerly.

`ALBERT_EXPLORER_ONEDNN` overrides the probe: ``1`` always oneDNN (where possible), ``0`` never.
Both kernels compute the same function (tests compare them); only speed differs.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from albert_core import settings

MARGIN = 0.97  # oneDNN's median must be below 97% of eager's
PROBE_ROWS = 1024  # the probe never multiplies more rows than this (it stays a few milliseconds)
PROBE_MIN_MACS = 1 << 22  # smaller matmuls (rows x in x out) run eagerly without a probe
_REPS = 5

AVAILABLE = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
ONEDNN_ACT = {"gelu": ("gelu", "none"), "gelu_new": ("gelu", "tanh"), "relu": ("relu", "")}  # (attr, algorithm)
EAGER_ACT: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,  # exact erf form (transformers' "gelu")
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),  # one fused kernel for BERT/GPT's tanh form
    "relu": F.relu,
}

_decisions: dict[tuple, bool] = {}
_lock = threading.Lock()
_forced: str | None = None  # set by `forced` (tests, benchmarks)


def possible(x: torch.Tensor) -> bool:
    """The oneDNN path can run on ``x`` (inference, fp32, CPU, op present)."""
    return AVAILABLE and not torch.is_grad_enabled() and x.device.type == "cpu" and x.dtype == torch.float32


def _mode() -> str:
    return _forced or settings.onednn_mode()


# ----------------------------------------------------------------------------- the two kernels
def onednn_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, act: str | None) -> torch.Tensor:
    attr, algorithm = ONEDNN_ACT[act] if act else ("none", "")
    return torch.ops.mkldnn._linear_pointwise(x, w, b, attr, [], algorithm)


def eager_linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, act: str | None) -> torch.Tensor:
    y = F.linear(x, w, b)
    return y if act is None else EAGER_ACT[act](y)


def onednn_residual(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise.binary(y, x, w, b, "add")


def eager_residual(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x + y @ w.T + b, with x + b as the matmul's accumulator (one pass over (B, T, H) less)."""
    out = (x + b).view(-1, x.shape[-1])  # (B*T, H)
    return out.addmm_(y.reshape(-1, y.shape[-1]), w.t()).view(x.shape)


# ----------------------------------------------------------------------------- the probe
def _bucket(rows: int) -> int:
    return 1 << max(0, rows - 1).bit_length()


def _time_into(fn: Callable[[], object], rounds: list[float]) -> None:
    t0 = time.perf_counter()
    fn()
    rounds.append((time.perf_counter() - t0) * 1e3)


def probe(kind: str, n_in: int, n_out: int, rows: int, act: str | None = None) -> tuple[float, float]:
    """Median milliseconds of (oneDNN, eager) for one shape class, interleaved on random inputs."""
    m = min(_bucket(rows), PROBE_ROWS)
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(n_out, n_in, generator=gen) / n_in**0.5
    b = torch.randn(n_out, generator=gen)
    x = torch.randn(m, n_in, generator=gen)
    if kind == "residual":
        res = torch.randn(m, n_out, generator=gen)
        fast, slow = (lambda: onednn_residual(res, w, b, x)), (lambda: eager_residual(res, w, b, x))
    else:
        fast, slow = (lambda: onednn_linear(x, w, b, act)), (lambda: eager_linear(x, w, b, act))
    times: tuple[list[float], list[float]] = ([], [])
    with torch.no_grad():
        fast(), slow()  # warm up (oneDNN primitive creation, allocator)
        for _ in range(_REPS):
            _time_into(fast, times[0])
            _time_into(slow, times[1])
    return statistics.median(times[0]), statistics.median(times[1])


def use_onednn(kind: str, x: torch.Tensor, n_in: int, n_out: int, act: str | None = None) -> bool:
    """Whether this call runs oneDNN (probing its shape class on first use; see the module docstring)."""
    if not possible(x):
        return False
    mode = _mode()
    if mode in ("0", "1"):
        return mode == "1"
    rows = x.numel() // x.shape[-1]
    if rows * n_in * n_out < PROBE_MIN_MACS:
        return False
    key = (kind, n_in, n_out, act, _bucket(rows))
    choice = _decisions.get(key)
    if choice is None:
        with _lock:
            choice = _decisions.get(key)
            if choice is None:
                fast, slow = probe(kind, n_in, n_out, rows, act)
                choice = _decisions[key] = fast < MARGIN * slow
    return choice


def decisions() -> dict[tuple, bool]:
    """The probe's decisions so far: (kind, in, out, act, rows bucket) -> oneDNN chosen."""
    return dict(_decisions)


def reset() -> None:
    """Forget the probe's decisions (the next call of each shape class probes again)."""
    _decisions.clear()


@contextmanager
def forced(mode: str | None) -> Iterator[None]:
    """Within the block: ``"1"`` always oneDNN, ``"0"`` always eager, ``None`` the probe."""
    global _forced
    previous = _forced
    _forced = mode
    try:
        yield
    finally:
        _forced = previous


# ----------------------------------------------------------------------------- what the model calls
def linear(x: torch.Tensor, layer: torch.nn.Linear, act: str | None = None) -> torch.Tensor:
    """layer(x), then the activation named ``act`` if given, by the faster kernel."""
    if use_onednn("linear", x, layer.in_features, layer.out_features, act):
        return onednn_linear(x, layer.weight, layer.bias, act)
    return eager_linear(x, layer.weight, layer.bias, act)


def residual_linear(x: torch.Tensor, layer: torch.nn.Linear, y: torch.Tensor) -> torch.Tensor:
    """x + layer(y), by the faster kernel."""
    if use_onednn("residual", y, layer.in_features, layer.out_features):
        return onednn_residual(x, layer.weight, layer.bias, y)
    return eager_residual(x, layer.weight, layer.bias, y)
