"""One memory and compute budget per process (albert_core.live.budget): the ledger every build, forward pass
and training run reserves from, the live-work gate, the expiring model cache, the FLOP cap, the settings
checked at start-up, in-place initialisation measured against the budget, and the server-side limits
(uploads, deep JSON, symlinks out of the allowed folders, partial widget state)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch

from albert_core import ModelConfig, count_flops, settings
from albert_core.cli.main import main
from albert_core.configuration.hf_config import config_from_hf
from albert_core.live import budget
from albert_core.live.budget import (
    BusyError,
    ComputeBudgetError,
    ExpiringCache,
    Gate,
    MemoryBudget,
    MemoryBudgetError,
)
from albert_core.live.interop import confine_folder
from albert_core.live.model import build_model, init_weights
from albert_core.settings import MAX_GFLOP, MEMORY_BUDGET, TORCH_THREADS

ROOT = Path(__file__).resolve().parents[1]
TINY = ModelConfig(vocab_size=300, embedding_size=16, hidden_size=32, num_heads=4, intermediate_size=64,
                   num_layers=2, max_position_embeddings=64)
MiB = 2**20


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in (MEMORY_BUDGET, MAX_GFLOP, TORCH_THREADS):
        monkeypatch.delenv(name, raising=False)


def weight_bytes(model) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


# ----------------------------------------------------------------------------- the ledger
def test_a_reservation_over_the_whole_budget_is_refused_at_once() -> None:
    ledger = MemoryBudget(100 * MiB)
    with pytest.raises(MemoryBudgetError, match="over this server.s memory budget of 104.9 MB") as err:
        ledger.reserve(101 * MiB, "a training run")
    assert not isinstance(err.value, BusyError)
    assert "a training run" in str(err.value)


def test_bytes_held_by_others_make_the_next_visitor_busy_not_over_allocated() -> None:
    ledger = MemoryBudget(100 * MiB)
    first = ledger.reserve(60 * MiB, "visitor 1")
    with pytest.raises(BusyError, match="the server is busy: 1 visitor ahead"):
        ledger.reserve(60 * MiB, "visitor 2")
    assert ledger.used == 60 * MiB  # the refused one holds nothing
    with ledger.reserve(40 * MiB, "fits beside"):
        assert ledger.used == 100 * MiB
    first.release()
    first.release()  # idempotent
    assert ledger.used == 0
    with ledger.reserve(60 * MiB, "visitor 2 again"):
        assert ledger.holders() == [("visitor 2 again", 60 * MiB)]


def test_a_waiting_reservation_gets_the_bytes_when_they_are_released() -> None:
    ledger = MemoryBudget(10 * MiB)
    held = ledger.reserve(8 * MiB, "first")
    got: list[int] = []
    waiter = threading.Thread(target=lambda: got.append(ledger.reserve(8 * MiB, "second", wait_s=60).nbytes))
    waiter.start()
    held.release()
    waiter.join(60)
    assert got == [8 * MiB]


def test_reclaimers_are_asked_before_anyone_waits() -> None:
    ledger = MemoryBudget(10 * MiB)
    idle = [ledger.reserve(8 * MiB, "idle cached model")]
    ledger.add_reclaimer(lambda n: idle.pop().release() if idle else None)
    with ledger.reserve(8 * MiB, "new visitor"):
        assert ledger.used == 8 * MiB


def test_the_gate_admits_one_and_says_how_many_are_ahead() -> None:
    gate = Gate(1)
    with gate.enter("forward pass"), pytest.raises(BusyError, match="1 visitor ahead of your timing runs"), \
            gate.enter("timing runs"):
        pass
    with gate.enter("timing runs"):
        pass


# ----------------------------------------------------------------------------- builds reserve from it
def test_a_built_model_holds_its_weights_in_the_process_budget_until_it_is_freed() -> None:
    before = budget.PROCESS_BUDGET.used
    model = build_model(TINY)
    assert budget.PROCESS_BUDGET.used - before == weight_bytes(model)  # real tensor bytes
    del model
    gc.collect()
    assert budget.PROCESS_BUDGET.used == before


def test_two_models_that_together_exceed_the_budget_are_not_both_allocated(monkeypatch) -> None:
    big = TINY.replace(vocab_size=400_000)  # about 26 MiB of weights
    monkeypatch.setenv(MEMORY_BUDGET, "48MiB")
    first = build_model(big)
    assert weight_bytes(first) > 24 * MiB
    with pytest.raises(BusyError, match="busy"):
        build_model(big.replace(num_layers=3))
    del first
    gc.collect()
    assert build_model(big.replace(num_layers=3)) is not None  # room again once the first is freed


def test_a_forward_pass_reserves_its_working_set_while_it_runs(monkeypatch) -> None:
    model = build_model(TINY, seq_len=32)
    ids = torch.zeros(1, 32, dtype=torch.long)
    free = budget.PROCESS_BUDGET.total - budget.PROCESS_BUDGET.used
    seen: list[int] = []
    hook = model.embeddings.register_forward_hook(lambda *a: seen.append(budget.PROCESS_BUDGET.used))
    before = budget.PROCESS_BUDGET.used
    model(ids)
    assert seen and seen[0] > before  # held during the pass
    assert budget.PROCESS_BUDGET.used == before  # and given back
    hook.remove()
    with budget.reserve(free - 1, "someone else"), pytest.raises(BusyError):
        model(ids)


# ----------------------------------------------------------------------------- the expiring cache
def test_the_model_cache_is_bounded_and_frees_entries_after_their_time_out() -> None:
    cache: ExpiringCache[str, object] = ExpiringCache(max_entries=2, ttl_s=3600, budget=None)
    made: list[str] = []

    def make(k: str):
        made.append(k)
        return object()

    a = cache.get("a", lambda: make("a"))
    assert cache.get("a", lambda: make("a")) is a and made == ["a"]  # built once per key
    cache.get("b", lambda: make("b"))
    cache.get("c", lambda: make("c"))
    assert len(cache) == 2  # "a", the least recently used, was dropped
    cache.get("a", lambda: make("a"))
    assert made == ["a", "b", "c", "a"]
    import time

    cache.expire(now=time.monotonic() + 3600)
    assert len(cache) == 0


def test_the_sweeper_frees_an_idle_model_and_its_reservation_without_any_new_request() -> None:
    cache: ExpiringCache[str, object] = ExpiringCache(max_entries=2, ttl_s=0.05, sweep_s=0.02)
    before = budget.PROCESS_BUDGET.used
    cache.get("tiny", lambda: build_model(TINY))
    assert budget.PROCESS_BUDGET.used > before
    done = threading.Event()
    for _ in range(500):  # the sweeper runs on its own thread; wait for it, bounded
        gc.collect()
        if budget.PROCESS_BUDGET.used == before:
            done.set()
            break
        done.wait(0.02)
    assert done.is_set() and len(cache) == 0


def test_concurrent_visitors_asking_for_one_config_build_it_once() -> None:
    cache: ExpiringCache[str, object] = ExpiringCache(max_entries=2, ttl_s=3600, budget=None)
    started, release = threading.Event(), threading.Event()
    made: list[int] = []

    def slow():
        made.append(1)
        started.set()
        release.wait(60)
        return object()

    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait(60)
    release.set()
    for t in threads:
        t.join(60)
    assert len(made) == 1 and len(results) == 4 and len({id(r) for r in results}) == 1


# ----------------------------------------------------------------------------- compute cap
def test_work_over_the_flop_cap_is_refused_before_it_starts(monkeypatch) -> None:
    huge = ModelConfig(hidden_size=1024, intermediate_size=16384, num_layers=128, inner_group_num=8, num_heads=1)
    flops = count_flops(huge, 1, 128).forward
    assert flops > 3e12  # the visitor's 3.3 TFLOP forward
    with pytest.raises(ComputeBudgetError, match="over this server's cap of 500 GFLOP per request$"):
        budget.check_flops(flops, "one forward pass")
    monkeypatch.setenv(MAX_GFLOP, "20000")
    budget.check_flops(flops, "one forward pass")
    assert budget.flops_fit(flops) == 20000e9 // flops


# ----------------------------------------------------------------------------- settings
@pytest.mark.parametrize("name, raw", [
    (MEMORY_BUDGET, "9" * 400),  # was an OverflowError
    (MEMORY_BUDGET, "9" * 400 + "GiB"),
    (MEMORY_BUDGET, "lots"),
    (MAX_GFLOP, "9" * 400),
    (MAX_GFLOP, "-5"),
    (MAX_GFLOP, "nan"),
    (TORCH_THREADS, "0"),
    (TORCH_THREADS, "two"),
    ("ALBERT_EXPLORER_ONEDNN", "yes"),  # were read without a check before they lived in one module
    ("ALBERT_EXPLORER_ALLOW_HUB", "true"),
    ("ALBERT_EXPLORER_RUNS_MAX_BYTES", "a lot"),
])
def test_bad_settings_are_a_value_error_naming_the_setting(monkeypatch, name, raw) -> None:
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=name):
        settings.check()


def test_a_bad_setting_stops_every_page_at_start_up(monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(MEMORY_BUDGET, "9" * 400)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()  # the Explorer, not the Live page
    assert not at.exception
    assert [MEMORY_BUDGET in e.value for e in at.error] == [True]
    assert not at.metric  # nothing else drawn


def test_every_setting_a_module_reads_is_in_the_one_settings_table_and_in_the_deploy_guide() -> None:
    """No module reads an ALBERT_EXPLORER_ name that albert_core.settings does not own, and docs/deploy.md
    lists every setting the table holds (an operator finds each one there)."""
    import re

    owned = {s.env for s in settings.SETTINGS}
    named = set()
    for folder in ("albert_core", "ui"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "settings.py" and path.parent.name == "albert_core":
                continue
            named |= set(re.findall(r"ALBERT_EXPLORER_[A-Z_]*[A-Z]", path.read_text(encoding="utf-8")))
    named |= set(re.findall(r"ALBERT_EXPLORER_[A-Z_]*[A-Z]", (ROOT / "app.py").read_text(encoding="utf-8")))
    named = {n for n in named if not any(env.startswith(n + "_") for env in owned)}  # a prefix in prose
    assert named - owned == set()  # a name read outside the table
    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert [env for env in sorted(owned) if env not in deploy] == []
    # the count is the deploy guide's, not a copy of the table's length: the guide names exactly the settings
    # the table owns (none it has dropped), each env name once in the table
    documented = set(re.findall(r"ALBERT_EXPLORER_[A-Z_]*[A-Z]", deploy))
    documented = {n for n in documented if not any(env.startswith(n + "_") for env in owned)}  # a prefix in prose
    assert documented == owned
    assert len(owned) == len(settings.SETTINGS) == len(documented)


# ----------------------------------------------------------------------------- in-place initialisation
def test_initialisation_in_chunks_draws_the_same_values_as_one_draw_per_parameter(monkeypatch) -> None:
    import transformers

    import albert_core.live.model as m

    std = transformers.AlbertConfig().initializer_range  # the oracle: transformers' init for ALBERT (and BERT)
    model = build_model(TINY, device="meta").to_empty(device="cpu")
    monkeypatch.setattr(m, "INIT_CHUNK", 48)  # every matrix spans many chunks, tails included
    monkeypatch.setattr(m, "INIT_SCRATCH_BYTES", (48 + 16) * 4)
    init_weights(model, seed=3)
    gen = torch.Generator().manual_seed(3)
    for name, p in model.named_parameters():
        if name.endswith("LayerNorm.weight"):
            expected = torch.ones(p.shape)
        elif name.endswith("bias"):
            expected = torch.zeros(p.shape)
        else:
            expected = torch.empty(p.shape).normal_(0.0, std, generator=gen)  # the former full copy
        assert torch.equal(p, expected), name
    half = build_model(TINY, device="meta").to(torch.bfloat16).to_empty(device="cpu")
    init_weights(half, seed=3)
    for (name, p), (_, q) in zip(half.named_parameters(), model.named_parameters(), strict=True):
        assert torch.equal(p, q.to(torch.bfloat16)), name


PROBE = textwrap.dedent("""
    import json, sys
    import torch
    torch.set_num_threads(1)
    from albert_core import ModelConfig
    from albert_core.live.budget import check_budget
    from albert_core.live.model import build_model
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[sys.argv[1]]
    budget = int(sys.argv[2])
    base = ModelConfig(vocab_size=1000, embedding_size=256, hidden_size=64, num_heads=1, num_layers=1,
                       intermediate_size=256, max_position_embeddings=128)
    lo, hi = 1000, 10**6  # the vocabulary that brings the estimate to 95 % of the budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if check_budget(base.replace(vocab_size=mid), 1, 128, dtype).estimate <= 0.95 * budget:
            lo = mid
        else:
            hi = mid - 1
    cfg = base.replace(vocab_size=lo)
    build_model(ModelConfig(vocab_size=100, embedding_size=16, hidden_size=32, num_heads=4,
                            intermediate_size=64, num_layers=1), dtype=dtype)  # warm up torch
    def status(field):  # kB in /proc/self/status
        line = next(x for x in open("/proc/self/status") if x.startswith(field + ":"))
        return int(line.split()[1]) * 1024
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak (VmHWM) to the current RSS: import-time peaks do not count
    start = status("VmRSS")
    model = build_model(cfg, dtype=dtype)
    peak = status("VmHWM")
    share = check_budget(cfg, 1, 128, dtype).estimate / budget
    print(json.dumps({"growth": peak - start, "share": share}))
