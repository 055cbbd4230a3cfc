"""Every server setting, read from the environment (``ALBERT_EXPLORER_*``) and checked in one place.

Each setting has one reader here; the modules that use a setting call its reader (nothing else reads the
environment for these names). `check()` reads every one of them: the app calls it before any page draws, so
a bad value stops every page with one message naming the setting and its rule instead of failing later
on one page. `SETTINGS` lists them all, with their defaults and rules, for docs/deploy.md (a test checks
that the two agree and that no module reads an ``ALBERT_EXPLORER_`` name this module does not own).

This module imports only the standard library (no torch, no streamlit, nothing of the project).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "ALBERT_EXPLORER_"
MAX_CHARS = 40  # longer numeric settings are refused before any arithmetic (a 400-digit budget)

# ----------------------------------------------------------------------------- names and defaults
MEMORY_BUDGET = PREFIX + "MEMORY_BUDGET"
DEFAULT_BUDGET = 2**30  # 1 GiB
MAX_GFLOP = PREFIX + "MAX_GFLOP"
# A 2-vCPU host runs this model at roughly 100-200 GFLOP/s (docs/benchmarks.md): 500 GFLOP is a few
# seconds of the whole machine, e.g. 20 forward passes of ALBERT-base over 128 tokens.
DEFAULT_MAX_GFLOP = 500.0
TORCH_THREADS = PREFIX + "TORCH_THREADS"
# On a shared 2-core host one intra-op thread per process was faster than two (docs/benchmarks.md): a
# second thread waits for a core another process holds. Serve more visitors with more processes.
DEFAULT_TORCH_THREADS = 1
ONEDNN = PREFIX + "ONEDNN"
ONEDNN_MODES = ("auto", "0", "1")
CACHE_DIR = PREFIX + "CACHE_DIR"
RUNS_DIR = PREFIX + "RUNS_DIR"
RUNS_MAX_BYTES = PREFIX + "RUNS_MAX_BYTES"
DEFAULT_RUNS_MAX_BYTES = 512 * 2**20
CHECKPOINT_ROOTS = PREFIX + "CHECKPOINT_ROOTS"
ALLOW_HUB = PREFIX + "ALLOW_HUB"
LAB = PREFIX + "LAB_"
LAB_WORKERS = LAB + "WORKERS"
LAB_QUEUE = LAB + "QUEUE"
LAB_SHARE = LAB + "SHARE"
LAB_IDLE_S = LAB + "IDLE_S"
LAB_MEMORY_WAIT_S = LAB + "MEMORY_WAIT_S"
LAB_THREADS = LAB + "THREADS"
LAB_LIMIT_NAMES = ("max_steps", "max_seconds", "max_flops")  # ALBERT_EXPLORER_LAB_MAX_STEPS, ...


def _raw(env: str) -> str:
    return os.environ.get(env, "").strip()


# ----------------------------------------------------------------------------- parsers
_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_BYTES_RE = re.compile(r"(\d+(?:\.\d+)?) ?([a-z]*)")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def parse_bytes(text: str, name: str = MEMORY_BUDGET) -> int:
    """'1073741824', '512MiB', '2GiB', '1GB', '1.5 GiB' -> bytes; anything else -> ValueError naming ``name``."""
    rule = f"{name} must be a number of bytes, optionally with a unit (e.g. 536870912, 512MiB, 2GiB, 1GB)"
    text = text.strip().lower()
    if len(text) > MAX_CHARS:
        raise ValueError(f"{rule}, at most {MAX_CHARS} characters; got {text[:40]!r}...")
    m = _BYTES_RE.fullmatch(text)
    if not m or m.group(2) not in _UNITS:
        raise ValueError(f"{rule}; got {text[:40]!r}")
    if "." in m.group(1) and _UNITS[m.group(2)] == 1:
        raise ValueError(f"{name} must be a whole number of bytes, got {text[:40]!r}")
    value = int(float(m.group(1)) * _UNITS[m.group(2)])
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {text[:40]!r}")
    return value


def whole(env: str, default: int, lo: int, hi: int) -> int:
    """The whole number in ``env`` (ASCII digits, lo..hi), else ``default`` when unset or empty."""
    raw = _raw(env)
    if not raw:
        return default
    if len(raw) > MAX_CHARS or not (raw.isascii() and raw.isdigit()) or not lo <= int(raw) <= hi:
        raise ValueError(f"{env} must be a whole number between {lo} and {hi}, got {raw[:20]!r}")
    return int(raw)


def _folder(env: str, default: Path) -> Path:
    raw = _raw(env)
    return Path(raw).expanduser() if raw else default


# ----------------------------------------------------------------------------- the live work of the app
def memory_budget() -> int:
    """The process's memory budget in bytes for live work and lab runs (default 1 GiB)."""
    raw = _raw(MEMORY_BUDGET)
    return parse_bytes(raw) if raw else DEFAULT_BUDGET


def max_gflop() -> float:
    """The per-request compute cap in GFLOP (default `DEFAULT_MAX_GFLOP`)."""
    raw = _raw(MAX_GFLOP)
    if not raw:
        return DEFAULT_MAX_GFLOP
    if len(raw) > MAX_CHARS or not _NUMBER_RE.fullmatch(raw) or not float(raw) > 0:
        raise ValueError(f"{MAX_GFLOP} must be a positive number of GFLOP (e.g. 500), got {raw[:40]!r}")
    return float(raw)


def torch_threads() -> int:
    """Intra-op threads for live work, per process (default 1)."""
    return whole(TORCH_THREADS, DEFAULT_TORCH_THREADS, 1, 256)


