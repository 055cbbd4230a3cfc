"""The optimizer and schedule every lab training shares: pretraining (`trainer`) and the downstream probe's
fine-tuning (`probe`). AdamW with BERT's betas and epsilon, no weight decay on biases and norms, and a linear
warmup followed by a linear decay to 0."""

from __future__ import annotations

import torch

from albert_core.lab.spec import ADAM_BETAS, ADAM_EPS


def adamw(model: torch.nn.Module, lr: float, weight_decay: float, *, fused: bool = False) -> torch.optim.Optimizer:
    """AdamW over ``model``'s trainable weights: ``weight_decay`` on the matrices, none on biases and norms."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.dim() < 2 or "LayerNorm" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=ADAM_BETAS, eps=ADAM_EPS, fused=fused)


def warmup_then_linear(step: int, warmup: int, total: int) -> float:
    """The learning-rate factor at ``step`` (from 0): linear warmup over ``warmup`` steps, then linear decay to 0
    at ``total``."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))
