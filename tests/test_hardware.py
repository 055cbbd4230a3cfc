"""Hardware profiles: datasheet figures (dense only, each with a source) and this machine's cached probe."""

from __future__ import annotations

import json

import pytest

from albert_core import settings
from albert_core.hardware import profiles as hardware
from albert_core.hardware.profiles import DATASHEET_PROFILES, HARDWARE_NAMES, get_profile

# Vendor figures typed from the datasheets (independent of the module): (bf16 dense FLOP/s, memory B/s).
DATASHEET = {
    "tpu-v3": (123e12, 900e9),  # Cloud TPU v3 page: 123 teraflops bf16 per chip, 900 GBps HBM2
    "a100": (312e12, 2039e9),  # A100 80GB SXM
    "h100": (989e12, 3.35e12),  # H100 SXM
    "h200": (989e12, 4.8e12),  # H200 SXM
}
# The "with sparsity" figures of the same datasheets (2:4 structured sparsity, twice the dense peak).
SPARSE = {"a100": {"bf16": 624e12, "fp16": 624e12}, "h100": {"bf16": 1979e12, "fp16": 1979e12},
          "h200": {"bf16": 1979e12, "fp16": 1979e12}}
ALL_SPARSE_FIGURES = {624e12, 1248e12, 1513e12, 1979e12, 3958e12}  # A100 bf16/int8, H100 PCIe/SXM bf16, fp8
SOURCED_FIELDS = ("peak_flops", "memory_bandwidth", "memory_bytes", "link_bandwidth", "scale_out_bandwidth",
                  "efficiency")


@pytest.mark.parametrize("name", DATASHEET_PROFILES)
def test_profiles_carry_dense_figures_only(name):
    p = DATASHEET_PROFILES[name]
    for dtype, flops in p.peak_flops.items():
        assert flops not in ALL_SPARSE_FIGURES, (name, dtype, flops)
        if name in SPARSE and dtype in SPARSE[name]:
            assert flops == pytest.approx(SPARSE[name][dtype] / 2, rel=0.01)


@pytest.mark.parametrize("name", DATASHEET_PROFILES)
def test_figures_match_the_datasheets_and_each_has_a_source(name):
    p = DATASHEET_PROFILES[name]
    flops, bandwidth = DATASHEET[name]
    assert p.peak("bf16") == flops
    assert p.memory_bandwidth == bandwidth
    assert not p.measured and 0 < p.efficiency < 1
    for f in SOURCED_FIELDS:
        assert len(p.sources.get(f, "")) > 10, (name, f)
    assert "sparsity" not in p.sources["peak_flops"] or "dense" in p.sources["peak_flops"]


def test_tpu_v3_link_is_the_pod_all_reduce_bandwidth_per_chip():
    p = get_profile("tpu-v3")
    assert p.link_bandwidth == pytest.approx(340e12 / 1024)
    assert p.ring_bandwidth(512) == p.link_bandwidth  # the whole pod is on ICI


def test_gpu_rings_past_one_node_run_at_the_network_card():
    p = get_profile("h100")
    assert p.ring_bandwidth(8) == 900e9 / 2  # NVLink 900 GB/s bidirectional (datasheet), one direction
    assert p.ring_bandwidth(16) == 400e9 / 8  # a 400 Gb/s network card per GPU, in bytes


def test_bad_names_and_dtypes_raise_value_error():
    with pytest.raises(ValueError, match="hardware must be one of"):
        get_profile("gpu")
    with pytest.raises(ValueError, match="int8"):
        get_profile("tpu-v3").peak("int8")
    assert HARDWARE_NAMES[-1] == "this-machine"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.CACHE_DIR, str(tmp_path))
    monkeypatch.setattr(hardware, "_MEMO", {})
    calls = []

    def fake_probe(budget_s=1.0):
        calls.append(budget_s)
        return {"key": hardware._probe_key(hardware_threads()), "cpu": "Test CPU", "threads": hardware_threads(),
                "matmul_flops": 1.5e11, "kernel_flops": {"torch.matmul": 0.7e11, "onednn linear": 1.5e11},
                "memory_bandwidth": 2.0e10, "memory_bytes": 8 * 2**30,
                "probed_at": "now"}

    monkeypatch.setattr(hardware, "probe_this_machine", fake_probe)
    return tmp_path, calls


