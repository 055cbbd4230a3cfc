"""albert_core: exact size and cost accounting for BERT- and ALBERT-style encoders.

Counting (params, FLOPs, memory, sweeps) never imports torch; the live model lives in
`albert_core.live.model` and is imported lazily through `build_model` / `from_hf`.
No module of the package imports streamlit (the app's side is `ui/` and app.py).
"""

from albert_core.configuration.coerce import coerce
from albert_core.configuration.config import ACTIVATIONS, FAMILIES, HEADS, LIMITS, SHARING_MODES, ModelConfig
from albert_core.configuration.presets import PRESETS
from albert_core.configuration.workload import DTYPE_BYTES, OPTIMIZERS, Workload

# Everything below is imported on first use, so `import albert_core` stays fast and torch-free.
_LAZY = {
    "count_params": "albert_core.counting.params",
    "ParamBreakdown": "albert_core.counting.params",
    "count_flops": "albert_core.counting.flops",
    "FlopBreakdown": "albert_core.counting.flops",
    "estimate_memory": "albert_core.counting.memory",
    "max_batch_that_fits": "albert_core.counting.memory",
    "MemoryEstimate": "albert_core.counting.memory",
    "sweep": "albert_core.counting.sweeps",
    "analyze": "albert_core.counting.report",
    "Result": "albert_core.counting.report",
    "build_model": "albert_core.live.model",
    "check_budget": "albert_core.live.budget",
    "MemoryBudgetError": "albert_core.live.budget",
    "load_pretrained_folder": "albert_core.live.interop",
    "from_hf": "albert_core.live.interop",
    "to_transformers": "albert_core.live.interop",
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
]
