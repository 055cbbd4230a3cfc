"""One memory and compute budget per process: what a hosted demo may allocate and run, whatever visitors do.

Memory. `PROCESS_BUDGET` is a thread-safe ledger of bytes (`albert_core.settings.memory_budget`, default
1 GiB). Everything big reserves its bytes before allocating them and gives them back when it is freed:
built models (the weights, for as long as the model object lives), running forward passes (their
working set, for the duration of the pass) and training runs (`reserve(nbytes, what="training run")`).
A reservation that could never fit raises `MemoryBudgetError`; one that does not fit *now* because other
visitors hold the bytes waits up to ``wait_s`` and then raises `BusyError` ("the server is busy, N
visitors ahead") instead of over-allocating. Reclaimers (e.g. caches of idle models) are asked to free
memory before anyone waits.

    from albert_core.live import budget
    budget.check_flops(total_flops, "this training run")            # ComputeBudgetError over the cap
    with budget.reserve(nbytes, what="training run", wait_s=5.0):   # MemoryBudgetError / BusyError
        with budget.LIVE_WORK.enter("training run", wait_s=5.0):    # BusyError: N visitors ahead
            ...allocate and train; stop with budget.Cancelled if the visitor has gone...

A reservation can also outlive a block: ``r = budget.reserve(...)``, then ``r.release()``, ``r.shrink(n)``
or ``r.hold_until_freed(obj)`` (released when ``obj`` is garbage-collected).

Compute. `LIVE_WORK` admits one piece of live-model work at a time (a FIFO gate: the CPU of a small
host is the scarce resource, two forwards at once only slow each other down), and `check_flops` refuses
work above the server's compute cap per request before it starts (`albert_core.settings.max_gflop`).

`ExpiringCache` holds built models: bounded in entries, each freed after ``ttl_s`` seconds unused by a
background sweeper (Streamlit's own cache TTL only expires an entry when the cache is next used, so an
idle server would keep its last models forever), and asked to drop idle entries when memory is short.

The settings themselves are read and checked in `albert_core.settings`. This module imports neither torch
nor streamlit.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from albert_core import settings
from albert_core.checks import check_whole_number
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.workload import DTYPE_BYTES, Workload
from albert_core.format import fmt_bytes

INIT_CHUNK = 2**20  # elements per draw of `model.init_weights`
INIT_SCRATCH_BYTES = (INIT_CHUNK + 16) * 4  # its fp32 scratch buffer, counted in every build


class MemoryBudgetError(ValueError):
    """A model, input or run whose estimated memory exceeds the budget."""


class BusyError(MemoryBudgetError):
    """The budget or the live-work gate is held by other visitors right now; try again shortly."""


class ComputeBudgetError(ValueError):
    """Work whose counted FLOPs exceed the per-request cap."""


class Cancelled(RuntimeError):
    """Work stopped because whoever asked for it has gone (a closed browser tab)."""


# ----------------------------------------------------------------------------- settings
def memory_budget(budget_bytes: int | None = None) -> int:
    """The budget in bytes: the argument, else the server's setting (`albert_core.settings.memory_budget`)."""
    if budget_bytes is not None:
        return check_whole_number("budget_bytes", budget_bytes)
    return settings.memory_budget()


# ----------------------------------------------------------------------------- the ledger
class Reservation:
    """Bytes held in a `MemoryBudget` until `release()` (idempotent): a context manager, or tied to an
    object's lifetime with `hold_until_freed(obj)`."""

    def __init__(self, ledger: MemoryBudget, nbytes: int, what: str):
        self._ledger, self.nbytes, self.what = ledger, nbytes, what
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._ledger._give_back(self)

    @property
    def released(self) -> bool:
        return self._released

    def shrink(self, nbytes: int) -> Reservation:
        """Give back all but ``nbytes`` (e.g. a build's scratch space once it is freed); returns self."""
        with self._ledger._cond:
            if not 0 <= nbytes <= self.nbytes:
                raise ValueError(f"a reservation of {self.nbytes} bytes cannot shrink to {nbytes}")
            self.nbytes = nbytes
            self._ledger._cond.notify_all()
        return self

    def hold_until_freed(self, obj: Any) -> Any:
        """Release when ``obj`` is garbage-collected (the bytes live as long as it does); returns ``obj``."""
        weakref.finalize(obj, self.release)
        return obj

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Reservation({self.what!r}, {fmt_bytes(self.nbytes)})"


