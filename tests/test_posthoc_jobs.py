"""A visitor's own post-hoc variant of MiniLM as a job (albert_core/lab/posthoc_jobs.py): planned before any work,
owned, queued one at a time, stopped when cancelled or unwatched, its result beside the original and the baselines
(a real job, on a small sample of the sentences so the test takes seconds)."""

from __future__ import annotations

import time

import pytest

from albert_core.counting.posthoc import Variant
from albert_core.lab.posthoc_grid import GridSettings
from albert_core.lab.posthoc_jobs import JobRefused, PosthocJobs, plan
from albert_core.lab.posthoc_reference import load_grid
from albert_core.live import minilm

TINY = GridSettings(n_train=40, train_seeds=(0,), bootstrap=200, batch=8, n_dev=24, folds=2)
BUDGET = 2 * 2**30


def test_the_plan_is_made_before_any_work_and_refuses_by_name(monkeypatch):
    # nothing is loaded or tokenized by a plan
    monkeypatch.setattr(minilm, "load_minilm", lambda *a, **k: pytest.fail("a plan must not load the model"))
    doc = load_grid()
    p = plan(Variant(96, True, 12), doc)
    # by hand: 30,522 x 96 word table + 96 x 384 projection, positions 512 x 384, types 2 x 384, LayerNorm 2 x 384,
    # one shared layer, 6 LoRAs of rank 12 per layer (r x sum(d_in + d_out) = 12 x 6,912), the pooler
    layer = 4 * (384 * 384 + 384) + 2 * 384 + (384 * 1536 + 1536) + (1536 * 384 + 384) + 2 * 384
    by_hand = 30522 * 96 + 96 * 384 + 512 * 384 + 2 * 384 + 2 * 384 + layer + 6 * 12 * 6912 + 384 * 384 + 384
    assert p.parameters == by_hand
    assert not p.shipped and 30 < p.cpu_seconds < 200 and p.reserved_bytes < p.memory_bytes
    assert plan(Variant(128, True, 8), doc).shipped  # in the shipped grid: shown, not measured again
    for v, words in ((Variant(384), "embedding_size must be below H = 384"),
                     (Variant(4), "embedding_size must be at least 8"),
                     (Variant(None, True, 200), "rank must be at most 128")):
        with pytest.raises(JobRefused, match=words):
            plan(v, doc)
    with pytest.raises(JobRefused, match="over this server's memory budget"):
        plan(Variant(96, True, 12), doc, budget_bytes=100 * 2**20)


def test_a_job_measures_the_variant_beside_the_original_and_the_baselines():
    jobs = PosthocJobs(budget_bytes=BUDGET, settings_=TINY)
    key = jobs.submit(Variant(96, True, 12), "alice")
    assert key == "E96-shared-r12"
    # a second visitor asking for the same variant joins it; one visitor holds one job at a time
    assert jobs.submit(Variant(96, True, 12), "bob") == key
    with pytest.raises(JobRefused, match="at most 1 a visitor"):
        jobs.submit(Variant(160), "alice")
    with pytest.raises(JobRefused, match="in the shipped grid already"):
        jobs.submit(Variant(128), "carol", load_grid())
    done = jobs.wait(key, timeout=300)
    assert done.state == "done", done.message
    rows = {r["key"]: r for r in done.doc["variants"]}
    assert set(rows) == {"original", key}
    assert rows[key]["vs_original"]["verdict"] in ("costs quality", "gains", "not distinguishable")
    b = done.doc["baselines"]
    assert {"majority", "bag_of_words", "unrelated_cosine"} <= set(b)
    assert rows["original"]["fidelity"]["mean"] == pytest.approx(1.0)  # the original against itself
    assert done.doc["data"]["dev_scored"] == 24


def test_cancel_is_the_owners_and_an_unwatched_job_stops():
    jobs = PosthocJobs(budget_bytes=BUDGET, settings_=TINY, idle_s=0.05)
    key = jobs.submit(Variant(64, True, 4), "alice")
    assert not jobs.cancel(key, "mallory")  # not theirs
    time.sleep(0.2)  # nobody looks at it
    done = jobs.wait(key, timeout=120)
    assert done.state == "cancelled" and "nobody watched it" in done.message
    jobs = PosthocJobs(budget_bytes=BUDGET, settings_=TINY)
    first = jobs.submit(Variant(64, True, 4), "alice")
    queued = jobs.submit(Variant(48), "bob")
    status = jobs.status(queued)
    assert status.state == "queued" and status.position == 1
    assert jobs.cancel(queued, "bob") and jobs.status(queued).state == "cancelled"
    assert jobs.cancel(first, "alice")
    assert jobs.wait(first, timeout=120).state == "cancelled"


def test_a_job_waiting_for_memory_says_so_and_its_cancel_stops_the_wait():
    """The job's planned bytes come from the process budget the Live page and the lab share: while other work holds
    them the job waits, says so, and a cancel ends the wait within about a second (it does not block the queue)."""
    from albert_core.live.budget import PROCESS_BUDGET

    jobs = PosthocJobs(settings_=TINY, wait_s=120)
    key_plan = plan(Variant(64, True, 4))
    hog = PROCESS_BUDGET.reserve(PROCESS_BUDGET.total - key_plan.reserved_bytes // 2, "another visitor's work")
    try:
        key = jobs.submit(Variant(64, True, 4), "alice")
        deadline = time.monotonic() + 30
        while "waiting for memory" not in jobs.status(key).message and time.monotonic() < deadline:
            time.sleep(0.1)
        assert jobs.status(key).state == "running" and "waiting for memory" in jobs.status(key).message
        t0 = time.monotonic()
        assert jobs.cancel(key, "alice")
        done = jobs.wait(key, timeout=30)
        assert done.state == "cancelled" and time.monotonic() - t0 < 5
    finally:
        hog.release()
