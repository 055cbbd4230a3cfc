"""The one least-recently-used rule for the package's caches on disk (the lab's finished runs, trained
tokenizers): an entry's last use is its marker file's modification time, refreshed on every hit (`touch`), and
when the cache is over its bound (bytes, entries, or both) the least recently used entries go first
(`evict`), never the one just written."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path


def touch(marker: Path) -> None:
    """Mark an entry as used now (a read-only disk leaves the order as it was)."""
    with contextlib.suppress(OSError):
        os.utime(marker)


def last_use(marker: Path) -> float:
    return marker.stat().st_mtime


def size_of(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def evict(entries: Iterable[tuple[float, int, Path]], *, max_bytes: int | None = None,
          max_entries: int | None = None, keep: Path | None = None) -> list[Path]:
    """Delete the least recently used of ``entries`` ((last use, bytes, path): a file or a folder) until the
    rest fit in ``max_bytes`` and ``max_entries`` (None: no bound); ``keep`` is never deleted. Returns the
    deleted paths, oldest first."""
    ordered = sorted(entries, key=lambda e: e[0])
    total, count = sum(size for _, size, _ in ordered), len(ordered)
    gone = []
    for _, size, path in ordered:
        if (max_bytes is None or total <= max_bytes) and (max_entries is None or count <= max_entries):
            break
        if path == keep:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        total, count = total - size, count - 1
        gone.append(path)
    return gone
