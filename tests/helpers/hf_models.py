"""The one helper that builds transformers' model of a config (the oracle of the counting and model tests)."""

from __future__ import annotations

import torch
import transformers

from albert_core import ModelConfig
from albert_core.configuration.hf_config import config_to_hf
from tests.helpers.facts import HF_CLASS_NAMES


def hf_model(cfg: ModelConfig, *, device: str = "cpu", attn: str = "eager", dropout: float | None = None):
    """transformers' model of ``cfg``: the class its documentation names for (family, head), built from
    ``config_to_hf(cfg)`` on ``device`` with ``attn`` attention (eager: every matmul visible), in train mode
    (as any new torch module). ``dropout`` overrides the config's dropout probabilities."""
    d = config_to_hf(cfg)
    if dropout is not None:
        d.update(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout, classifier_dropout_prob=dropout)
    conf = transformers.AutoConfig.for_model(**d)
    cls = getattr(transformers, HF_CLASS_NAMES[cfg.family, cfg.head])
    with torch.device(device):
        return cls._from_config(conf, attn_implementation=attn)
