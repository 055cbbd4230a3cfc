"""The lab's background worker: queue order, positions, cancel, bounds, cache hits, bounded statuses."""

from __future__ import annotations

import time

import pytest
from lab_helpers import CountingTrain, runs_dir, tiny_spec  # noqa: F401 (runs_dir is a fixture)

from albert_core.lab.runs import RunCache, run_cached
from albert_core.lab.trainer import LabLimitError, LabLimits
from albert_core.lab.worker import QueueFullError, Worker, get_worker

LIMITS = LabLimits(max_steps=2000)


@pytest.fixture
def worker(runs_dir):  # noqa: F811
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
    assert worker.status(queued).state == "cancelled" and worker.queue_length() == 0
    worker.cancel(long_id)
    worker.wait(long_id, 60)
    assert [s.key for s in counter.calls] == [long_id]


def test_a_full_queue_refuses_with_the_number_of_runs_ahead(runs_dir):  # noqa: F811
    w = Worker(workers=1, max_queue=1, cache=RunCache(runs_dir), limits=LIMITS)
    try:
        running = w.submit(tiny_spec(steps=1500, eval_every=500, warmup=10))
        _wait_for_step(w, running, 1)
        w.submit(tiny_spec(steps=4, seed=1))
        with pytest.raises(QueueFullError, match="the lab is busy, 2 runs ahead"):
            w.submit(tiny_spec(steps=4, seed=2))
    finally:
        w.close()


def test_submit_checks_the_limits_first(worker):
    with pytest.raises(LabLimitError, match="limit of 2,000 steps"):
        worker.submit(tiny_spec(steps=2001, warmup=2))
    assert worker.queue_length() == 0


def test_the_same_spec_shares_one_run_and_a_cached_run_is_done_at_once(worker, monkeypatch, runs_dir):  # noqa: F811
    counter = CountingTrain(monkeypatch)
    spec = tiny_spec(steps=4)
    assert worker.submit(spec) == worker.submit(spec.replace(label="a second visitor"))
    worker.wait(spec.key, 60)
    assert len(counter.calls) == 1
    fresh = Worker(cache=RunCache(runs_dir), limits=LIMITS)  # a new process: statuses from the disk cache
    st = fresh.status(spec.key)
    assert st.state == "done" and st.final["steps"] == 4 and len(st.history) == 5
    assert fresh.submit(spec) == spec.key and fresh.status(spec.key).state == "done"
    assert len(counter.calls) == 1 and fresh.queue_length() == 0
    assert fresh.status("0" * 20) is None and fresh.status("../etc") is None


def test_statuses_stay_bounded(runs_dir, monkeypatch):  # noqa: F811
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
