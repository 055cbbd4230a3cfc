"""The process-wide training worker: background threads, a bounded fair queue, status by run id.

    w = get_worker()
    run_id = w.submit(spec, owner)  # LabLimitError (over a limit) / QueueFullError (queue or share full)
    st = w.status(run_id)           # RunStatus, or None for an id this process never saw and the cache lacks
    w.cancel(run_id, owner)         # withdraws this owner's interest; the run stops when nobody wants it

The run id is the spec's key: every visitor asking for the same run shares one queued / running /
finished run (the training and the cached result, not control), and an id in a URL finds its run again
after a page reload (and, once finished, after a server restart, through the disk cache). An id grants
no control: ``owner`` is a secret of the visitor's browser (the Train page keeps it in a cookie, never in a
URL); only the owners of a run can cancel it, and cancelling withdraws one owner's interest.
A run stops when its last owner cancels it, and when nobody has asked for its status for
$ALBERT_EXPLORER_LAB_IDLE_S seconds (default 300; 0 never) unless it is at least `NEARLY_DONE` through.

Fairness: each owner holds at most $ALBERT_EXPLORER_LAB_SHARE runs queued or running at once (default 6, the
largest experiment at one seed), and the queue is served round-robin between owners (the next run is the oldest
one of the owner served least recently). The queue's places are shared max-min fairly, which does not depend on
visitors keeping their owner cookie (each new session is a new owner): when the queue is full, a run of an owner
holding at least two queued runs fewer than the owner holding the most takes the place of that owner's newest
queued run, which leaves the queue ("cancelled", its message says why; the newcomer's run says so too). So a
newcomer always gets a place at once unless every owner in the queue holds one run, and then a place frees up
when the running run ends (the refusal says about when). Settings: $ALBERT_EXPLORER_LAB_WORKERS threads (default 1;
each run uses its own torch threads, see albert_core.lab.trainer), $ALBERT_EXPLORER_LAB_QUEUE
runs waiting at most (default 16). A run taken from the queue first reserves its training memory in the
process-wide budget (`albert_core.live.budget`, shared with the Live model page), waiting at most
$ALBERT_EXPLORER_LAB_MEMORY_WAIT_S seconds (default 600) while others hold it: it stays "queued" (next,
its message says why) meanwhile, and fails with the budget's message after that. The worker remembers at
most ``max_statuses`` runs; the oldest finished ones are forgotten first (a finished run comes back from
the disk cache).
"""

from __future__ import annotations

import atexit
import collections
import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from albert_core import settings
from albert_core.format import fmt_duration
from albert_core.lab import trainer
from albert_core.lab.baselines import Baselines
from albert_core.lab.outcome import HISTORY_COLUMNS, Progress
from albert_core.lab.runs import RunCache
from albert_core.lab.spec import RunSpec

FINISHED = ("done", "cancelled", "failed")
NEARLY_DONE = 0.9  # a run this far through its training finishes it even when nobody watches it any more
# what the owners of a queued run read when a newcomer took its place, and what the newcomer reads
EVICTED = ("taken out of the queue before it started: the queue was full and a visitor with fewer runs in it "
           "took its place (the queue's places are shared out evenly, and you held the most); ask for it again "
           "once your other runs have started")
PROBE_STOPPED = "its downstream probe stopped"  # how a done run's message begins when its probe was stopped
TOOK_PLACE = ("the queue was full: this run took the place of the newest queued run of the visitor holding the "
              "most runs in it (the queue's places are shared out evenly)")


class QueueFullError(RuntimeError):
    """The queue holds its maximum number of runs, or the owner holds their share of it."""


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
    wait_s: float | None = None  # queued: estimated seconds until it starts (None: nothing measured yet)
    probe_done: int = 0  # the downstream probe's fine-tuning steps done (after training) ...
    probe_total: int = 0  # ... of this many (0: not probing, or not yet)
    probe: Any = None  # a finished probed run's ProbeResult (albert_core.lab.probe)

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
    owners: set[str] = field(default_factory=set)  # who asked for it and has not cancelled
    watched_at: float = field(default_factory=time.monotonic)  # last status request
    stop_reason: str = ""  # why the worker stopped it (nobody wants it, nobody watches)
    claimed: bool = False  # taken from the queue by a worker thread (it may still wait for memory)
    probe_done: int = 0
    probe_total: int = 0
    probe: Any = None
    seq: int = field(default_factory=lambda: next(_SEQ))  # order of submission


