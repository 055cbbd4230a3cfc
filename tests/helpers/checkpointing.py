"""Gradient checkpointing of every executed encoder layer of a transformers model, for the tests.

BERT: transformers' own (`activation_checkpointing_enable()`, which `gradient_checkpointing_enable()`
is a deprecated alias of in transformers 5.24): each `BertLayer` runs under `torch.utils.checkpoint`.
ALBERT: transformers 5.24 refuses (`supports_gradient_checkpointing` is False), so each `AlbertLayer`
(one of the L*K executed layers) is wrapped in `torch.utils.checkpoint.checkpoint` the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch.utils.checkpoint import checkpoint
from transformers.models.albert.modeling_albert import AlbertLayer
from transformers.models.bert.modeling_bert import BertLayer

Call = tuple[Callable, tuple, dict]


def encoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    return [m for m in model.modules() if isinstance(m, (AlbertLayer, BertLayer))]


def checkpoint_layers(model: torch.nn.Module, calls: list[Call] | None = None) -> list[torch.nn.Module]:
    """Checkpoint every encoder layer of ``model``; each checkpointed call is appended to ``calls`` as
    (the layer's plain forward, its positional and keyword arguments): calling it again runs what the
    backward's recompute runs. Returns the layers."""
    layers = encoder_layers(model)
    assert layers, type(model).__name__

    def run(fn: Callable, *args, **kwargs):
        if calls is not None:
            calls.append((fn, args, kwargs))
        return checkpoint(fn, *args, use_reentrant=False, **kwargs)

    if model.supports_gradient_checkpointing:
        model.activation_checkpointing_enable()
        for layer in layers:
            assert layer.gradient_checkpointing
            if calls is not None:
                layer._gradient_checkpointing_func = run  # transformers calls it as func(forward, *args)
    else:
        assert isinstance(layers[0], AlbertLayer)
        for layer in layers:
            layer.forward = functools.partial(run, layer.forward)
    return layers

