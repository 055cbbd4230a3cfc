"""Counting, exact and torch-free: parameters (params), FLOPs (flops), memory (memory), the typed result of
all three for one config and workload (results), and sweeps of many configs as DataFrames (sweeps)."""
