"""albert_core: exact size and cost accounting for BERT- and ALBERT-style encoders.

Counting (params, FLOPs, memory, sweeps) never imports torch; the live model lives in
`albert_core.model` and is imported lazily through `build_model` / `from_hf`.
"""

from albert_core.config import (
    ACTIVATIONS,
    DTYPE_BYTES,
    FAMILIES,
    HEADS,
    LIMITS,
    OPTIMIZERS,
    PRESETS,
    SHARING_MODES,
    ModelConfig,
    Workload,
    parse_query,
    parse_workload_query,
)

__all__ = [
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
    "parse_query",
    "parse_workload_query",
]
