"""The lab's background worker: queue order, positions, cancel, bounds, cache hits, bounded statuses."""

from __future__ import annotations

import os
import time

import pytest

from albert_core.lab import worker as lab_worker
from albert_core.lab.runs import RunCache, run_cached
from albert_core.lab.trainer import LabLimitError, LabLimits
from albert_core.lab.worker import QueueFullError, Worker, get_worker
from tests.helpers.lab import CountingTrain, tiny_spec

LIMITS = LabLimits(max_steps=2000)


@pytest.fixture
def worker(runs_dir):
    w = Worker(workers=1, max_queue=4, cache=RunCache(runs_dir), limits=LIMITS)
    yield w
    w.close()


def _wait_for_step(w: Worker, run_id: str, step: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = w.status(run_id)
        if st.step >= step or st.finished:
            return st.step
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} did not reach step {step}")


def test_the_queue_serves_two_runs_in_order(worker, monkeypatch):
    counter = CountingTrain(monkeypatch)
    first, second = tiny_spec(steps=6), tiny_spec(steps=4, seed=1)
    a, b = worker.submit(first), worker.submit(second)
    assert a == first.key and b == second.key and a != b
    st_b = worker.status(b)
    assert st_b.state == "queued" and st_b.position == 1  # one run ahead of it
    assert worker.status(a).position in (0, 1)
    done_a, done_b = worker.wait(a, 120), worker.wait(b, 120)
    assert done_a.state == done_b.state == "done"
    assert [s.key for s in counter.calls] == [a, b]
    assert done_b.position is None and done_b.step == 4
    assert done_b.history["step"].iloc[-1] == 4 and done_b.final["steps"] == 4
    assert done_b.checkpoint is not None and (done_b.checkpoint / "run.json").is_file()


def test_a_cancel_stops_a_running_run_within_one_step(worker):
    run_id = worker.submit(tiny_spec(steps=1500, eval_every=500, warmup=10))
    at_cancel = _wait_for_step(worker, run_id, 3)
    assert worker.cancel(run_id)
    st = worker.wait(run_id, 60)
    assert st.state == "cancelled" and st.message == "cancelled"
    assert at_cancel <= st.final["steps"] <= at_cancel + 1
    assert st.checkpoint is None and run_id not in worker.cache  # a cancelled run is not cached
    assert not worker.cancel(run_id)  # already finished


def test_a_queued_run_cancelled_never_trains(worker, monkeypatch):
    counter = CountingTrain(monkeypatch)
    long_id = worker.submit(tiny_spec(steps=1500, eval_every=500, warmup=10))
    _wait_for_step(worker, long_id, 1)
    queued = worker.submit(tiny_spec(steps=4, seed=9))
    assert worker.cancel(queued)
    assert worker.status(queued).state == "cancelled" and worker._queue == []  # nothing waits
    worker.cancel(long_id)
    worker.wait(long_id, 60)
    assert [s.key for s in counter.calls] == [long_id]


def test_a_full_queue_refuses_with_the_number_of_runs_ahead(runs_dir):
    w = Worker(workers=1, max_queue=1, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        running = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10))
        _wait_for_step(w, running, 1)
        w.submit(tiny_spec(steps=4, seed=1))
        with pytest.raises(QueueFullError, match="the lab is busy: 2 runs are queued or running and the queue is full"):
            w.submit(tiny_spec(steps=4, seed=2))
    finally:
        w.close()


def test_submit_checks_the_limits_first(worker):
    with pytest.raises(LabLimitError, match="limit of 2,000 steps"):
        worker.submit(tiny_spec(steps=2001, warmup=2))
    assert worker._queue == []


def test_the_same_spec_shares_one_run_and_a_cached_run_is_done_at_once(worker, monkeypatch, runs_dir):
    counter = CountingTrain(monkeypatch)
    spec = tiny_spec(steps=4)
    assert worker.submit(spec) == worker.submit(spec.replace(label="a second visitor"))
    worker.wait(spec.key, 60)
    assert len(counter.calls) == 1
    fresh = Worker(cache=RunCache(runs_dir), limits=LIMITS)  # a new process: statuses from the disk cache
    st = fresh.status(spec.key)
    assert st.state == "done" and st.final["steps"] == 4 and len(st.history) == 5
    assert fresh.submit(spec) == spec.key and fresh.status(spec.key).state == "done"
    assert len(counter.calls) == 1 and fresh._queue == []
    assert fresh.status("0" * 20) is None and fresh.status("../etc") is None