def hardware_threads() -> int:
    import torch

    return torch.get_num_threads()


def test_this_machine_is_probed_once_then_read_from_disk(cache, monkeypatch):
    tmp_path, calls = cache
    with pytest.raises(ValueError, match="not been probed"):
        hardware.this_machine(probe=False)
    p = get_profile("this-machine")
    assert calls == [1.0] and p.measured and p.peak("fp32") == 1.5e11 and p.memory_bandwidth == 2.0e10
    assert "measured" in p.sources["peak_flops"]
    assert p.peak("fp32", training=True) == 0.7e11  # autograd's GEMM, slower than oneDNN here
    stored = json.loads((tmp_path / "hardware-probe.json").read_text())
    assert list(stored.values())[0]["matmul_flops"] == 1.5e11
    monkeypatch.setattr(hardware, "_MEMO", {})  # a new process: the disk cache answers
    assert get_profile("this-machine", probe=False).peak("fp32") == 1.5e11
    assert calls == [1.0]


def test_a_corrupt_cache_is_probed_again(cache):
    tmp_path, calls = cache
    (tmp_path / "hardware-probe.json").write_text("{not json")
    assert get_profile("this-machine").memory_bandwidth == 2.0e10
    assert len(calls) == 1


def test_copy_bandwidth_probe_returns_a_rate():
    assert hardware.measure_copy_bandwidth(nbytes=4 * 2**20, repeats=2) > 0


def test_the_shipped_allreduce_measurement_is_four_bytes_per_unique_parameter():
    """The DDP hook's count (measured by `make measure-ddp`, 2 gloo processes) against count_params."""
    from albert_core import PRESETS, count_params
    from albert_core.hardware.profiles import MEASURE_PRESETS, load_measured

    data = load_measured()
    assert data is not None and data["processes"] >= 2 and data["backend"] == "gloo"
    rows = {r["preset"]: r for r in data["rows"]}
    assert set(rows) == set(MEASURE_PRESETS)
    for name, row in rows.items():
        assert row["allreduce_bytes_per_step"] == 4 * count_params(PRESETS[name].replace(head="pretraining")).total
    assert rows["bert-base"]["allreduce_bytes_per_step"] / rows["albert-base"]["allreduce_bytes_per_step"] > 9


def test_the_cli_times_this_machine_with_the_apps_threads(cache, capsys, monkeypatch):
    import torch

    from albert_core.cli.main import main

    tmp_path, calls = cache
    monkeypatch.setenv("ALBERT_EXPLORER_TORCH_THREADS", "1")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert main(["time", "--preset", "albert-base", "--hardware", "this-machine", "--json"]) == 0
        assert torch.get_num_threads() == 1  # probed and timed with the app's thread count, not torch's default
    finally:
        torch.set_num_threads(before)
    out = json.loads(capsys.readouterr().out)
    assert "1 threads" in json.dumps(out)  # the profile names the threads it was probed with


def test_a_probe_at_one_thread_is_timed_by_the_threads_cpu_time(monkeypatch):
    import time

    seen = {}

    def fake_kernels(budget_s=1.0, clock=time.perf_counter):
        seen["clock"] = clock
        return {"torch.matmul": 1e9}

    monkeypatch.setattr(hardware, "measure_kernel_flops", fake_kernels)
    monkeypatch.setattr(hardware, "measure_copy_bandwidth", lambda: 1e9)
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        hardware.probe_this_machine()
    finally:
        torch.set_num_threads(before)
    assert seen["clock"] is time.thread_time