def onednn_mode() -> str:
    """"auto" (probe each shape class and take oneDNN where it is faster), "1" (always) or "0" (never)."""
    raw = _raw(ONEDNN) or "auto"
    if raw not in ONEDNN_MODES:
        raise ValueError(f"{ONEDNN} must be one of {', '.join(ONEDNN_MODES)}, got {raw[:20]!r}")
    return raw


def cache_dir() -> Path:
    """The folder of the hardware probe, the lab's trained tokenizers and the live chart's component (default
    ~/.cache/albert-explorer)."""
    return _folder(CACHE_DIR, Path.home() / ".cache" / "albert-explorer")


def checkpoint_roots() -> list[Path]:
    """Folders a visitor may load checkpoints from (os.pathsep separated). Empty by default: a hosted demo
    must not read arbitrary server paths."""
    return [Path(p.strip()).expanduser() for p in os.environ.get(CHECKPOINT_ROOTS, "").split(os.pathsep)
            if p.strip()]


def hub_allowed() -> bool:
    """Model-hub downloads only when the operator opts in with 1 (default 0: never)."""
    raw = _raw(ALLOW_HUB) or "0"
    if raw not in ("0", "1"):
        raise ValueError(f"{ALLOW_HUB} must be 0 or 1, got {raw[:20]!r}")
    return raw == "1"


# ----------------------------------------------------------------------------- the lab
def runs_dir() -> Path:
    """The disk cache of finished lab runs (default ~/.cache/albert-explorer/runs)."""
    return _folder(RUNS_DIR, Path.home() / ".cache" / "albert-explorer" / "runs")


def runs_max_bytes() -> int:
    """The size the run cache is trimmed to, oldest first (default 512 MiB)."""
    raw = _raw(RUNS_MAX_BYTES)
    return parse_bytes(raw, RUNS_MAX_BYTES) if raw else DEFAULT_RUNS_MAX_BYTES


def lab_workers() -> int:
    """Runs trained at once (worker threads)."""
    return whole(LAB_WORKERS, 1, 1, 16)


def lab_queue() -> int:
    """Runs waiting at most, in all."""
    return whole(LAB_QUEUE, 16, 0, 1000)


def lab_share() -> int:
    """Runs one visitor may hold queued or running at once (the largest experiment at one seed)."""
    return whole(LAB_SHARE, 6, 1, 1000)


def lab_idle_s() -> int:
    """Seconds without anyone asking about a run before it stops (unless nearly done); 0: never."""
    return whole(LAB_IDLE_S, 300, 0, 86_400)


def lab_memory_wait_s() -> int:
    """Seconds a run waits for its memory before it fails with the budget's message."""
    return whole(LAB_MEMORY_WAIT_S, 600, 0, 86_400)


def lab_threads() -> int:
    """torch intra-op threads per lab run."""
    return whole(LAB_THREADS, 1, 1, (os.cpu_count() or 1) * 2)


def lab_limits() -> dict[str, float]:
    """The per-run limits set in the environment (steps, seconds, training FLOPs), positive numbers; the
    unset ones are left to `albert_core.lab.trainer.LabLimits`' defaults."""
    values: dict[str, float] = {}
    for name in LAB_LIMIT_NAMES:
        env = LAB + name.upper()
        raw = _raw(env)
        if not raw:
            continue
        try:
            value = float(raw) if len(raw) <= MAX_CHARS else math.nan
        except ValueError:
            raise ValueError(f"{env} must be a number, got {raw[:40]!r}") from None
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"{env} must be a positive number, got {raw[:40]!r}")
        values[name] = int(value) if name == "max_steps" else value
    return values


# ----------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Setting:
    env: str
    default: str  # as an operator would write it
    rule: str
    read: Callable[[], Any]


SETTINGS: tuple[Setting, ...] = (
    Setting(MEMORY_BUDGET, "1GiB", "bytes, or with a unit (536870912, 512MiB, 2GiB, 1GB)", memory_budget),
    Setting(MAX_GFLOP, "500", "a positive number of GFLOP", max_gflop),
    Setting(TORCH_THREADS, "1", "a whole number from 1 to 256", torch_threads),
    Setting(ONEDNN, "auto", "auto, 1 or 0", onednn_mode),
    Setting(CACHE_DIR, "~/.cache/albert-explorer", "a folder", cache_dir),
    Setting(CHECKPOINT_ROOTS, "(none)", "folders separated by the path separator", checkpoint_roots),
    Setting(ALLOW_HUB, "0", "0 or 1", hub_allowed),
    Setting(RUNS_DIR, "~/.cache/albert-explorer/runs", "a folder", runs_dir),
    Setting(RUNS_MAX_BYTES, "512MiB", "bytes, or with a unit", runs_max_bytes),
    Setting(LAB_WORKERS, "1", "a whole number from 1 to 16", lab_workers),
    Setting(LAB_QUEUE, "16", "a whole number from 0 to 1,000", lab_queue),
    Setting(LAB_SHARE, "6", "a whole number from 1 to 1,000", lab_share),
    Setting(LAB_IDLE_S, "300", "a whole number of seconds from 0 (never) to 86,400", lab_idle_s),
    Setting(LAB_MEMORY_WAIT_S, "600", "a whole number of seconds from 0 to 86,400", lab_memory_wait_s),
    Setting(LAB_THREADS, "1", "a whole number from 1 to twice the CPUs", lab_threads),
    *(Setting(LAB + name.upper(), "(the lab's)", "a positive number", lab_limits) for name in LAB_LIMIT_NAMES),
)


def check() -> None:
    """Read every setting: ValueError naming the first bad one and its rule."""
    for setting in SETTINGS:
        setting.read()
