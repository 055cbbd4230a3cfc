"""The disk cache of finished runs: one checkpoint folder per `RunSpec.key`, size-bounded.

Folder: $ALBERT_EXPLORER_RUNS_DIR, else ~/.cache/albert-explorer/runs. Total size: at most
$ALBERT_EXPLORER_RUNS_MAX_BYTES (bytes, or with a unit: 512MiB, 2GiB; default 512 MiB); when a new
run pushes it over, the least recently used runs are deleted first (a cache hit refreshes a run).
A run is trained into a private staging folder and renamed into place when complete, so a reader
never sees half a run. Only finished runs are cached (not cancelled or failed ones).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from albert_core import settings
from albert_core.disk_cache import evict, last_use, size_of, touch
from albert_core.lab.checkpoint import RUN_FILE, load_run

STAGING = ".staging"


class RunCache:
    """Finished runs by key. ``get(key)`` -> RunResult or None; ``put(result)`` moves the result's
    checkpoint folder (trained into ``staging()``) into the cache and evicts to the size bound."""

    def __init__(self, root: Path | str | None = None, max_bytes: int | None = None):
        self.root = Path(root) if root is not None else settings.runs_dir()
        self.max_bytes = settings.runs_max_bytes() if max_bytes is None else int(max_bytes)
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        if not (isinstance(key, str) and key.isalnum() and 0 < len(key) <= 64):
            raise ValueError(f"run key must be a short alphanumeric hash, got {str(key)[:70]!r}")
        return self.root / key

    def __contains__(self, key: str) -> bool:
        return (self.path(key) / RUN_FILE).is_file()

    def get(self, key: str) -> Any:
        folder = self.path(key)
        if not (folder / RUN_FILE).is_file():
            return None
        try:
            result = load_run(folder)
        except (ValueError, OSError, KeyError, TypeError):
            return None  # unreadable (an older layout, a damaged file): treated as absent
        touch(folder / RUN_FILE)
        return result

    def staging(self) -> Path:
        """A new private folder to train into, named after this process (see `clean_staging`)."""
        folder = self.root / STAGING / f"{os.getpid()}-{uuid.uuid4().hex}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def discard(self, folder: Path | None) -> None:
        if folder is not None and Path(folder).is_relative_to(self.root / STAGING):
            shutil.rmtree(folder, ignore_errors=True)

    def put(self, result: Any) -> Any:
        """Move ``result.checkpoint`` (a folder under ``staging()``) to the run's key; returns the
        result with ``checkpoint`` pointing into the cache."""
        src = Path(result.checkpoint)
        dest = self.path(result.spec.key)
        with self._lock:
            if (dest / RUN_FILE).is_file():  # trained twice at once elsewhere: keep the first
                shutil.rmtree(src, ignore_errors=True)
            else:
                if dest.exists():
                    shutil.rmtree(dest, ignore_errors=True)
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(src, dest)
            result.checkpoint = dest
            self._evict(keep=dest)
        return result

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, folder) of every cached run, oldest first."""
        out = []
        if not self.root.is_dir():
            return out
        for folder in self.root.iterdir():
            run = folder / RUN_FILE
            if folder.name != STAGING and run.is_file():
                with contextlib.suppress(OSError):
                    out.append((last_use(run), size_of(folder), folder))
        return sorted(out)

    def _evict(self, keep: Path) -> None:
        evict(self.entries(), max_bytes=self.max_bytes, keep=keep)
        self.clean_staging()

    def clean_staging(self, older_than_s: float = 6 * 3600) -> None:
        """Delete the staging folders of processes that no longer run (a server stopped during a run),
        and any staging folder older than a long run could take. The worker calls it when it starts."""
        staging = self.root / STAGING
        if not staging.is_dir():
            return
        now = time.time()
        for folder in staging.iterdir():
            pid = folder.name.split("-", 1)[0]
            with contextlib.suppress(OSError):
                if (pid.isascii() and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid))) \
                        or now - folder.stat().st_mtime > older_than_s:
                    shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def run_cached(spec: Any, cache: RunCache | None = None, *, reuse: bool = True, **train_kwargs: Any) -> Any:
    """The finished run of ``spec``: from the cache (unless ``reuse`` is False), else trained
    (train(**train_kwargs)) and cached. A cancelled or stopped run is returned but not cached. In a
    data-parallel process group only rank 0 writes the cache; the other ranks train without saving."""
    from albert_core.lab import parallel, trainer

    cache = RunCache() if cache is None else cache
    hit = cache.get(spec.key) if reuse else None
    if hit is not None:
        hit.spec = spec  # the same run, under the caller's label
        return hit
    staging = cache.staging() if parallel.is_writer() else None
    try:
        result = trainer.train(spec, out_dir=staging, **train_kwargs)
    except BaseException:
        cache.discard(staging)
        raise
    if result.cancelled or staging is None:
        cache.discard(staging)
        result.checkpoint = None
        return result
    model = result.model
    result = cache.put(result)
    result.model = model
    return result
