"""The process-wide training worker: background threads, a bounded queue, status by run id.

    w = get_worker()
    run_id = w.submit(spec)    # LabLimitError (over a limit) / QueueFullError (queue full); a cached run is done at once
    st = w.status(run_id)      # RunStatus, or None for an id this process never saw and the cache lacks
    w.cancel(run_id)           # a queued run leaves the queue; a running one stops after its current step

The run id is the spec's key: every visitor asking for the same run shares one queued / running /
finished run, and an id in a URL finds its run again after a page reload (and, once finished, after
a server restart, through the disk cache). Settings: $ALBERT_EXPLORER_LAB_WORKERS threads (default 1;
each run uses its own torch threads, see albert_core.lab.trainer), $ALBERT_EXPLORER_LAB_QUEUE
runs waiting at most (default 8). A run taken from the queue first reserves its training memory in the
process-wide budget (`albert_core.budget`, shared with the Live model page), waiting at most
$ALBERT_EXPLORER_LAB_MEMORY_WAIT_S seconds (default 600) while others hold it: it stays "queued" (next,
its message says why) meanwhile, and fails with the budget's message after that. The worker remembers at most ``max_statuses`` runs; the oldest
finished ones are forgotten first (a finished run comes back from the disk cache).
"""

from __future__ import annotations

import collections
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from albert_core.lab import trainer
from albert_core.lab.baselines import Baselines
from albert_core.lab.runs import RunCache
from albert_core.lab.spec import RunSpec

STATES = ("queued", "running", "done", "cancelled", "failed")
FINISHED = ("done", "cancelled", "failed")
WORKERS_ENV = "ALBERT_EXPLORER_LAB_WORKERS"
QUEUE_ENV = "ALBERT_EXPLORER_LAB_QUEUE"
WAIT_ENV = "ALBERT_EXPLORER_LAB_MEMORY_WAIT_S"


class QueueFullError(RuntimeError):
    """The queue holds its maximum number of runs."""


@dataclass(frozen=True)
class RunStatus:
    run_id: str
    spec: RunSpec
    state: str
    position: int | None  # 0 running, n: n runs ahead of it, None when finished
    step: int
    steps: int
    elapsed_s: float
    eta_s: float | None
    history: pd.DataFrame
    final: dict[str, float]
    message: str
    checkpoint: Path | None
    baselines: Baselines | None = None  # of the held-out batches it is scored on (known once it trains)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


@dataclass
class _Job:
    spec: RunSpec
    state: str = "queued"
    step: int = 0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    rows: list[dict[str, float]] = field(default_factory=list)
    final: dict[str, float] = field(default_factory=dict)
    message: str = ""
    checkpoint: Path | None = None
    history: pd.DataFrame | None = None
    baselines: Baselines | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    finished_at: float = 0.0


def _setting(env: str, default: int, lo: int, hi: int) -> int:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not lo <= int(raw) <= hi:
        raise ValueError(f"{env} must be a whole number between {lo} and {hi}, got {raw[:20]!r}")
    return int(raw)


