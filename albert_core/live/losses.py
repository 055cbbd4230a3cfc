"""The pretraining losses of a lab run: MLM cross-entropy over the masked positions plus the sentence
task's (SOP or NSP), for one process and for one rank's shard of a data-parallel batch."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def shard_losses(out: Any, shard: dict[str, torch.Tensor], batch: dict[str, torch.Tensor], task: str,
                 world: int) -> tuple[float, float]:
    """One rank's loss on its ``shard`` of the global ``batch`` (the whole batch in one process),
    backpropagated: each mean cross-entropy over the shard weighted by the shard's share of the global
    batch's masked pieces (pairs), times ``world`` (DDP averages the gradients over the ranks), so the
    averaged gradient is the gradient of the global batch's mean losses. In one process both weights are
    exactly 1. Returns this shard's (MLM loss sum, order loss sum) for the log."""
    logits, labels = masked_logits(out, shard)
    n_local, n_global = labels.numel(), int((batch["mlm_labels"] != -100).sum())
    # a shard without a masked piece still backpropagates (a 0 with its graph) so that DDP's ranks agree
    mlm = F.cross_entropy(logits, labels) if n_local else F.cross_entropy(logits, labels, reduction="sum")
    loss = mlm * (world * n_local / n_global)
    order_sum = 0.0
    if task != "none":
        rows_local, rows_global = shard["order_labels"].shape[0], batch["order_labels"].shape[0]
        order = F.cross_entropy(out.order_logits, shard["order_labels"].to(logits.device))
        loss = loss + order * (world * rows_local / rows_global)
        order_sum = order.item() * rows_local
    loss.backward()
    return mlm.item() * n_local, order_sum


def masked_logits(out: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits (N, V), labels (N,)) at the N masked positions of ``batch``, from a forward with
    ``model_inputs(batch, device, masked=True)`` (the head scored those positions only) or without it."""
    logits = out.prediction_logits
    labels = batch["mlm_labels"].to(logits.device)
    keep = labels != -100
    return (logits[keep] if logits.dim() == 3 else logits), labels[keep]


def losses(out: Any, batch: dict[str, torch.Tensor], task: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(MLM cross-entropy over masked positions, order cross-entropy or None for task 'none')."""
    logits, labels = masked_logits(out, batch)
    mlm = F.cross_entropy(logits, labels)
    if task == "none":
        return mlm, None
    order = F.cross_entropy(out.order_logits, batch["order_labels"].to(logits.device))
    return mlm, order
