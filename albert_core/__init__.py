"""albert_core: exact size and cost accounting for BERT- and ALBERT-style encoders.

Counting (params, FLOPs, memory, sweeps) never imports torch; the live model lives in
`albert_core.model` and is imported lazily through `build_model` / `from_hf`.
"""

from albert_core.coerce import coerce
from albert_core.config import ACTIVATIONS, FAMILIES, HEADS, LIMITS, SHARING_MODES, ModelConfig
from albert_core.presets import PRESETS
from albert_core.urls import parse_query, parse_workload_query
from albert_core.workload import DTYPE_BYTES, OPTIMIZERS, Workload

# Everything below is imported on first use, so `import albert_core` stays fast and torch-free.
_LAZY = {
    "count_params": "albert_core.params",
    "ParamBreakdown": "albert_core.params",
    "count_flops": "albert_core.flops",
    "FlopBreakdown": "albert_core.flops",
    "estimate_memory": "albert_core.memory",
    "max_batch_that_fits": "albert_core.memory",
    "MemoryEstimate": "albert_core.memory",
    "sweep": "albert_core.sweeps",
    "analyze": "albert_core.results",
    "Result": "albert_core.results",
    "build_model": "albert_core.model",
    "check_budget": "albert_core.budget",
    "MemoryBudgetError": "albert_core.budget",
    "load_pretrained_folder": "albert_core.interop",
    "from_hf": "albert_core.interop",
    "to_transformers": "albert_core.interop",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'albert_core' has no attribute {name!r}")


__all__ = [
    *_LAZY,
    "ACTIVATIONS",
    "DTYPE_BYTES",
    "FAMILIES",
    "HEADS",
    "LIMITS",
    "OPTIMIZERS",
    "PRESETS",
    "SHARING_MODES",
    "ModelConfig",
    "Workload",
    "coerce",
    "parse_query",
    "parse_workload_query",
]
