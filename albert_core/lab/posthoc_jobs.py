"""A visitor's own post-hoc variant of the trained MiniLM (E, shared, LoRA rank), measured as the shipped grid
measures its variants (`albert_core.lab.posthoc_grid.run_grid`: the same dev sentences, train samples, regressions,
bootstrap and rule, the original measured beside it), as a bounded, owned and queued job.

- **Bounded before it starts** (`plan`): the variant is checked against the model (E below H, r at most H), its exact
  parameters and FLOPs are counted, the job's memory (the original's weights, the copy the variants are made from,
  the variant, one forward batch, the sentence vectors) is checked against the process's memory budget, and its
  CPU time is estimated from what the shipped grid measured per variant. Nothing is loaded or tokenized before the
  plan passes.
- **Owned**: the visitor who asked can cancel it; anyone else who asks for the same variant joins it (one
  measurement for both) and sees it read-only until they ask; a finished result is kept (a few) and shown to
  whoever asks for that variant again.
- **Queued fairly**: one job runs at a time; at most `MAX_QUEUE` wait, at most `SHARE` per visitor.
- **Counted in the memory envelope**: the job reserves its planned bytes in the process budget (the Live model page
  and the lab's runs reserve from the same budget) while it runs; the models it builds reserve their own weights.
- **Stopped when nobody wants it**: cancelled by its last owner, or nobody has looked at it for the lab's idle time
  (`settings.lab_idle_s`).

A variant the shipped grid holds is not measured again: the page shows the shipped figures.
"""

from __future__ import annotations

import collections
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from albert_core import settings
from albert_core.counting.posthoc import Variant, check_variant, posthoc_flops, posthoc_total
from albert_core.lab.posthoc_grid import GridSettings, Stopped, run_grid

MAX_QUEUE = 3  # jobs waiting (one runs)
SHARE = 1  # jobs a visitor may have queued or running
KEEP_DONE = 8  # finished results kept for whoever asks for the same variant
MAX_RANK = 128  # a visitor's LoRA rank (the grid's largest is 64; H is 384)
MIN_E = 8
# the shipped grid's sentences, train samples, regressions and resamples; sentences 16 at a time instead of 64 (a
# sentence's vector does not depend on its batch; a quarter of the forward working set in the shared budget)
SETTINGS = GridSettings(batch=16)
FEATURE_SENTENCES = 1694 + 2 * 1500  # at most: every dev sentence and the train union (about 2,900 of 3,000)


class JobRefused(ValueError):
    """The variant cannot be measured here (bad value, over the memory budget) or the queue has no place for it."""


@dataclass(frozen=True)
class JobPlan:
    """What a variant's job will do and cost, known before any work."""

    variant: Variant
    parameters: int  # exact
    flops_per_sequence: int  # exact, at 128 tokens
    memory_bytes: int  # planned, in all: checked against the budget before it is queued
    reserved_bytes: int  # what the job reserves itself while it runs (the models it builds reserve their weights)
    cpu_seconds: float  # estimate, from the shipped grid's measured CPU seconds per variant
    shipped: bool  # the shipped grid already holds it


