"""The pretraining lab's server settings, each read from the environment and checked in one place
(torch-free, so the app checks them all when a page first runs; docs/deploy.md lists them).

A bad value raises ValueError naming the setting and its rule."""

from __future__ import annotations

import math
import os

ENV_PREFIX = "ALBERT_EXPLORER_LAB_"
WORKERS_ENV = ENV_PREFIX + "WORKERS"
QUEUE_ENV = ENV_PREFIX + "QUEUE"
SHARE_ENV = ENV_PREFIX + "SHARE"
IDLE_ENV = ENV_PREFIX + "IDLE_S"
WAIT_ENV = ENV_PREFIX + "MEMORY_WAIT_S"
THREADS_ENV = ENV_PREFIX + "THREADS"
LIMIT_NAMES = ("max_steps", "max_seconds", "max_flops")  # ALBERT_EXPLORER_LAB_MAX_STEPS, ...


def whole(env: str, default: int, lo: int, hi: int) -> int:
    """The whole number in ``env`` (ASCII digits, lo..hi), else ``default`` when unset or empty."""
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or not lo <= int(raw) <= hi:
        raise ValueError(f"{env} must be a whole number between {lo} and {hi}, got {raw[:20]!r}")
    return int(raw)


def workers() -> int:
    """Runs trained at once (worker threads)."""
    return whole(WORKERS_ENV, 1, 1, 16)


def queue() -> int:
    """Runs waiting at most, in all."""
    return whole(QUEUE_ENV, 16, 0, 1000)


def share() -> int:
    """Runs one visitor may hold queued or running at once (the largest experiment at one seed)."""
    return whole(SHARE_ENV, 6, 1, 1000)


def idle_s() -> int:
    """Seconds without anyone asking about a run before it stops (unless nearly done); 0: never."""
    return whole(IDLE_ENV, 300, 0, 86_400)


def memory_wait_s() -> int:
    """Seconds a run waits for its memory before it fails with the budget's message."""
    return whole(WAIT_ENV, 600, 0, 86_400)


def threads() -> int:
    """torch intra-op threads per run."""
    return whole(THREADS_ENV, 1, 1, (os.cpu_count() or 1) * 2)


def limits() -> dict[str, float]:
    """The per-run limits set in the environment (steps, seconds, training FLOPs), positive numbers."""
    values: dict[str, float] = {}
    for name in LIMIT_NAMES:
        env = ENV_PREFIX + name.upper()
        raw = os.environ.get(env)
        if raw is None or not raw.strip():
            continue
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{env} must be a number, got {raw[:40]!r}") from None
        if not value > 0 or not math.isfinite(value):
            raise ValueError(f"{env} must be positive, got {raw[:40]!r}")
        values[name] = int(value) if name == "max_steps" else value
    return values


def check() -> None:
    """Every lab setting, checked at start-up."""
    workers(), queue(), share(), idle_s(), memory_wait_s(), threads(), limits()
