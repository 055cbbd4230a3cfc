"""AppTest of what the Train page says when the lab's queue is full (issue 40): a newcomer's run takes the place of
the newest queued run of the visitor holding the most, and both visitors read so on the page."""

from __future__ import annotations

import time

from albert_core.lab import worker as lab_worker
from tests.helpers.lab import tiny_spec
from tests.test_app_train import open_page, plan_twins, url_runs
from tests.test_app_train import worker as worker  # noqa: F401 - the fixture
from ui import owner as train_owner


def test_a_newcomer_takes_a_place_in_a_full_queue_and_both_visitors_read_why(worker):  # noqa: F811
    worker.max_queue = 2
    greedy = train_owner.new_secret()
    blocker = worker.submit(tiny_spec(steps=1500, eval_every=500, warmup=10), owner=greedy)
    deadline = time.monotonic() + 60
    while worker.status(blocker).state != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    queued = [worker.submit(tiny_spec(steps=4, seed=s), owner=greedy) for s in (1, 2)]
    assert len(worker._queue) == 2  # full
    at = plan_twins(open_page(), ["BERT"], steps=20)
    at.button(key="train_submit").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (mine,) = url_runs(at)
    assert worker.status(mine).state == "queued"
    lines = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert lab_worker.TOOK_PLACE in lines  # the newcomer reads that its run took a place
    taken = worker.status(queued[-1])
    assert taken.state == "cancelled" and taken.message == lab_worker.EVICTED  # the newest of the greedy one's
    # the visitor whose run was taken out reads why, on their own page
    theirs = open_page({"run": ",".join([blocker, *queued])})
    theirs.session_state["_lab_owner"] = greedy
    theirs.run()
    warnings = [w.value.replace("\\", "") for w in theirs.warning]
    assert any("cancelled at step 0: " + lab_worker.EVICTED in w for w in warnings), warnings
    for run_id in (blocker, queued[0], mine):
        worker.cancel(run_id, greedy)
    worker.cancel(mine, at.session_state["_lab_owner"])