def test_statuses_stay_bounded(runs_dir, monkeypatch):
    specs = [tiny_spec(steps=1, seed=s) for s in range(5)]
    for s in specs:
        run_cached(s, RunCache(runs_dir))
    w = Worker(cache=RunCache(runs_dir), limits=LIMITS, max_statuses=3)
    for s in specs:
        assert w.status(w.submit(s)).state == "done"
    assert len(w._jobs) == 3
    assert w.status(specs[0].key).state == "done"  # forgotten, found again on disk


def test_get_worker_is_one_per_process():
    assert get_worker() is get_worker()


# ----------------------------------------------------------------------------- owners, shares, fairness
def test_only_an_owner_cancels_and_a_shared_run_stops_when_its_last_owner_cancels(worker):
    spec = tiny_spec(steps=1500, eval_every=500, warmup=10)
    run_id = worker.submit(spec, owner="alice")
    _wait_for_step(worker, run_id, 1)
    assert not worker.owns(run_id, "mallory") and not worker.cancel(run_id, "mallory")  # a link grants no control
    assert not worker.cancel(run_id)  # nor does asking without an owner
    assert worker.submit(spec, owner="bob") == run_id  # the same spec: one training, a second owner
    assert worker.owns(run_id, "bob") and worker.owns(run_id, "alice")
    assert worker.cancel(run_id, "alice")  # alice withdraws; bob still wants it
    time.sleep(0.3)
    assert worker.status(run_id).state == "running" and not worker.owns(run_id, "alice")
    assert worker.cancel(run_id, "bob")
    st = worker.wait(run_id, 60)
    assert st.state == "cancelled" and st.message == "cancelled"


def test_a_visitor_holds_at_most_their_share_and_others_still_get_in(runs_dir):
    w = Worker(workers=1, max_queue=8, share=2, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        first = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="greedy")
        w.submit(tiny_spec(steps=4, seed=1), owner="greedy")
        with pytest.raises(QueueFullError, match=r"you already have 2 runs queued or running.*share per visitor \(2\)"):
            w.submit(tiny_spec(steps=4, seed=2), owner="greedy")
        with pytest.raises(QueueFullError, match="share per visitor"):  # joining someone's run counts too
            other = w.submit(tiny_spec(steps=4, seed=3), owner="polite")
            w.submit(w.status(other).spec, owner="greedy")
        assert w.owns(other, "polite") and not w.owns(other, "greedy")
        w.cancel(first, "greedy")
        assert w.wait(first, 60).state == "cancelled"
        w.submit(tiny_spec(steps=4, seed=2), owner="greedy")  # a place of their share is free again
    finally:
        w.close()


def test_the_queue_is_served_round_robin_between_visitors(runs_dir, monkeypatch):
    counter = CountingTrain(monkeypatch)
    w = Worker(workers=1, max_queue=8, share=8, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        blocker = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="a")
        _wait_for_step(w, blocker, 1)
        a1, a2, a3 = (w.submit(tiny_spec(steps=3, seed=s), owner="a") for s in (1, 2, 3))
        b1 = w.submit(tiny_spec(steps=3, seed=4), owner="b")
        # "a" was served last (the blocker): "b"'s run goes first, then a's in arrival order
        assert [w.status(i).position for i in (b1, a1, a2, a3)] == [1, 2, 3, 4]
        w.cancel(blocker, "a")
        for i in (b1, a1, a2, a3):
            assert w.wait(i, 120).state == "done"
    finally:
        w.close()
    assert [s.key for s in counter.calls][1:] == [b1, a1, a2, a3]


def test_a_run_nobody_watches_stops_unless_nearly_done(runs_dir, monkeypatch):
    w = Worker(workers=1, max_queue=4, idle_s=1, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        run_id = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="gone")
        deadline = time.monotonic() + 60
        while (st := w.status(run_id, watch=False)).state != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert st.state == "cancelled" and st.message.startswith("stopped: nobody watched it for")
        assert st.final["steps"] < 1500
        watched = w.submit(tiny_spec(steps=40, seed=5), owner="here")
        done = w.wait(watched, 120)  # a caller waiting watches it
        assert done.state == "done" and done.final["steps"] == 40
        monkeypatch.setattr(lab_worker, "NEARLY_DONE", 0.0)  # every run counts as nearly done: none is stopped
        unwatched = w.submit(tiny_spec(steps=300, seed=6), owner="gone")
        deadline = time.monotonic() + 120
        while not (st := w.status(unwatched, watch=False)).finished and time.monotonic() < deadline:
            time.sleep(0.1)
        assert st.state == "done" and st.elapsed_s > 1  # it outlived the idle limit and finished
    finally:
        w.close()