def _grid_cpu_per_variant(doc: dict[str, Any] | None) -> float:
    """The shipped grid's median CPU seconds per variant (30 s measured on an Intel Xeon core); 40 without one."""
    if not doc:
        return 40.0
    seconds = sorted(float(v["cpu_seconds"]) for v in doc["variants"])
    return seconds[len(seconds) // 2]


def plan(variant: Variant, doc: dict[str, Any] | None = None, budget_bytes: int | None = None) -> JobPlan:
    """The job's plan; `JobRefused` naming the field or the budget when it cannot run here."""
    from albert_core.counting.memory import estimate_memory
    from albert_core.live import budget
    from albert_core.live.minilm import PARAMETERS, minilm_config

    cfg = minilm_config()
    try:
        check_variant(cfg, variant)
    except ValueError as exc:
        raise JobRefused(str(exc)) from None
    if variant.embedding_size is not None and variant.embedding_size < MIN_E:
        raise JobRefused(f"embedding_size must be at least {MIN_E} here, got {variant.embedding_size}")
    if variant.rank > MAX_RANK:
        raise JobRefused(f"rank must be at most {MAX_RANK} here (a visitor's job), got {variant.rank}")
    variant_weights = 4 * posthoc_total(cfg, variant)
    forward = estimate_memory(cfg, SETTINGS.batch, 128, "fp32", training=False).activations
    vectors = 2 * FEATURE_SENTENCES * cfg.hidden_size * 4  # the original's and the variant's sentence vectors
    # the original's weights, the copy the variants are made of (with its SVDs, about as large), the variant and
    # the original measured beside it (one model at a time), one forward batch, the sentence vectors
    own = 4 * PARAMETERS + variant_weights  # reserved by load_minilm and build_variant themselves
    memory = own + 2 * 4 * PARAMETERS + forward + vectors
    total = budget.memory_budget(budget_bytes)
    if memory > total:
        raise JobRefused(f"the job needs about {memory / 2**20:,.0f} MiB, over this server's memory budget of "
                         f"{total / 2**20:,.0f} MiB")
    shipped = bool(doc) and any(v["key"] == variant.key for v in doc["variants"])
    return JobPlan(variant, posthoc_total(cfg, variant), posthoc_flops(cfg, variant, 1, 128).total, memory,
                   memory - own, 2 * _grid_cpu_per_variant(doc), shipped)


@dataclass
class _Job:
    plan: JobPlan
    owners: set[str]
    state: str = "queued"  # queued, running, done, cancelled, failed
    done: int = 0
    total: int = 4  # the original's and the variant's two feature passes
    message: str = ""
    doc: dict[str, Any] | None = None
    started: float = 0.0
    seconds: float = 0.0
    watched_at: float = field(default_factory=time.monotonic)
    cancel: threading.Event = field(default_factory=threading.Event)
    seq: int = field(default_factory=lambda: next(_SEQ))


_SEQ = itertools.count()


@dataclass(frozen=True)
class JobStatus:
    key: str
    label: str
    state: str
    position: int | None  # 0 running, n: n jobs ahead, None finished
    done: int
    total: int
    message: str
    plan: JobPlan
    doc: dict[str, Any] | None
    seconds: float
    owners: int

    @property
    def finished(self) -> bool:
        return self.state in ("done", "cancelled", "failed")


class PosthocJobs:
    def __init__(self, *, max_queue: int = MAX_QUEUE, share: int = SHARE, idle_s: float | None = None,
                 budget_bytes: int | None = None, wait_s: float = 600.0,
                 settings_: GridSettings = SETTINGS) -> None:
        self.max_queue, self.share = max_queue, share
        self.idle_s = settings.lab_idle_s() if idle_s is None else idle_s
        self.budget_bytes, self.wait_s, self.settings = budget_bytes, wait_s, settings_
        self._jobs: collections.OrderedDict[str, _Job] = collections.OrderedDict()
        self._queue: list[str] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------- public
    def submit(self, variant: Variant, owner: str, doc: dict[str, Any] | None = None) -> str:
        """Queue ``variant`` for ``owner`` (planned first: `JobRefused`); its key. Joins an unfinished job of the
        same variant, and returns a finished one as it is."""
        p = plan(variant, doc, self.budget_bytes)
        if p.shipped:
            raise JobRefused(f"{variant.label} is in the shipped grid already: its figures are above")
        key = variant.key
        with self._cond:
            job = self._jobs.get(key)
            if job is not None and job.state in ("queued", "running", "done"):
                job.owners.add(owner)
                job.watched_at = time.monotonic()
                return key
            held = sum(1 for k in self._queue + self._running() if owner in self._jobs[k].owners)
            if held >= self.share:
                raise JobRefused(f"you have {held} post-hoc job(s) queued or running (at most {self.share} a visitor): "
                                 "wait for it or cancel it")
            if len(self._queue) >= self.max_queue:
                raise JobRefused(f"the post-hoc queue is full ({self.max_queue} waiting, one running, about "
                                 f"{p.cpu_seconds:.0f} CPU-s each): try again in a few minutes")
            self._jobs.pop(key, None)
            self._jobs[key] = _Job(p, {owner})
            self._queue.append(key)
            self._forget_old()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="albert-posthoc-jobs", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return key

    def status(self, key: str, watch: bool = True) -> JobStatus | None:
        with self._cond:
            job = self._jobs.get(key)
            if job is None:
                return None
            if watch:
                job.watched_at = time.monotonic()
            if job.state == "queued":
                position = self._queue.index(key) + len(self._running()) if key in self._queue else None
            else:
                position = 0 if job.state == "running" else None
            seconds = time.monotonic() - job.started if job.state == "running" else job.seconds
            return JobStatus(key, job.plan.variant.label, job.state, position, job.done, job.total, job.message,
                             job.plan, job.doc, seconds, len(job.owners))

    def owns(self, key: str, owner: str) -> bool:
        with self._cond:
            job = self._jobs.get(key)
            return job is not None and owner in job.owners

    def cancel(self, key: str, owner: str) -> bool:
        """Withdraw ``owner``; the job stops (or leaves the queue) when no owner is left. False if not theirs."""
        with self._cond:
            job = self._jobs.get(key)
            if job is None or owner not in job.owners or job.state not in ("queued", "running"):
                return False
            job.owners.discard(owner)
            if not job.owners:
                job.cancel.set()
                if key in self._queue:
                    self._queue.remove(key)
                    job.state, job.message = "cancelled", "cancelled before it started"
            self._cond.notify_all()
            return True

    def wait(self, key: str, timeout: float | None = None) -> JobStatus | None:
        end = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                job = self._jobs.get(key)
                if job is None or job.state in ("done", "cancelled", "failed"):
                    break
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._cond.wait(left)
        return self.status(key, watch=False)

    # ----------------------------------------------------------------------------- the runner
    def _running(self) -> list[str]:
        return [k for k, j in self._jobs.items() if j.state == "running"]

    def _forget_old(self) -> None:
        done = [k for k, j in self._jobs.items() if j.state in ("done", "cancelled", "failed")]
        for k in done[: max(0, len(done) - KEEP_DONE)]:
            del self._jobs[k]

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._thread = None
                    return
                key = self._queue.pop(0)
                job = self._jobs[key]
                job.state, job.started = "running", time.monotonic()
                self._cond.notify_all()
            self._run(job)

    def _should_stop(self, job: _Job) -> bool:
        if job.cancel.is_set():
            return True
        idle = time.monotonic() - job.watched_at
        if self.idle_s and idle > self.idle_s:
            with self._cond:
                job.message = f"stopped: nobody watched it for {idle:.0f} s"
            job.cancel.set()
            return True
        return False

    def _reserve(self, job: _Job) -> Any:
        """The job's planned bytes from the process budget, waiting at most ``wait_s`` for other work to give them
        back, a second at a time, so that a cancel or an unwatched job stops the wait (`Stopped`); BusyError when
        the wait is over."""
        from albert_core.live.budget import PROCESS_BUDGET, BusyError

        end = time.monotonic() + self.wait_s
        while True:
            if self._should_stop(job):
                raise Stopped
            try:
                return PROCESS_BUDGET.reserve(job.plan.reserved_bytes, f"measuring {job.plan.variant.label}",
                                              wait_s=min(1.0, max(0.0, end - time.monotonic())))
            except BusyError as exc:
                if time.monotonic() >= end:
                    raise
                with self._cond:
                    job.message = f"waiting for memory: {exc}"

    def _run(self, job: _Job) -> None:
        def progress(done: int, total: int) -> None:
            with self._cond:
                job.done, job.total, job.message = done, total, ""
                self._cond.notify_all()

        held = None
        try:
            held = self._reserve(job) if self.budget_bytes is None else None
            doc = run_grid([job.plan.variant], self.settings, log=lambda _line: None, budget_bytes=self.budget_bytes,
                           should_stop=lambda: self._should_stop(job), on_progress=progress)
            doc["command"] = "a visitor's job on the Live model page (albert_core.lab.posthoc_jobs)"
            doc["data"]["subsample"] = (f"every dev sentence is scored; the regressions are fitted on "
                                        f"{self.settings.n_train:,} train sentences per seed, as the shipped grid")
            doc["load_average"]["note"] = "the server's load averages while the job ran (2 cores, shared)"
            state, message = "done", ""
        except Stopped:
            doc, state = None, "cancelled"
            message = job.message or "cancelled"
        except Exception as exc:  # noqa: BLE001 - a failed job is reported in its status, not raised
            doc, state = None, "failed"
            message = (str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")[:500]
        finally:
            if held is not None:
                held.release()
        with self._cond:
            job.doc, job.state, job.message = doc, state, message
            job.seconds = time.monotonic() - job.started
            self._cond.notify_all()


_JOBS: PosthocJobs | None = None
_LOCK = threading.Lock()


def get_jobs() -> PosthocJobs:
    """The server process's one post-hoc job queue."""
    global _JOBS
    with _LOCK:
        if _JOBS is None:
            _JOBS = PosthocJobs()
        return _JOBS
