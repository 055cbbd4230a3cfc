"""Benchmark suite: `python -m bench` (or `make bench`) runs every `bench/bench_*.py` module's `run()` and
writes docs/benchmarks.md and docs/benchmarks.json. Not part of the tests: speed goals live here only."""