class MemoryBudget:
    """A thread-safe ledger of reserved bytes against a total (None: follow `memory_budget()`, so the
    environment setting is read at each reservation)."""

    def __init__(self, total: int | None = None):
        self._fixed = None if total is None else memory_budget(total)
        self._cond = threading.Condition()
        self._held: list[Reservation] = []
        self._queue: list[object] = []  # tickets of waiting reservations, first come first served
        self._reclaimers: list[Callable[[], Callable[[int], None] | None]] = []  # weak references

    @property
    def total(self) -> int:
        return self._fixed if self._fixed is not None else memory_budget()

    @property
    def used(self) -> int:
        with self._cond:
            return sum(r.nbytes for r in self._held)

    def holders(self) -> list[tuple[str, int]]:
        """(what, bytes) of every live reservation."""
        with self._cond:
            return [(r.what, r.nbytes) for r in self._held]

    def add_reclaimer(self, fn: Callable[[int], None]) -> None:
        """``fn(nbytes)`` is called (without the ledger's lock) when a reservation of ``nbytes`` does not
        fit: it should drop what it can spare (idle cached models). Held weakly (a bound method's object
        may be freed)."""
        self._reclaimers.append(weakref.WeakMethod(fn) if hasattr(fn, "__self__") else (lambda: fn))

    def reserve(self, nbytes: int, what: str = "work", *, wait_s: float = 0.0) -> Reservation:
        """Reserve ``nbytes`` (MemoryBudgetError if more than the whole budget; BusyError if the bytes are
        not free within ``wait_s`` seconds). Use as ``with budget.reserve(...):`` or keep and release."""
        check_whole_number("nbytes", nbytes, 0)
        total = self.total
        if nbytes > total:
            raise MemoryBudgetError(
                f"{what} needs about {fmt_bytes(nbytes)}, over this server's memory budget of "
                f"{fmt_bytes(total)}"
            )
        if not self._fits(nbytes, total):
            for ref in list(self._reclaimers):
                if (fn := ref()) is not None:
                    fn(nbytes)
        ticket = object()
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._cond:
            self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and self._fits_locked(nbytes, total)):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        ahead = self._queue.index(ticket) + len(self._held)
                        raise BusyError(
                            f"the server is busy: {ahead} visitor{'s' if ahead != 1 else ''} ahead "
                            f"({fmt_bytes(self._used_locked())} of its "
                            f"{fmt_bytes(total)} memory budget in use); try again in a moment"
                        )
                    self._cond.wait(left)
                reservation = Reservation(self, nbytes, what)
                self._held.append(reservation)
                return reservation
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()

    def _fits(self, nbytes: int, total: int) -> bool:
        with self._cond:
            return self._fits_locked(nbytes, total)

    def _fits_locked(self, nbytes: int, total: int) -> bool:
        return self._used_locked() + nbytes <= total

    def _used_locked(self) -> int:
        return sum(r.nbytes for r in self._held)

    def _give_back(self, reservation: Reservation) -> None:
        with self._cond:
            self._held = [r for r in self._held if r is not reservation]
            self._cond.notify_all()


PROCESS_BUDGET = MemoryBudget()


def reserve(nbytes: int, what: str = "work", *, wait_s: float = 0.0) -> Reservation:
    """Reserve ``nbytes`` of this process's memory budget; see `MemoryBudget.reserve`."""
    return PROCESS_BUDGET.reserve(nbytes, what, wait_s=wait_s)


# ----------------------------------------------------------------------------- one live job at a time
class Gate:
    """At most ``slots`` holders at once, admitted first come first served; `enter` waits up to ``wait_s``
    and then raises BusyError saying how many are ahead."""

    def __init__(self, slots: int = 1):
        self.slots = slots
        self._cond = threading.Condition()
        self._inside = 0
        self._queue: list[object] = []

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    @contextmanager
    def enter(self, what: str = "live work", *, wait_s: float = 0.0) -> Iterator[None]:
        ticket = object()
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._cond:
            self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and self._inside < self.slots):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        ahead = self._queue.index(ticket) + self._inside
                        raise BusyError(
                            f"the server is busy: {ahead} visitor{'s' if ahead != 1 else ''} ahead of your "
                            f"{what}; try again in a moment"
                        )
                    self._cond.wait(left)
                self._inside += 1
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._inside -= 1
                self._cond.notify_all()


LIVE_WORK = Gate(1)


# ----------------------------------------------------------------------------- compute cap
def check_flops(flops: int | float, what: str) -> None:
    """ComputeBudgetError if ``flops`` (counted, e.g. by `count_flops`) exceed the per-request cap."""
    cap = settings.max_gflop()
    if flops > cap * 1e9:
        raise ComputeBudgetError(
            f"{what} would cost {flops / 1e9:,.0f} GFLOP, over this server's cap of {cap:,g} GFLOP per "
            f"request"
        )


