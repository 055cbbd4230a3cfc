"""Data parallelism on torch.distributed: 2 CPU processes under torchrun (gloo); the DDP communication
hook's count of all-reduced bytes equals 4 bytes x the unique parameters (count_params) in every sharing
mode, every step."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from albert_core import count_params
from albert_core.lab.parallel import torchrun_command
from tests.helpers.ddp_worker import CONFIGS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = torchrun_command(2, ["-m", "tests.helpers.ddp_worker"])
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["name"]: r for r in rows}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_allreduced_bytes_are_four_per_unique_parameter(results, name):
    r = results[name]
    unique = count_params(CONFIGS[name].replace(head="pretraining")).total
    assert r["world_size"] == 2
    assert r["allreduce_bytes_per_step"] == [4 * unique, 4 * unique]


def test_sharing_cuts_the_traffic(results):
    per_step = {n: r["allreduce_bytes_per_step"][0] for n, r in results.items()}
    assert per_step["albert-all"] < per_step["albert-attention"] < per_step["albert-none"]
    assert per_step["albert-all"] < per_step["albert-all-G2"] < per_step["albert-none"]
