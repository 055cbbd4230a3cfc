"""The one least-recently-used rule of the caches on disk (albert_core/disk_cache.py)."""

from __future__ import annotations

import os

from albert_core.disk_cache import evict, last_use, size_of, touch


def _entry(path, nbytes, used_at):
    path.write_bytes(b"x" * nbytes)
    os.utime(path, (used_at, used_at))
    return path


def test_the_least_recently_used_go_first_until_both_bounds_hold(tmp_path):
    a, b, c = (_entry(tmp_path / n, 100, t) for n, t in (("a", 1000), ("b", 3000), ("c", 2000)))
    entries = [(last_use(p), size_of(p), p) for p in (a, b, c)]
    assert evict(entries, max_bytes=250) == [a]  # 300 bytes: the oldest (a) goes, 200 left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "c"]
    entries = [(last_use(p), size_of(p), p) for p in (b, c)]
    assert evict(entries, max_entries=1) == [c]  # c was used before b


def test_a_hit_refreshes_and_the_new_entry_is_kept(tmp_path):
    a, b = _entry(tmp_path / "a", 10, 1000), _entry(tmp_path / "b", 10, 2000)
    touch(a)  # a used now: b is the least recent
    assert evict([(last_use(p), size_of(p), p) for p in (a, b)], max_entries=1) == [b]
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "w.bin").write_bytes(b"x" * 500)
    assert size_of(folder) == 500
    assert evict([(0.0, 500, folder), (last_use(a), 10, a)], max_bytes=100, keep=folder) == [a]
    assert folder.is_dir()  # over the bound, but it is the one just written