class Worker:
    def __init__(
        self,
        workers: int | None = None,
        max_queue: int | None = None,
        *,
        cache: RunCache | None = None,
        limits: trainer.LabLimits | None = None,
        max_statuses: int = 64,
        wait_s: float | None = None,
    ):
        self.workers = _setting(WORKERS_ENV, 1, 1, 16) if workers is None else workers
        self.max_queue = _setting(QUEUE_ENV, 8, 0, 1000) if max_queue is None else max_queue
        self.cache = RunCache() if cache is None else cache
        self.limits = limits
        self.wait_s = _setting(WAIT_ENV, 600, 0, 86_400) if wait_s is None else wait_s
        self.max_statuses = max_statuses
        self._jobs: collections.OrderedDict[str, _Job] = collections.OrderedDict()
        self._queue: collections.deque[str] = collections.deque()
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._closed = False

    # ----------------------------------------------------------------------------- public API
    def submit(self, spec: RunSpec) -> str:
        """Queue ``spec`` (bounded first: LabLimitError) and return its run id (= spec.key)."""
        trainer.check_run(spec, self.limits)
        run_id = spec.key
        with self._cond:
            job = self._jobs.get(run_id)
            if job is not None and job.state in ("queued", "running", "done"):
                return run_id
        cached = self.cache.get(run_id)
        with self._cond:
            if cached is not None:
                cached.spec = spec  # the same run, under this request's label
                self._remember(run_id, self._done_job(cached))
                return run_id
            job = self._jobs.get(run_id)
            if job is not None and job.state in ("queued", "running", "done"):
                return run_id
            if len(self._queue) >= self.max_queue:
                ahead = len(self._queue) + self._running()
                raise QueueFullError(
                    f"the lab is busy, {ahead} runs ahead; try again when one has finished"
                )
            self._remember(run_id, _Job(spec))
            self._queue.append(run_id)
            self._start_threads()
            self._cond.notify()
        return run_id

    def status(self, run_id: str) -> RunStatus | None:
        with self._cond:
            job = self._jobs.get(run_id)
            if job is not None:
                return self._status(run_id, job)
        try:
            cached = self.cache.get(run_id)
        except ValueError:
            return None
        if cached is None:
            return None
        with self._cond:
            job = self._jobs.get(run_id) or self._remember(run_id, self._done_job(cached))
            return self._status(run_id, job)

    def cancel(self, run_id: str) -> bool:
        """Cancel a queued or running run; False if it is unknown or already finished."""
        with self._cond:
            job = self._jobs.get(run_id)
            if job is None or job.state in FINISHED:
                return False
            if job.state == "queued":
                self._queue.remove(run_id)
                job.state, job.message, job.finished_at = "cancelled", "cancelled before it started", time.time()
            job.cancel.set()
            return True

    def wait(self, run_id: str, timeout: float | None = None) -> RunStatus | None:
        """Block until the run has finished (or ``timeout`` seconds); its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                job = self._jobs.get(run_id)
                if job is None or job.state in FINISHED:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(remaining)
        return self.status(run_id)

    def queue_length(self) -> int:
        with self._cond:
            return len(self._queue)

    def close(self) -> None:
        """Stop the threads after their current run (tests; a server process never needs it)."""
        with self._cond:
            self._closed = True
            for run_id in list(self._queue):
                self._jobs[run_id].state = "cancelled"
            self._queue.clear()
            for job in self._jobs.values():
                job.cancel.set()
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout=30)

    # ----------------------------------------------------------------------------- internals
    def _running(self) -> int:
        return sum(1 for j in self._jobs.values() if j.state == "running")

    def _claimed(self) -> int:
        """Runs a worker thread took from the queue that still wait for their memory."""
        return sum(1 for rid, j in self._jobs.items() if j.state == "queued" and rid not in self._queue)

    def _status(self, run_id: str, job: _Job) -> RunStatus:
        if job.state == "queued":
            # a run taken from the queue waits for its memory first: it is next (position 1)
            position = self._queue.index(run_id) + self._running() + self._claimed() if run_id in self._queue else 1
        else:
            position = 0 if job.state == "running" else None
        history = job.history if job.history is not None else pd.DataFrame(job.rows, columns=list(trainer.HISTORY_COLUMNS))
        return RunStatus(
            run_id=run_id, spec=job.spec, state=job.state, position=position, step=job.step,
            steps=job.spec.steps, elapsed_s=job.elapsed_s, eta_s=job.eta_s, history=history.copy(),
            final=dict(job.final), message=job.message, checkpoint=job.checkpoint, baselines=job.baselines,
        )

    @staticmethod
    def _done_job(result: Any) -> _Job:
        return _Job(
            result.spec, state="done", step=int(result.final.get("steps", result.spec.steps)),
            elapsed_s=result.seconds, eta_s=0.0, final=dict(result.final), checkpoint=result.checkpoint,
            history=result.history, message="from the cache of finished runs", finished_at=time.time(),
            baselines=result.baselines,
        )

    def _remember(self, run_id: str, job: _Job) -> _Job:
        self._jobs[run_id] = job
        self._jobs.move_to_end(run_id)
        finished = [rid for rid, j in self._jobs.items() if j.state in FINISHED and rid != run_id]
        while len(self._jobs) > self.max_statuses and finished:
            del self._jobs[finished.pop(0)]
        return job

    def _start_threads(self) -> None:
        self._threads = [t for t in self._threads if t.is_alive()]
        while len(self._threads) < self.workers:
            t = threading.Thread(target=self._loop, name=f"albert-lab-worker-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                run_id = self._queue.popleft()
                job = self._jobs[run_id]  # stays "queued" (next in line) until its memory is reserved
                self._cond.notify_all()
            self._run(run_id, job)

    def _run(self, run_id: str, job: _Job) -> None:
        def on_progress(p: trainer.Progress) -> None:
            with self._cond:
                job.step, job.elapsed_s, job.eta_s = p.step, p.elapsed_s, p.eta_s
                if p.row is not None:
                    job.rows.append(p.row)
                if p.baselines is not None:
                    job.baselines = p.baselines

        def on_wait(message: str) -> None:
            with self._cond:
                job.message = f"waiting for memory: {message}"

        staging = self.cache.staging()
        try:
            # the run's training memory, held in the process-wide budget until it ends (Live-model
            # visitors and other runs reserve from the same budget): wait for it, else fail with its message
            memory = trainer.reserve_run(job.spec, wait_s=self.wait_s, should_stop=job.cancel.is_set,
                                         on_wait=on_wait)
            if memory is None:  # cancelled while waiting
                self.cache.discard(staging)
                with self._cond:
                    job.state, job.message, job.finished_at = "cancelled", "cancelled before it started", time.time()
                    self._cond.notify_all()
                return
            with self._cond:
                job.state, job.message = "running", ""
                self._cond.notify_all()
            result = trainer.train(job.spec, on_progress, job.cancel.is_set, staging, limits=self.limits,
                                   memory=memory)
            if result.cancelled:
                self.cache.discard(staging)
            else:
                result = self.cache.put(result)
            result.model = None
        except Exception as exc:  # noqa: BLE001 - a failed run is reported in its status, not raised
            self.cache.discard(staging)
            with self._cond:
                # a refused run (budget, limit, bad value) says why in plain words; anything else names its type
                why = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
                job.state, job.message, job.finished_at = "failed", why[:500], time.time()
                self._cond.notify_all()
            return
        with self._cond:
            job.history = result.history
            job.final = dict(result.final)
            job.baselines = result.baselines or job.baselines
            job.elapsed_s = result.seconds
            job.eta_s = 0.0
            job.finished_at = time.time()
            if result.cancelled:
                job.state, job.message = "cancelled", result.message
            else:
                job.state, job.checkpoint = "done", result.checkpoint
            self._cond.notify_all()


_WORKER: Worker | None = None
_WORKER_LOCK = threading.Lock()


def get_worker() -> Worker:
    """The process's one Worker (created on first use with the settings from the environment)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = Worker()
        return _WORKER
