"""Counting, exact and torch-free: parameters (params), FLOPs (flops), memory (memory), the typed result of all
three for one config and workload that the pages and the JSON download read (report), and sweeps of many
configs as DataFrames (sweeps)."""