_SEQ = itertools.count()


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
        share: int | None = None,
        idle_s: float | None = None,
    ):
        self.workers = settings.lab_workers() if workers is None else workers
        self.max_queue = settings.lab_queue() if max_queue is None else max_queue
        self.share = settings.lab_share() if share is None else share
        self.idle_s = settings.lab_idle_s() if idle_s is None else idle_s
        self.cache = RunCache() if cache is None else cache
        self.cache.clean_staging()  # what a server stopped during a run left behind
        self.limits = limits
        self.wait_s = settings.lab_memory_wait_s() if wait_s is None else wait_s
        self.max_statuses = max_statuses
        self._jobs: collections.OrderedDict[str, _Job] = collections.OrderedDict()
        self._queue: list[str] = []  # waiting run ids in arrival order; served round-robin by owner
        self._served: dict[str, int] = {}  # owner -> the tick their last run started (round-robin)
        self._tick = 0
        self._s_per_flop: float | None = None  # measured: wall seconds per training FLOP of finished runs
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._closed = False

    # ----------------------------------------------------------------------------- public API
    def submit(self, spec: RunSpec, owner: str = "") -> str:
        """Queue ``spec`` for ``owner`` (bounded first: LabLimitError) and return its run id (= spec.key).
        A run someone else already queued or runs gains ``owner`` as a further owner (one training for
        both); QueueFullError when the queue is full or ``owner`` holds their share of it."""
        trainer.check_run(spec, self.limits)
        run_id = spec.key
        with self._cond:
            if self._join(run_id, owner):
                return run_id
        cached = self.cache.get(run_id)
        with self._cond:
            if cached is not None:
                cached.spec = spec  # the same run, under this request's label
                self._remember(run_id, self._done_job(cached))
                return run_id
            if self._join(run_id, owner):
                return run_id
            self._check_share(owner)
            job, place = _Job(spec, owners={owner}), len(self._queue)
            if len(self._queue) >= self.max_queue:
                victim = self._victim(owner)
                if victim is None:
                    raise QueueFullError(self._full_message())
                place = self._queue.index(victim)
                self._evict(victim)
                job.message = TOOK_PLACE
            self._remember(run_id, job)
            self._queue.insert(place, run_id)
            self._keep_arrival_order(owner)
            self._start_threads()
            self._cond.notify()
        return run_id

    def room(self, owner: str) -> int:
        """How many more runs ``owner`` can queue now: their share left, and the queue's free places plus the
        places they may take from owners holding more (see the module docstring)."""
        with self._cond:
            counts = self._queued_counts()
            free = max(0, self.max_queue - len(self._queue))
            mine, taken = counts.pop(owner, 0) + free, 0
            while counts:
                top = max(counts, key=counts.__getitem__)
                if counts[top] < mine + 2:
                    break
                counts[top] -= 1
                mine, taken = mine + 1, taken + 1
            return max(0, min(self.share - self._held(owner), free + taken))

    def pace(self) -> float | None:
        """Wall seconds per training FLOP measured on this worker's finished runs, None before the first (a
        probed run's FLOPs include its probe's estimate: its seconds include the probe's)."""
        with self._cond:
            return self._s_per_flop

    def busy(self) -> int:
        """How many runs are queued or running now (a run the page plans now waits for them)."""
        with self._cond:
            return len(self._queue) + self._running() + self._claimed()

    def owns(self, run_id: str, owner: str) -> bool:
        """Whether ``owner`` asked for this queued or running run (and may cancel it)."""
        with self._cond:
            job = self._jobs.get(run_id)
            return job is not None and job.state not in FINISHED and owner in job.owners

    def status(self, run_id: str, watch: bool = True) -> RunStatus | None:
        """The run's status; asking counts as watching it unless ``watch`` is False (see the module
        docstring)."""
        with self._cond:
            job = self._jobs.get(run_id)
            if job is not None:
                if watch:
                    job.watched_at = time.monotonic()
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

    def cancel(self, run_id: str, owner: str = "") -> bool:
        """Withdraw ``owner``'s interest in a queued or running run; the run stops (a queued one leaves
        the queue, a running one stops after its current step) when no owner is left. False if the run
        is unknown, finished, or not ``owner``'s."""
        with self._cond:
            job = self._jobs.get(run_id)
            if job is None or job.state in FINISHED or owner not in job.owners:
                return False
            job.owners.discard(owner)
            if not job.owners:
                self._stop(run_id, job, "cancelled")
            return True

    def wait(self, run_id: str, timeout: float | None = None) -> RunStatus | None:
        """Block until the run has finished (or ``timeout`` seconds); its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                job = self._jobs.get(run_id)
                if job is None or job.state in FINISHED:
                    break
                job.watched_at = time.monotonic()  # a caller waiting for it watches it
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                beat = min(5.0, self.idle_s / 2) if self.idle_s else 5.0  # wake to keep watching it
                self._cond.wait(beat if remaining is None else min(remaining, beat))
        return self.status(run_id)

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
        return sum(1 for j in self._jobs.values() if j.state == "queued" and j.claimed)

    def _held(self, owner: str) -> int:
        return sum(1 for j in self._jobs.values() if j.state in ("queued", "running") and owner in j.owners)

    def _check_share(self, owner: str) -> None:
        """QueueFullError when ``owner`` holds their share (joining someone's run counts too)."""
        mine = self._held(owner)
        if mine >= self.share:
            raise QueueFullError(
                f"you already have {mine} runs queued or running, this lab's share per visitor "
                f"({self.share}); cancel one or try again when one has finished"
            )

    def _queued_counts(self) -> collections.Counter[str]:
        """Waiting runs per owner (a run several owners asked for counts for each)."""
        return collections.Counter(o for rid in self._queue for o in self._jobs[rid].owners)

    def _victim(self, owner: str) -> str | None:
        """The queued run a new run of ``owner`` takes the place of in a full queue (max-min fairness): the newest
        queued run of the owner holding the most (one that owner alone asked for, if there is one), when every owner
        of it holds at least two more queued runs than ``owner``; None when there is none (every owner holds about as
        many as ``owner``)."""
        counts = self._queued_counts()
        mine = counts.get(owner, 0)
        top = max((n for o, n in counts.items() if o != owner), default=0)
        if top < mine + 2:
            return None
        candidates = [rid for rid in reversed(self._queue) if owner not in (owners := self._jobs[rid].owners)
                      and any(counts[o] == top for o in owners) and all(counts[o] >= mine + 2 for o in owners)]
        alone = [rid for rid in candidates if len(self._jobs[rid].owners) == 1]  # one owner's interest, not two
        return (alone or candidates or [None])[0]

    def _keep_arrival_order(self, owner: str) -> None:
        """The runs ``owner`` alone asked for keep their order of submission across the places they hold (a run
        that took another's place may stand before this owner's earlier runs)."""
        places = [i for i, rid in enumerate(self._queue) if self._jobs[rid].owners == {owner}]
        runs = sorted((self._queue[i] for i in places), key=lambda rid: self._jobs[rid].seq)
        for i, rid in zip(places, runs, strict=True):
            self._queue[i] = rid

    def _evict(self, run_id: str) -> None:
        """Take a queued run out of the queue for a newcomer's (under the lock): it never trains, and its owners
        read why."""
        job = self._jobs[run_id]
        self._queue.remove(run_id)
        job.state, job.finished_at, job.message, job.stop_reason = "cancelled", time.time(), EVICTED, EVICTED
        job.cancel.set()
        self._cond.notify_all()

    def _full_message(self) -> str:
        ahead = len(self._queue) + self._running() + self._claimed()
        wait = self._place_frees_in()
        return (f"the lab is busy: {ahead} runs are queued or running and the queue is full (at most "
                f"{self.max_queue} waiting, shared out evenly: every visitor in it holds as few runs as you or one "
                "more); " + (f"a place frees up in about {fmt_duration(max(wait, 1.0))}, when the running run ends"
                             if wait is not None else "a place frees up when the running run ends"))

    def _place_frees_in(self) -> float | None:
        """Estimated seconds until a worker thread takes the next waiting run (a place in the queue frees up):
        the shortest time left of the runs the threads hold (running, or taken and waiting for memory); 0 while
        a thread is free; None before anything is measured."""
        held = [j for j in self._jobs.values() if j.state == "running" or (j.state == "queued" and j.claimed)]
        if len(held) < self.workers:
            return 0.0
        times = [t for t in (self._left_s(j) for j in held) if t is not None]
        return min(times) if times else None

    def _join(self, run_id: str, owner: str) -> bool:
        """``owner`` joins a queued, running or finished run of this id; False if there is none."""
        job = self._jobs.get(run_id)
        if job is None or job.state not in ("queued", "running", "done"):
            return False
        if job.state != "done" and owner not in job.owners:
            self._check_share(owner)
            job.owners.add(owner)
        job.watched_at = time.monotonic()
        return True

    def _stop(self, run_id: str, job: _Job, reason: str) -> None:
        """Stop a queued or running job (under the lock): a waiting one leaves the queue at once; a
        running one, or one waiting for its memory, stops at its next check."""
        job.stop_reason = reason
        if run_id in self._queue:
            self._queue.remove(run_id)
            job.state, job.finished_at = "cancelled", time.time()
            job.message = f"{reason} before it started"
            self._cond.notify_all()
        job.cancel.set()

    def _order(self) -> list[str]:
        """The waiting runs in the order the round-robin will start them."""
        served = dict(self._served)
        tick = self._tick
        waiting = list(self._queue)
        order = []
        while waiting:
            best = min(waiting, key=lambda rid: (min((served.get(o, -1) for o in self._jobs[rid].owners),
                                                     default=-1), waiting.index(rid)))
            waiting.remove(best)
            order.append(best)
            tick += 1
            for o in self._jobs[best].owners:
                served[o] = tick
        return order

    def _left_s(self, job: _Job) -> float | None:
        """Estimated wall seconds until ``job`` finishes: its own pace when it is running, else its
        training FLOPs (and its downstream probe's, an estimate) at the pace measured on this worker's
        finished runs."""
        if job.state == "running" and job.step > 0:
            cost = trainer.run_cost(job.spec)
            probed = job.probe_done / job.probe_total if job.probe_total else 0.0
            done = cost.flops_per_step * job.step + cost.probe_flops * probed
            left = cost.flops_per_step * (job.spec.steps - job.step) + cost.probe_flops * (1 - probed)
            return job.elapsed_s / done * left
        if self._s_per_flop is None:
            return None
        cost = trainer.run_cost(job.spec)
        return (cost.flops_per_step * job.spec.steps + cost.probe_flops) * self._s_per_flop

    def _wait_for(self, ahead: int) -> float | None:
        """Estimated seconds until a run with ``ahead`` waiting runs before it starts: the running runs'
        remaining time and the waiting runs' estimates, spread over the worker threads."""
        running = [j for j in self._jobs.values() if j.state == "running"]
        waiting = [self._jobs[rid] for rid in self._order()[:ahead]]
        claimed = [j for j in self._jobs.values() if j.state == "queued" and j.claimed]
        times = [self._left_s(j) for j in running + claimed + waiting]
        if any(t is None for t in times):
            return None
        return sum(times) / self.workers

    def _status(self, run_id: str, job: _Job) -> RunStatus:
        wait = None
        if job.state == "queued":
            # a run taken from the queue waits for its memory first: it is next (position 1)
            if run_id in self._queue:
                ahead = self._order().index(run_id)
                position = ahead + self._running() + self._claimed()
                wait = self._wait_for(ahead)
            else:
                position = 1
        else:
            position = 0 if job.state == "running" else None
        history = job.history if job.history is not None else pd.DataFrame(job.rows, columns=list(HISTORY_COLUMNS))
        return RunStatus(
            run_id=run_id, spec=job.spec, state=job.state, position=position, step=job.step,
            steps=job.spec.steps, elapsed_s=job.elapsed_s, eta_s=job.eta_s, history=history.copy(),
            final=dict(job.final), message=job.message, checkpoint=job.checkpoint, baselines=job.baselines,
            wait_s=wait, probe_done=job.probe_done, probe_total=job.probe_total, probe=job.probe,
        )

    @staticmethod
    def _done_job(result: Any) -> _Job:
        return _Job(
            result.spec, state="done", step=int(result.final.get("steps", result.spec.steps)),
            elapsed_s=result.seconds, eta_s=0.0, final=dict(result.final), checkpoint=result.checkpoint,
            history=result.history, message="from the cache of finished runs", finished_at=time.time(),
            baselines=result.baselines, probe=result.probe,
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
                run_id = self._order()[0]
                self._queue.remove(run_id)
                job = self._jobs[run_id]  # stays "queued" (next in line) until its memory is reserved
                job.claimed = True
                self._tick += 1
                for o in job.owners:
                    self._served[o] = self._tick
                self._cond.notify_all()
            self._run(run_id, job)

    def _run(self, run_id: str, job: _Job) -> None:
        def on_progress(p: Progress) -> None:
            with self._cond:
                job.step, job.elapsed_s, job.eta_s = p.step, p.elapsed_s, p.eta_s
                if p.row is not None:
                    job.rows.append(p.row)
                if p.baselines is not None:
                    job.baselines = p.baselines
                job.probe_done, job.probe_total = p.probe_done, p.probe_total

        def on_wait(message: str) -> None:
            with self._cond:
                job.message = f"waiting for memory: {message}"

        def should_stop() -> bool:
            if job.cancel.is_set():
                return True
            idle = time.monotonic() - job.watched_at
            # a run nearly through its training finishes it; its downstream probe (asked after the last step)
            # stops like any unwatched work, and the training result is kept (`trainer.train`)
            finishing = NEARLY_DONE * job.spec.steps <= job.step < job.spec.steps
            if self.idle_s and idle > self.idle_s and not finishing:
                with self._cond:
                    job.stop_reason = f"stopped: nobody watched it for {fmt_duration(idle)}"
                job.cancel.set()
                return True
            return False

        staging = self.cache.staging()
        try:
            # the run's training memory, held in the process-wide budget until it ends (Live-model
            # visitors and other runs reserve from the same budget): wait for it, else fail with its message
            memory = trainer.reserve_run(job.spec, wait_s=self.wait_s, should_stop=should_stop, on_wait=on_wait)
            if memory is None or should_stop():  # nobody wants it any more (cancelled while it waited)
                if memory is not None:
                    memory.release()
                self.cache.discard(staging)
                with self._cond:
                    job.state, job.finished_at = "cancelled", time.time()
                    job.message = f"{job.stop_reason or 'cancelled'} before it started"
                    self._cond.notify_all()
                return
            with self._cond:
                job.state, job.message = "running", ""
                self._cond.notify_all()
            result = trainer.train(job.spec, on_progress, should_stop, staging, limits=self.limits, memory=memory)
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
            job.probe = result.probe
            job.elapsed_s = result.seconds
            job.eta_s = 0.0
            job.finished_at = time.time()
            if result.cancelled:
                job.state, job.message = "cancelled", job.stop_reason or result.message
            elif result.probe_stopped:  # trained, its probe stopped: the training is kept, as the run without it
                job.state, job.checkpoint, job.spec = "done", result.checkpoint, result.spec
                why = job.stop_reason.removeprefix("stopped: ") if job.stop_reason else result.probe_stopped
                job.message = f"{PROBE_STOPPED} ({why}); the training is kept, as the run without the probe"
            else:
                job.state, job.checkpoint = "done", result.checkpoint
                cost = trainer.run_cost(job.spec)
                flops = cost.flops_per_step * max(1, job.step or job.spec.steps)
                flops += cost.probe_flops if result.probe is not None else 0  # its seconds include the probe's
                pace = result.seconds / flops
                self._s_per_flop = pace if self._s_per_flop is None else 0.5 * (self._s_per_flop + pace)
            self._cond.notify_all()


_WORKER: Worker | None = None
_WORKER_LOCK = threading.Lock()


def get_worker() -> Worker:
    """The process's one Worker (created on first use with the settings from the environment)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = Worker()
            # a server stopping during a run: stop the run after its current step and let its thread end
            # before the interpreter does (a torch op killed mid-way aborts the process with "terminate
            # called without an active exception")
            atexit.register(_WORKER.close)
        return _WORKER