def test_a_queued_run_shows_an_estimated_wait_once_a_run_has_been_measured(worker):
    assert worker.wait(worker.submit(tiny_spec(steps=30, seed=7)), 120).state == "done"  # the worker's pace
    running = worker.submit(tiny_spec(steps=1500, eval_every=500, warmup=10))
    _wait_for_step(worker, running, 2)
    queued = worker.status(worker.submit(tiny_spec(steps=30, seed=8)))
    assert queued.state == "queued" and queued.position == 1
    left = worker.status(running)
    pace = left.elapsed_s / left.step
    # it waits for the running run's remaining steps at that run's own pace
    assert queued.wait_s == pytest.approx(pace * (1500 - left.step), rel=0.5)
    worker.cancel(running)


def test_a_probed_runs_time_left_counts_its_probe_at_the_runs_own_pace(worker):
    from albert_core.lab import trainer

    spec = tiny_spec(steps=100, probe=True)
    cost = trainer.run_cost(spec)
    assert cost.probe_flops > 0
    job = lab_worker._Job(spec, state="running", step=50, elapsed_s=10.0)
    # half its training in 10 s: the rest of its training and the whole probe at that pace (seconds per FLOP)
    pace = 10.0 / (cost.flops_per_step * 50)
    assert worker._left_s(job) == pytest.approx(pace * (cost.flops_per_step * 50 + cost.probe_flops))
    job.step, job.elapsed_s, job.probe_done, job.probe_total = 100, 40.0, 30, 120  # a quarter through its probe
    pace = 40.0 / (cost.flops_per_step * 100 + cost.probe_flops / 4)
    assert worker._left_s(job) == pytest.approx(pace * cost.probe_flops * 3 / 4)
    plain = lab_worker._Job(tiny_spec(steps=100), state="running", step=50, elapsed_s=10.0)
    assert worker._left_s(plain) == pytest.approx(10.0)  # not probed: its own seconds per step, as before
    worker._s_per_flop = 1e-9  # queued: its FLOPs, the probe's included, at the pace measured here
    assert worker._left_s(lab_worker._Job(spec)) == pytest.approx(
        (cost.flops_per_step * 100 + cost.probe_flops) * 1e-9)


def test_a_new_worker_deletes_the_staging_folders_of_stopped_processes(runs_dir):
    import subprocess
    import sys

    cache = RunCache(runs_dir)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True).stdout.strip()  # a process that has exited
    dead = cache.root / ".staging" / f"{gone}-abc"
    alive = cache.root / ".staging" / f"{os.getppid()}-def"  # another process that still runs
    mine = cache.staging()
    for folder in (dead, alive):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_bytes(b"half written")
    w = Worker(cache=cache, limits=LIMITS)
    try:
        assert not dead.exists() and alive.is_dir() and mine.is_dir()
    finally:
        w.close()


