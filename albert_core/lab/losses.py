"""The pretraining losses of a lab run: MLM cross-entropy over the masked positions plus the sentence
task's (SOP or NSP), for one process and for one rank's shard of a data-parallel batch."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def shard_losses(out: Any, shard: dict[str, torch.Tensor], batch: dict[str, torch.Tensor], task: str,
                 world: int) -> tuple[tuple[float, float], torch.Tensor]:
    """One rank's loss on its ``shard`` of the global ``batch``, backpropagated: the summed cross-entropies
    divided by the global batch's masked tokens and pairs, times ``world`` (DDP averages the gradients over
    the ranks), so the averaged gradient is the one-process gradient of the mean losses. Returns this
    shard's (MLM loss sum, order loss sum) and the loss."""
    logits, labels = masked_logits(out, shard)
    n_masked = int((batch["mlm_labels"] != -100).sum())
    mlm_sum = F.cross_entropy(logits, labels, reduction="sum")
    loss = mlm_sum * (world / n_masked)
    order_sum = torch.zeros(())
    if task != "none":
        order_sum = F.cross_entropy(out.order_logits, shard["order_labels"].to(logits.device), reduction="sum")
        loss = loss + order_sum * (world / batch["order_labels"].shape[0])
    loss.backward()
    return (mlm_sum.item(), order_sum.item()), loss


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
