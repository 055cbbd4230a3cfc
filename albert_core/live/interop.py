"""transformers <-> live model: import a model of any family (or a saved folder), export back.

Families: ALBERT, BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa-v3, ModernBERT, EuroBERT, NomicBERT (every registered family
whose record names transformers' classes); heads: the bare model, ALBERT's / BERT's pre-training heads, the masked-LM
heads, ELECTRA's discriminator. Every weight is copied through one explicit name map (ours -> transformers') built
from the family's module names (`Family.transformers.modules`), with an assert on every shape and a check that every
transformers parameter is used exactly once. Folders are read with
transformers' `from_pretrained(local_files_only=True, use_safetensors=True)`: no network, never pickle.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from albert_core.configuration.config import FAMILIES, ModelConfig, family_of
from albert_core.configuration.hf_config import config_from_hf, config_to_hf
from albert_core.counting.params import order_head_name
from albert_core.format import fmt_bytes
from albert_core.live import budget
from albert_core.live.budget import ForwardGuard, MemoryBudgetError, check_budget, memory_budget
from albert_core.live.model import (
    EncoderModel,
    build_model,
    default_seq_len,
    dtype_name,
)


def _head_of_class() -> dict[str, tuple[str, str]]:
    """transformers' class name -> (family, head), for every registered family with classes."""
    out = {}
    for name in FAMILIES:
        record = family_of(name)
        for head in record.transformers.heads if record.transformers else ():
            out.setdefault(record.class_name(head), (name, head))
    return out


def _hf_class(family: str, head: str) -> type[nn.Module]:
    import transformers

    record = family_of(family)
    name = record.class_name(head)
    if name is None or not hasattr(transformers, name):
        classes = [record.class_name(h) for h in (record.transformers.heads if record.transformers else ())]
        raise ValueError(f"transformers has no class for a {family} encoder with head {head!r} (classes: "
                         f"{', '.join(classes) or 'none'})")
    return getattr(transformers, name)