def test_a_process_that_exits_during_a_run_stops_it_cleanly(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = """
import sys, time
from tests.helpers.lab import tiny_spec
from albert_core.lab import worker
w = worker.get_worker()
run_id = w.submit(tiny_spec(steps=1900, eval_every=500, warmup=10), owner="x")
while w.status(run_id).step < 2:
    time.sleep(0.05)
sys.exit(0)
"""
    env = {**os.environ, "ALBERT_EXPLORER_CACHE_DIR": str(tmp_path), "ALBERT_EXPLORER_RUNS_DIR": str(tmp_path / "runs"),
           "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "terminate called" not in done.stderr, done.stderr[-2000:]
    staging = tmp_path / "runs" / ".staging"
    assert staging.is_dir() and not any(staging.iterdir())  # the stopped run left no half-written folder


# ----------------------------------------------------------------------------- a lab any new visitor can enter
def _fill(w: Worker, owner: str, seed0: int) -> list[str]:
    """``owner`` asks for short runs until the worker refuses one; the ids it got."""
    ids = []
    for seed in range(seed0, seed0 + 50):
        try:
            ids.append(w.submit(tiny_spec(steps=4, seed=seed), owner=owner))
        except QueueFullError:
            return ids
    raise AssertionError(f"{owner} was never refused")


def test_three_fresh_owners_fill_the_queue_and_a_fourth_gets_a_place_within_one_run(runs_dir):
    """Issue 40: three sessions without the owner cookie (three owners) held 17 runs and the next visitor read "a
    place frees up in about 93 min". Now the queue's places are shared max-min fairly: a newcomer's run takes the
    place of the newest queued run of the owner holding the most."""
    w = Worker(workers=1, max_queue=8, share=6, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        blocker = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="a")
        _wait_for_step(w, blocker, 1)
        mine = {o: _fill(w, o, seed0) for o, seed0 in (("a", 100), ("b", 200), ("c", 300))}
        assert len(w._queue) == 8  # full, and shared out evenly: nobody holds two more than another
        held = {o: sum(1 for rid in w._queue if o in w._jobs[rid].owners) for o in "abc"}
        assert sorted(held.values()) == [2, 3, 3], held
        assert w.room("d") == 2  # a fourth owner may take two places (from the two holding 3)
        took = w.submit(tiny_spec(steps=4, seed=400), owner="d")  # a place at once, no waiting for the queue
        st = w.status(took)
        assert st.state == "queued" and st.message == lab_worker.TOOK_PLACE
        evicted = [w.status(i) for ids in mine.values() for i in ids if w.status(i).state == "cancelled"]
        evicted = [s for s in evicted if s.message == lab_worker.EVICTED]
        assert len(evicted) == 4  # three taken while b and c filled it (for fairness), one more for d
        assert len(w._queue) == 8
        # round-robin: at most one run of each owner that has not been served yet is ahead of it ("b", "c");
        # no owner's second run
        ahead = w._order()[: w._order().index(took)]
        assert len(ahead) <= 2 and len({next(iter(w._jobs[rid].owners)) for rid in ahead}) == len(ahead)
        assert "a" not in {next(iter(w._jobs[rid].owners)) for rid in ahead}  # "a" was served (the blocker)
    finally:
        w.close()


def test_when_every_owner_holds_one_run_a_place_frees_up_within_one_run(runs_dir):
    w = Worker(workers=1, max_queue=3, share=6, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        assert w.wait(w.submit(tiny_spec(steps=30, seed=7), owner="x"), 120).state == "done"  # the worker's pace
        running = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="x")
        _wait_for_step(w, running, 2)
        for o, seed in (("p", 1), ("q", 2), ("r", 3)):
            w.submit(tiny_spec(steps=4, seed=seed), owner=o)
        assert w.room("s") == 0
        with pytest.raises(QueueFullError, match=r"shared out evenly.*a place frees up in about .+ when the running "
                                                 r"run ends") as refused:
            w.submit(tiny_spec(steps=4, seed=4), owner="s")
        # about the running run's time left, not the whole queue's
        left = w._left_s(w._jobs[running])
        assert f"about {lab_worker.fmt_duration(left)}"[:12] in str(refused.value) or left < 2
        w.cancel(running, "x")  # the running run ends: the next starts and its place is free
        deadline = time.monotonic() + 60
        while len(w._queue) == 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert w.submit(tiny_spec(steps=4, seed=4), owner="s")
    finally:
        w.close()


def test_an_owner_holding_the_most_cannot_push_others_out(runs_dir):
    w = Worker(workers=1, max_queue=4, share=6, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        blocker = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner="big")
        _wait_for_step(w, blocker, 1)
        small = w.submit(tiny_spec(steps=4, seed=1), owner="small")
        assert len(_fill(w, "big", 10)) == 3
        with pytest.raises(QueueFullError):  # big holds 3, small 1: big gets nothing more
            w.submit(tiny_spec(steps=4, seed=20), owner="big")
        assert w.status(small).state == "queued" and w.room("big") == 0
        shared = w._queue[-1]
        assert w.submit(w.status(shared).spec, owner="small") == shared  # small joins one of big's runs
        w.submit(tiny_spec(steps=4, seed=30), owner="new")  # a newcomer takes one of big's own runs, not the shared
        assert w.status(shared).state == "queued" and w.status(small).state == "queued"
    finally:
        w.close()
