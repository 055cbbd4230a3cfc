"""The published configurations (ALBERT paper, Table 1; BERT base and large)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from albert_core.config import ModelConfig

PRESETS: Mapping[str, ModelConfig] = MappingProxyType(
    {
        "bert-base": ModelConfig(
            family="bert", vocab_size=30_522, embedding_size=768, hidden_size=768, num_layers=12,
            num_heads=12, intermediate_size=3072, hidden_act="gelu", sharing="none",
        ),
        "bert-large": ModelConfig(
            family="bert", vocab_size=30_522, embedding_size=1024, hidden_size=1024, num_layers=24,
            num_heads=16, intermediate_size=4096, hidden_act="gelu", sharing="none",
        ),
        "albert-base": ModelConfig(),
        "albert-large": ModelConfig(hidden_size=1024, num_layers=24, num_heads=16, intermediate_size=4096),
        "albert-xlarge": ModelConfig(hidden_size=2048, num_layers=24, num_heads=16, intermediate_size=8192),
        "albert-xxlarge": ModelConfig(
            hidden_size=4096, num_layers=12, num_heads=64, intermediate_size=16384
        ),
    }
)


def matching_preset(cfg: ModelConfig) -> str | None:
    """The name of the preset equal to ``cfg``, or None."""
    return next((name for name, p in PRESETS.items() if p == cfg), None)