def flops_fit(flops_each: int | float) -> int:
    """How many runs of ``flops_each`` fit the per-request cap (0 if not even one)."""
    return int(settings.max_gflop() * 1e9 // flops_each) if flops_each > 0 else 10**9


# ----------------------------------------------------------------------------- bounded, expiring cache
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """At most ``max_entries`` values, least recently used dropped first, each dropped ``ttl_s`` seconds
    after its last use by a daemon sweeper thread; registered as a reclaimer of ``budget`` so idle
    entries are dropped when memory is short. Values are created once per key even when several threads
    ask at the same time (the others wait for the first)."""

    def __init__(self, max_entries: int, ttl_s: float, budget: MemoryBudget | None = PROCESS_BUDGET,
                 *, sweep_s: float | None = None):
        self.max_entries, self.ttl_s = max_entries, ttl_s
        self._lock = threading.RLock()
        self._items: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._building: dict[K, threading.Lock] = {}
        if budget is not None:
            budget.add_reclaimer(self._reclaim)
        self._sweep_s = sweep_s if sweep_s is not None else max(0.05, min(ttl_s / 4, 30.0))
        threading.Thread(target=self._sweeper, args=(weakref.ref(self),), daemon=True,
                         name="ExpiringCache sweeper").start()

    def get(self, key: K, create: Callable[[], V]) -> V:
        while True:
            with self._lock:
                if key in self._items:
                    value, _ = self._items.pop(key)
                    self._items[key] = (value, time.monotonic())  # most recently used last
                    return value
                building = self._building.get(key)
                if building is None:
                    building = self._building[key] = threading.Lock()
                    building.acquire()
                    break
            with building:  # another thread creates it: wait, then look again
                pass
        try:
            value = create()
            with self._lock:
                self._items[key] = (value, time.monotonic())
                while len(self._items) > self.max_entries:
                    self._items.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._building[key]
            building.release()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def expire(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            for key in [k for k, (_, t) in self._items.items() if now - t >= self.ttl_s]:
                del self._items[key]

    def _reclaim(self, nbytes: int) -> None:
        # values still used elsewhere keep their memory (and their reservation) until freed there
        self.clear()

    @staticmethod
    def _sweeper(ref: weakref.ref) -> None:
        while (cache := ref()) is not None:
            pause = cache._sweep_s
            cache.expire()
            del cache
            time.sleep(pause)


# ----------------------------------------------------------------------------- live-model accounting
def dtype_name(dtype: Any) -> str:
    """torch.float32 / 'fp32' -> 'fp32' (the float names of config.DTYPE_BYTES), without importing torch."""
    names = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
    for name, torch_name in names.items():
        if isinstance(dtype, str) and dtype == name or str(dtype) == f"torch.{torch_name}":
            return name
    raise ValueError(f"dtype must be one of {', '.join(names)} (torch float32/float16/bfloat16), got {dtype!r}")


def estimate(cfg: ModelConfig, batch: int, seq_len: int, dtype: str, device: str, training: bool = False) -> int:
    """Bytes of the weights plus one forward pass (with training=True: plus the activations autograd
    keeps), from `estimate_memory`; the live model has no dropout."""
    from albert_core.counting.memory import estimate_memory

    kind = "cuda" if device == "cuda" else "cpu"
    est = estimate_memory(cfg, batch, seq_len, dtype, optimizer="none", training=training, dropout=0.0, device=kind)
    return int(est.total)


def weight_bytes(cfg: ModelConfig, dtype: str) -> int:
    from albert_core.counting.params import count_params

    return count_params(cfg).total * DTYPE_BYTES[dtype]


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
    dtype: Any = "fp32",
    *,
    budget_bytes: int | None = None,
    device: Any = "cpu",
    extra_bytes: int = 0,
) -> BudgetCheck:
    """Would building ``cfg`` and running one forward pass at (batch, seq_len) fit the memory budget?

    ``extra_bytes`` is added to the estimate (e.g. a second copy of the weights while loading). The
    initialisation's scratch buffer (INIT_SCRATCH_BYTES) is counted."""
    name = dtype_name(dtype)
    Workload(batch=batch, seq_len=seq_len, dtype=name, optimizer="none").check_fits(cfg)
    budget = memory_budget(budget_bytes)
    kind = str(getattr(device, "type", device)).split(":")[0]
    total = estimate(cfg, batch, seq_len, name, kind) + extra_bytes + INIT_SCRATCH_BYTES
    ok = total <= budget
    what = f"{cfg.label} at batch {batch} x seq {seq_len} ({name})"
    if ok:
        message = f"{what}: about {fmt_bytes(total)} of a {fmt_bytes(budget)} budget"
    else:
        message = (
            f"{what} needs about {fmt_bytes(total)} (weights + one forward pass), "
            f"over this server's memory budget of {fmt_bytes(budget)}; use a smaller model, batch or "
            f"sequence, or the meta device (shapes and counts without memory)"
        )
    return BudgetCheck(total, budget, ok, message)


@dataclass(frozen=True)
class Alternative:
    """A change that makes a refused build fit: ``field`` ("dtype", "seq_len" or a ModelConfig field),
    the ``value`` to use (the largest that fits, or a dtype) and the ``estimate`` in bytes then."""

    field: str
    value: Any
    estimate: int


def alternatives(cfg: ModelConfig, seq_len: int, dtype: Any = "fp32", *, budget_bytes: int | None = None,
                 device: Any = "cpu") -> list[Alternative]:
    """What would fit the budget where ``cfg`` at batch 1 x ``seq_len`` in ``dtype`` does not: a
    2-byte dtype (bf16 / fp16), the longest sequence that fits, the most layers that fit (each alone,
    the rest unchanged); empty if nothing of that helps."""
    name = dtype_name(dtype)

    def fits(c: ModelConfig, s: int, d: str) -> BudgetCheck:
        return check_budget(c, 1, s, d, budget_bytes=budget_bytes, device=device)

    def largest(ok: Any, hi: int, floor: int = 1) -> int:  # the largest n in [floor, hi) with ok(n), ok monotone;
        lo, top = floor - 1, hi - 1  # floor - 1 if none
        while lo < top:
            mid = (lo + top + 1) // 2
            lo, top = (mid, top) if ok(mid) else (lo, mid - 1)
        return lo

    out: list[Alternative] = []
    if DTYPE_BYTES[name] > 2 and (half := fits(cfg, seq_len, "bf16")).ok:
        out.append(Alternative("dtype", "bf16", half.estimate))
    if (s := largest(lambda n: fits(cfg, n, name).ok, seq_len)) > 0:
        out.append(Alternative("seq_len", s, fits(cfg, s, name).estimate))

    # unique first and last layers keep their G groups between them: at least G + 2 layers
    floor = cfg.num_hidden_groups + 2 if cfg.unique_ends else 1

    def fewer(n: int) -> ModelConfig:
        return cfg.replace(num_layers=n, num_hidden_groups=cfg.num_hidden_groups if cfg.unique_ends
                           else min(cfg.num_hidden_groups, n))

    if (n := largest(lambda n: fits(fewer(n), seq_len, name).ok, cfg.num_layers, floor)) >= floor:
        out.append(Alternative("num_layers", n, fits(fewer(n), seq_len, name).estimate))
    return out


@dataclass(frozen=True)
class ForwardGuard:
    """The input size a budget check covered; the model refuses anything that would allocate more, and
    each forward pass reserves its working set from ``ledger`` (None: a caller-managed budget) while it
    runs. The weights' bytes are held by the model's own reservation."""

    cfg: ModelConfig
    batch: int
    seq_len: int
    dtype: str
    device: str
    budget: int
    estimate: int  # of weights + one forward pass at (batch, seq_len)
    ledger: MemoryBudget | None = None
    wait_s: float = 0.0

    def check(self, shape: tuple[int, int], hidden: bool, attentions: bool, keeps_graph: bool) -> int:
        """Raise MemoryBudgetError for an input or outputs the check did not cover; else the bytes of
        the forward pass beyond the weights (working set, kept outputs, autograd activations)."""
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
                f"the requested outputs need about {fmt_bytes(self.estimate + extra)} "
                f"(weights, forward pass, kept hidden states / attention maps / autograd activations), "
                f"over the memory budget of {fmt_bytes(self.budget)}"
            )
        return self.estimate - weight_bytes(self.cfg, self.dtype) + extra

    @contextmanager
    def forward(self, shape: tuple[int, int], hidden: bool, attentions: bool, keeps_graph: bool) -> Iterator[None]:
        """`check`, then hold the forward pass's bytes in the ledger while the block runs."""
        nbytes = self.check(shape, hidden, attentions, keeps_graph)
        if self.ledger is None:
            yield
            return
        with self.ledger.reserve(nbytes, "a forward pass", wait_s=self.wait_s):
            yield

    def _kept_bytes(self, B: int, T: int, hidden: bool, attentions: bool) -> int:
        cfg, b = self.cfg, DTYPE_BYTES[self.dtype]
        n = 0
        if hidden:
            n += (cfg.executed_layers + 1) * B * T * cfg.hidden_size
        if attentions:
            n += cfg.executed_layers * B * cfg.num_heads * T * T
        return n * b

    def _training_bytes(self) -> int:
        inference = estimate(self.cfg, self.batch, self.seq_len, self.dtype, self.device)
        return estimate(self.cfg, self.batch, self.seq_len, self.dtype, self.device, training=True) - inference