def _param_map(cfg: ModelConfig, hf_config: Any = None) -> list[tuple[str, list[str]]]:
    """(our parameter name, the transformers parameter names it is made of) for every parameter, from the module
    names of the family's record (`Modules`); ``hf_config`` (the transformers model's config) picks a head the class
    builds by a value of its config (`Modules.mlm_variants`: DeBERTa's newer head).

    Only Q/K/V (and a GLU's gate and up projections) map to more than one name: they are concatenated along the
    output dimension. transformers' classes of the families after BERT hold no sharing and no factorization beyond
    ELECTRA's and DeBERTa's projections: one layer a copy; ALBERT's hold G groups of K inner layers.
    """
    record = family_of(cfg.family)
    if record.transformers is None:
        raise ValueError(f"transformers has no class for {record.label}: no weights map to it")
    m = record.transformers.modules
    ours = {name for name, _ in EncoderModel(cfg).named_parameters()}  # meta device: shapes only
    p = "" if cfg.head == "model" else m.base + "."
    out: list[tuple[str, list[str]]] = []

    def pair(mine: str, *theirs: str) -> None:
        for w in ("weight", "bias"):
            if f"{mine}.{w}" in ours:
                out.append((f"{mine}.{w}", [f"{t}.{w}" for t in theirs]))

    for name, theirs in m.tables.items():
        pair(f"embeddings.{name}", p + theirs)
    if m.projection:
        pair("encoder.embedding_hidden_mapping_in", p + m.projection)
    if m.relative:
        pair("embeddings.relative_embeddings", p + m.relative[0])
        pair("embeddings.relative_LayerNorm", p + m.relative[1])
    K = cfg.inner_group_num
    for kind, names, copies in (("attention", m.attention, cfg.attention_copies), ("ffn", m.ffn, cfg.ffn_copies)):
        for c in range(copies // K):
            for k in range(K):
                block = p + m.layer.format(i=c) + ("." + m.block.format(k=k) if m.block else "")
                for mine, theirs in names.items():
                    pair(f"encoder.{kind}.{c}.{k}.{mine}", *(f"{block}.{t}" for t in theirs))
    if m.final_norm:
        pair("encoder.final_norm", p + m.final_norm)
    if m.pooler:
        pair("pooler", p + m.pooler)
    mlm = dict(m.mlm)
    for (attribute, value), names in m.mlm_variants:
        if hf_config is not None and getattr(hf_config, attribute, None) == value:
            mlm = dict(names)
    for mine in ("dense", "LayerNorm", "decoder"):
        if mine in mlm:
            pair(f"predictions.{mine}", mlm[mine])
    if "predictions.bias" in ours:
        out.append(("predictions.bias", [mlm["bias"]]))
    if cfg.has_order_head and m.order:
        pair(order_head_name(cfg.family), m.order[1])
    for mine, theirs in m.discriminator.items():
        pair(f"discriminator.{mine}", theirs)
    return out


def _unique_params(model: nn.Module) -> dict[int, str]:
    """id of each distinct parameter -> its first name (tied weights once)."""
    return {id(p): name for name, p in model.named_parameters()}


def _check_all_used(hf_model: nn.Module, used: Iterable[nn.Parameter]) -> None:
    ids = [id(t) for t in used]
    counts: dict[int, int] = {}
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    names = _unique_params(hf_model)
    twice = sorted(names[i] for i, n in counts.items() if n > 1)
    unused = sorted(name for i, name in names.items() if i not in counts)
    assert not twice, f"transformers parameters used more than once: {twice}"
    assert not unused, f"transformers parameters not copied: {unused}"


# ----------------------------------------------------------------------------- import
def from_hf(source: Any, *, dtype: torch.dtype = torch.float32) -> EncoderModel:
    """Our model with every weight of ``source`` copied: a transformers model of any family and head whose class
    its record names (`_head_of_class`: AlbertModel / AlbertForPreTraining / AlbertForMaskedLM, BertModel / ...,
    RobertaModel / RobertaForMaskedLM, XLMRoberta..., ElectraModel / ElectraForMaskedLM / ElectraForPreTraining,
    DebertaV2Model / ...ForMaskedLM, ModernBert..., EuroBert..., NomicBert...) instance, or a folder saved with
    ``save_pretrained`` (safetensors only, memory budget checked before loading). Library use: the result's inputs
    are not limited, as for a model one already holds; the app loads user folders with `load_pretrained_folder`,
    which confines and limits."""
    if isinstance(source, (str, Path)):
        model = load_pretrained_folder(source, allowed_roots=None)
        model.guard = None
        return model
    hf_model = source
    cls_name = type(hf_model).__name__
    classes = _head_of_class()
    if cls_name not in classes or not isinstance(hf_model, nn.Module):
        raise ValueError(f"source must be one of {', '.join(classes)} or a saved folder, got {cls_name}")
    family, head = classes[cls_name]
    cfg = config_from_hf(hf_model.config, head=head)
    base = hf_model if head == "model" else getattr(hf_model, family_of(family).transformers.modules.base)
    pooler = getattr(base, "pooler", None)
    if head == "model" and cfg.pooler and pooler is None:
        raise ValueError(f"{cls_name} was built with add_pooling_layer=False, which has no ModelConfig head")
    if pooler is not None and not cfg.has_pooler:
        raise ValueError(f"{cls_name} was built with add_pooling_layer=True: a {family} pooler is not modelled")
    return _copy_from(hf_model, cfg, dtype)


@torch.no_grad()
def _copy_from(hf_model: nn.Module, cfg: ModelConfig, dtype: torch.dtype) -> EncoderModel:
    if getattr(hf_model.config, "is_decoder", False) or getattr(hf_model.config, "add_cross_attention", False):
        raise ValueError("is_decoder / add_cross_attention must be off: only bidirectional encoders are modelled")
    rel = getattr(hf_model.config, "max_relative_positions", -1) if cfg.position == "relative" else -1
    if isinstance(rel, int) and rel >= 1 and rel != cfg.max_position_embeddings:
        # counted right, but the live model log-buckets relative positions up to max_position_embeddings, as
        # transformers does only with max_relative_positions -1 (DeBERTa-v3's own configs)
        raise ValueError(f"max_relative_positions must be -1 or max_position_embeddings "
                         f"({cfg.max_position_embeddings}) for the live model (its relative buckets span the position "
                         f"range), got {rel}")
    model = build_model(cfg, device="meta", dtype=dtype)
    model.to_empty(device=next(hf_model.parameters()).device)
    ours = dict(model.named_parameters())
    theirs = dict(hf_model.named_parameters(remove_duplicate=False))
    mapping = _param_map(cfg, hf_model.config)
    assert sorted(ours) == sorted(name for name, _ in mapping), "every parameter of ours is mapped once"
    used = []
    for name, sources in mapping:
        try:
            tensors = [theirs[s] for s in sources]
        except KeyError as exc:
            raise ValueError(f"transformers model has no parameter {exc.args[0]} (expected for {cfg.label})") from None
        value = torch.cat(tensors) if len(tensors) > 1 else tensors[0]
        assert value.shape == ours[name].shape, f"{name}: {tuple(value.shape)} != {tuple(ours[name].shape)}"
        ours[name].copy_(value)
        used += tensors
    _check_all_used(hf_model, used)
    return model.eval()


def load_pretrained_folder(
    path: str | Path,
    *,
    allowed_roots: Iterable[str | Path] | None,
    batch: int = 1,
    seq_len: int | None = None,
    budget_bytes: int | None = None,
    wait_s: float = 0.0,
) -> EncoderModel:
    """Load a folder saved with ``save_pretrained`` into our model, safely.

    The path is resolved and must lie inside one of ``allowed_roots`` (None: anywhere, for library
    use). The memory budget is checked from the folder's config.json before any weight is read
    (the transformers copy and ours both live during the copy), and only safetensors files are
    read; they must hold every weight the model needs (an empty file or a missing tensor is a
    ValueError, never a randomly initialised weight). The model refuses inputs larger than
    (batch, seq_len) (default: 128 tokens, or the position table's length if that is shorter).
    """
    folder = confine_folder(path, allowed_roots)
    cfg = config_from_hf(folder)
    if not any(folder.glob("*.safetensors")):
        if any(folder.glob("*.bin")) or any(folder.glob("*.pt")):
            raise ValueError(
                f"{folder} holds only pickle weights (.bin); only safetensors are loaded "
                "(re-save with save_pretrained(..., safe_serialization=True))"
            )
        raise ValueError(f"{folder} holds no .safetensors weights")
    seq_len = default_seq_len(cfg) if seq_len is None else seq_len
    weights = _estimated_weight_bytes(cfg)
    check = check_budget(cfg, batch, seq_len, torch.float32, budget_bytes=budget_bytes, extra_bytes=weights)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    on_disk = sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    if on_disk > check.budget:
        raise MemoryBudgetError(f"{folder} holds {on_disk:,} bytes of weights, over the memory budget")
    for file in sorted(folder.glob("*.safetensors")):
        check_weights_file(file)
    # With the process budget, both copies are reserved while loading, then our weights while the model lives.
    ledger = budget.PROCESS_BUDGET if budget_bytes is None else None
    held = ledger.reserve(2 * weights, f"loading {folder.name}", wait_s=wait_s) if ledger else None
    try:
        try:
            hf_model, info = _hf_class(cfg.family, cfg.head).from_pretrained(
                folder, local_files_only=True, use_safetensors=True, dtype=torch.float32, output_loading_info=True
            )
        except Exception as exc:  # any reader failure (corrupt file, shape mismatch) is a bad folder
            raise ValueError(f"could not load the weights in {folder}: {str(exc)[:300]}") from exc
        if missing := sorted(info.get("missing_keys") or ()):
            shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
            raise ValueError(
                f"the weights in {folder} lack {len(missing)} tensor(s) of {cfg.label} ({shown}): a checkpoint "
                "must hold every weight of its model, none is left randomly initialised"
            )
        model = _copy_from(hf_model.eval(), cfg, torch.float32)
        del hf_model
    except BaseException:
        if held:
            held.release()
        raise
    if held:
        held.shrink(weights).hold_until_freed(model)
    model.guard = ForwardGuard(
        cfg, batch, seq_len, dtype_name(torch.float32), "cpu", check.budget, check.estimate - weights,
        ledger=ledger, wait_s=wait_s,
    )
    return model


def check_weights_file(path: str | Path) -> None:
    """A safetensors weights file that holds at least one tensor (only its header is read); ValueError
    naming the file otherwise: an empty file would leave every weight randomly initialised."""
    from safetensors import safe_open

    path = Path(path)
    try:
        with safe_open(path, framework="pt") as handle:
            empty = not handle.keys()
    except Exception as exc:  # not a safetensors file: a bad folder, as for any reader failure
        raise ValueError(f"could not load the weights in {path.parent}: {str(exc)[:300]}") from exc
    if empty:
        raise ValueError(
            f"{path.name} holds no tensors: a weights file must hold the model's weights ({path.parent})"
        )


def _estimated_weight_bytes(cfg: ModelConfig) -> int:
    from albert_core.counting.params import count_params

    return count_params(cfg).total * 4


def confine_folder(path: str | Path, allowed_roots: Iterable[str | Path] | None) -> Path:
    """The resolved checkpoint folder, which must lie inside one of ``allowed_roots`` (None: anywhere).

    Symlinks and ``..`` are resolved first; a path outside the roots is refused before anything is
    checked on disk, so a visitor cannot probe which server paths exist."""
    try:
        folder = Path(path).expanduser().resolve(strict=False)
    except (OSError, RuntimeError, ValueError):
        raise ValueError(f"model folder does not exist (not a valid path): {str(path)[:200]!r}") from None
    if allowed_roots is not None:
        roots = [Path(r).expanduser().resolve() for r in allowed_roots]
        if not any(folder.is_relative_to(r) for r in roots):
            raise ValueError("model folder is outside the allowed folders of this server")
    if not folder.exists():
        raise ValueError(f"model folder does not exist: {folder}")
    if not folder.is_dir():
        raise ValueError(f"model path must be a folder saved with save_pretrained: {folder}")
    if not (folder / "config.json").is_file():
        raise ValueError(f"model folder {folder} has no config.json")
    if allowed_roots is not None:
        _check_links_inside(folder, roots)
    return folder


MAX_FOLDER_ENTRIES = 1000


def _check_links_inside(folder: Path, roots: list[Path]) -> None:
    """Every file of the folder (config.json, weights, tokenizer files) resolves inside the roots: a
    symlink inside an allowed folder must not read a file from outside them."""
    for i, entry in enumerate(folder.iterdir()):
        if i >= MAX_FOLDER_ENTRIES:
            raise ValueError(f"model folder holds more than {MAX_FOLDER_ENTRIES} entries")
        if entry.is_symlink():
            target = entry.resolve(strict=False)
            if not any(target.is_relative_to(r) for r in roots):
                raise ValueError(f"model folder entry {entry.name!r} links outside the allowed folders of this server")


# ----------------------------------------------------------------------------- export
@torch.no_grad()
def to_transformers(model: EncoderModel, *, budget_bytes: int | None = None) -> nn.Module:
    """The transformers model (AlbertModel, BertForPreTraining, ModernBertForMaskedLM, ...) holding our weights,
    in eval mode, with the same outputs. Only configs a transformers class holds export: ALBERT with sharing 'none'
    or 'all', and the other families without E or sharing their class lacks (`hf_class_mismatch`); anything else
    is a ValueError saying why. Both copies of the weights must fit the memory budget."""
    cfg = model.config
    hf_dict = config_to_hf(cfg)  # ValueError with a clear message for partial sharing
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    budget = memory_budget(budget_bytes)
    if 2 * weights > budget:
        raise MemoryBudgetError(
            f"exporting {cfg.label} needs a second copy of its weights: about {fmt_bytes(2 * weights)}, "
            f"over the memory budget of {fmt_bytes(budget)}"
        )
    import transformers

    first = next(model.parameters())
    if first.device.type == "meta":
        raise ValueError("a model on the meta device has no weights to export")
    cls = _hf_class(cfg.family, cfg.head)
    hf_config = transformers.AutoConfig.for_model(**hf_dict)
    with torch.device(first.device):
        hf_model = cls(hf_config).to(first.dtype)
    ours = dict(model.named_parameters())
    theirs = dict(hf_model.named_parameters(remove_duplicate=False))
    used = []
    for name, targets in _param_map(cfg, hf_config):
        tensors = [theirs[t] for t in targets]
        parts = ours[name].split([t.shape[0] for t in tensors]) if len(tensors) > 1 else [ours[name]]
        for t, part in zip(tensors, parts, strict=True):
            assert t.shape == part.shape, f"{name}: {tuple(part.shape)} != {tuple(t.shape)}"
            t.copy_(part)
        used += tensors
    _check_all_used(hf_model, used)
    return hf_model.eval()