""")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_a_build_at_95_percent_of_the_budget_stays_within_it(dtype) -> None:
    """Real peak RSS of a fresh process (VmHWM, reset just before) while building an embedding-heavy model whose
    estimate is 95 % of a 256 MiB budget: the growth must not exceed the budget (it was 2x, bf16 3x)."""
    limit = 256 * MiB
    env = {"PATH": "/usr/bin:/bin", MEMORY_BUDGET: str(limit), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE, dtype, str(limit)], capture_output=True, text=True,
                         env=env, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout)
    assert 0.9 < result["share"] <= 0.95
    assert result["growth"] <= limit, f"RSS grew {result['growth'] / MiB:.0f} MiB on a 256 MiB budget"


# ----------------------------------------------------------------------------- hostile files and state
def deep_json(depth: int = 100_000) -> str:
    return '{"model_type": "albert", "x": ' + "[" * depth + "]" * depth + "}"


def test_a_deeply_nested_config_json_is_a_value_error_not_a_recursion_error(tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(deep_json())
    assert path.stat().st_size < 1_000_000  # under the size check: the depth is what hurts
    with pytest.raises(ValueError, match="nested too deeply"):
        config_from_hf(path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(["params", "--hf-config", str(path)])
        except SystemExit as exc:
            code = exc.code
    assert code == 2
    assert len(err.getvalue().strip().splitlines()) == 1 and "nested too deeply" in err.getvalue()


def test_a_symlinked_config_json_inside_an_allowed_folder_cannot_read_outside_the_roots(tmp_path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "config.json").write_text(json.dumps({"model_type": "albert"}))
    root = tmp_path / "allowed"
    folder = root / "model"
    folder.mkdir(parents=True)
    (folder / "config.json").symlink_to(outside / "config.json")
    with pytest.raises(ValueError, match="links outside the allowed folders"):
        confine_folder(folder, [root])
    inside = root / "real.json"  # a link that stays inside the roots is fine
    inside.write_text(json.dumps({"model_type": "albert"}))
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(inside)
    assert confine_folder(folder, [root]) == folder.resolve()


def test_the_upload_endpoint_refuses_more_than_a_config_json() -> None:
    """Streamlit's own upload route under the repo's .streamlit/config.toml, called in-process: the one
    uploader (the sidebar's config.json) gets 1 MB, Streamlit's smallest non-zero limit."""
    from unittest.mock import MagicMock

    from starlette.applications import Starlette
    from streamlit import config
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.web.server.starlette.starlette_routes import create_upload_routes

    sources = {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "app.py", *ROOT.glob("ui/**/*.py"))}
    uploaders = {name: s.count("st.file_uploader(") + s.count("accept_file") for name, s in sources.items()}
    assert {name: n for name, n in uploaders.items() if n} == {"ui/sidebar.py": 1}
    config.get_config_options()  # populated, also when this test runs alone
    config._update_config_with_toml((ROOT / ".streamlit" / "config.toml").read_text(), "repo config.toml")
    assert config.get_option("server.maxUploadSize") == 1
    config.set_option("server.enableXsrfProtection", False)  # only the size rule is under test here
    try:
        runtime = MagicMock()
        runtime.is_active_session.return_value = True
        mgr = MemoryUploadedFileManager("/_stcore/upload_file")
        app = Starlette(routes=create_upload_routes(runtime, mgr, None))

        def put(content: bytes, file_id: str) -> int:
            body = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.json\"\r\n\r\n"
                    + content + b"\r\n--b--\r\n")
            return _in_own_thread(lambda: asyncio.run(_put(app, f"/_stcore/upload_file/session/{file_id}", body)))

        too_large = put(b" " * (1024 * 1024 + 1) + b"{}", "big")  # one byte over 1 MB (Streamlit's MB: MiB)
        small = put(json.dumps({"model_type": "albert"}).encode(), "small")
    finally:
        config.set_option("server.enableXsrfProtection", True)
    assert too_large == 413
    assert mgr.get_files("session", ["big"]) == []
    assert small in (200, 204) and len(mgr.get_files("session", ["small"])) == 1


def _in_own_thread(fn):
    """Run ``fn`` on a fresh thread (the browser tests' Playwright keeps an event loop on this one)."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(fn()))
    worker.start()
    worker.join(60)
    return out[0]


async def _put(app, path: str, body: bytes) -> int:
    scope = {"type": "http", "method": "PUT", "path": path, "raw_path": path.encode(), "query_string": b"",
             "headers": [(b"content-type", b"multipart/form-data; boundary=b"),
                         (b"content-length", str(len(body)).encode())],
             "http_version": "1.1", "scheme": "http", "server": ("test", 80), "client": ("test", 1),
             "root_path": ""}
    sent = [{"type": "http.request", "body": body, "more_body": False}]
    out: list[dict] = []

    async def receive():
        return sent.pop(0) if sent else {"type": "http.disconnect"}

    async def send(message):
        out.append(message)

    await app(scope, receive, send)
    return next(m["status"] for m in out if m["type"] == "http.response.start")


def test_partial_widget_state_is_refilled_not_a_key_error(app) -> None:
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    at = app()
    at.slider(key="cfg_H").set_value(1024).run()
    for key in ("cfg_family", "cfg_H", "cfg_heads", "wl_seq", "cfg_keep4h", "cfg_preset"):
        del at.session_state[key]  # what a client sending only some widgets' values leaves behind
    at._run(WidgetStates())  # a rerun message carrying no widget values (AppTest.run would send them all)
    assert not at.exception
    assert at.session_state["cfg_family"] == "albert"
    assert at.session_state["cfg_H"] == 1024  # the last valid view, not the default


def test_timing_stops_between_runs_once_nobody_is_waiting() -> None:
    from albert_core.live.analysis import measure_latency
    from albert_core.live.budget import Cancelled

    model = build_model(TINY, seq_len=16)
    ids = {"input_ids": torch.zeros(1, 16, dtype=torch.long)}
    calls: list[int] = []
    hook = model.embeddings.register_forward_hook(lambda *a: calls.append(1))
    asked = iter([False, False, False, True])  # the tab closes after three passes
    with pytest.raises(Cancelled, match="stopped after 3 of 31 forward passes"):
        measure_latency(model, ids, n=30, warmup=1, should_stop=lambda: next(asked))
    hook.remove()
    assert len(calls) == 3


def test_outside_a_server_the_session_always_counts_as_present() -> None:
    from ui.live.runs import session_alive

    assert session_alive()() is True


@pytest.mark.parametrize("name, raw", [
    ("ALBERT_EXPLORER_LAB_SHARE", "0"), ("ALBERT_EXPLORER_LAB_QUEUE", "many"), ("ALBERT_EXPLORER_LAB_WORKERS", "\u0663"),
    ("ALBERT_EXPLORER_LAB_IDLE_S", "-1"), ("ALBERT_EXPLORER_LAB_MAX_STEPS", "nan"), ("ALBERT_EXPLORER_LAB_THREADS", "0"),
])
def test_a_bad_lab_setting_stops_every_page_at_start_up_too(monkeypatch, name, raw) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=name):
        settings.check()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()  # the Explorer, not the Train page
    assert not at.exception
    assert [name in e.value for e in at.error] == [True]
    assert not at.metric
