"""The Live model page's models: which one (`ModelRef`: the sidebar config, a checkpoint folder, a hub
download or a lab run), how each is built or loaded, and the bounded caches that hold them.

Memory stays bounded for a hosted demo: at most two built models and one loaded checkpoint are cached
(process-wide), each freed after MODEL_TTL_S unused; every real build and load reserves its bytes from the
process budget (`albert_core.live.budget`), and live work runs one piece at a time (`budget.LIVE_WORK`),
so a crowd meets "the server is busy", not an out-of-memory kill. Pages and fragments keep a `ModelRef`
and ask `model_of` for the model, never hold the model itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import config_from_hf
from albert_core.live import budget

MAX_TOKENS = 128  # the live run's longest input; the budget check covers batch 1 x this
# Even on the meta device every attention / FFN block is a Python module (tens of kB and its build time each):
# above this many blocks the proof build itself would cost a hosted demo too much memory and time.
MAX_META_BLOCKS = 1024
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")

# Built and loaded models live in bounded caches that free them after MODEL_TTL_S unused (and when
# memory is short); their weights are reserved in the process budget for as long as they live.
MODEL_TTL_S = 300.0
WAIT_S = 10.0  # how long a visitor's live work waits for memory or the CPU before "the server is busy"
_MODELS = budget.ExpiringCache(max_entries=2, ttl_s=MODEL_TTL_S)
_CHECKPOINTS = budget.ExpiringCache(max_entries=1, ttl_s=MODEL_TTL_S)


@dataclass(frozen=True)
class ModelRef:
    """Which live model: the sidebar config (random seeded weights) or a checkpoint folder. Small and
    hashable, so pages and fragments keep this rather than the model (which a cache may free)."""

    cfg: ModelConfig
    dtype: str
    seq_len: int
    folder: str | None = None
    mtime_ns: int = 0
    roots: tuple[str, ...] = ()
    lab: bool = False  # a lab run (the lab's own loader: it also reads partial-sharing layouts)


def torch_dtype(name: str):
    from albert_core.live.model import TORCH_DTYPES

    return TORCH_DTYPES[name]


def too_many_blocks(cfg: ModelConfig) -> str | None:
    """Why ``cfg`` is not built at all (even on the meta device), or None."""
    blocks = cfg.attention_copies + cfg.ffn_copies
    if blocks <= MAX_META_BLOCKS:
        return None
    return (f"it holds {blocks:,} attention and feed-forward blocks, more than the {MAX_META_BLOCKS:,} this "
            "server builds as modules, even on the meta device")


def check_hub_id(repo_id: str) -> str:
    """A hub model id such as 'albert/albert-base-v2'; ValueError naming the rule otherwise."""
    repo_id = repo_id.strip()
    if not _HUB_ID.fullmatch(repo_id) or ".." in repo_id:
        raise ValueError("hub id must look like 'owner/name' (letters, digits, '-', '_', '.'; at most 96 each)")
    return repo_id


# ----------------------------------------------------------------------------- the sidebar config
def built_model(cfg: ModelConfig, dtype: str, seq_len: int):
    """A real model of ``cfg``, built once per config (budget-checked by build_model: MemoryBudgetError
    above it, BusyError when other visitors hold the memory or the CPU)."""
    from albert_core.live.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    def build():
        with budget.LIVE_WORK.enter("model build", wait_s=WAIT_S):
            return build_model(cfg, "cpu", torch_dtype(dtype), batch=1, seq_len=seq_len, wait_s=WAIT_S)

    return _MODELS.get((cfg, dtype, seq_len), build)


@st.cache_resource(max_entries=2, show_spinner=False)
def meta_model(cfg: ModelConfig, dtype: str):
    """Shapes only: proves the count without allocating weights (ValueError above MAX_META_BLOCKS)."""
    from albert_core.live.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    return build_model(cfg, "meta", torch_dtype(dtype))


# ----------------------------------------------------------------------------- checkpoints, hub, lab runs
def checkpoint_model(folder: str, mtime_ns: int, roots: tuple[str, ...]):
    """A checkpoint folder loaded by `load_pretrained_folder` (confined to ``roots``, budget-checked
    for one sequence of up to MAX_TOKENS). ``mtime_ns`` is in the key so a re-saved folder reloads."""
    from albert_core.live.interop import confine_folder, load_pretrained_folder

    def load():
        # the same confinement load_pretrained_folder applies, before config.json is read
        cfg = config_from_hf(confine_folder(folder, roots))
        seq_len = min(MAX_TOKENS, cfg.max_seq_len)
        with budget.LIVE_WORK.enter("checkpoint load", wait_s=WAIT_S):
            return load_pretrained_folder(folder, allowed_roots=roots, batch=1, seq_len=seq_len, wait_s=WAIT_S)

    return _CHECKPOINTS.get((folder, mtime_ns, roots), load)


def hub_folder(repo_id: str, seq_len: int) -> Path:
    """Download a hub model's config, check the memory budget, then its safetensors and tokenizer
    files (never pickles). Only called when `hub_allowed()`; never in tests."""
    from huggingface_hub import hf_hub_download, snapshot_download

    from albert_core.counting.params import count_params
    from albert_core.live.budget import MemoryBudgetError, check_budget

    repo_id = check_hub_id(repo_id)
    cfg = config_from_hf(hf_hub_download(repo_id, "config.json"))
    check = check_budget(cfg, 1, min(seq_len, cfg.max_seq_len),
                         extra_bytes=4 * count_params(cfg).total)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    patterns = ["*.json", "*.safetensors", "vocab.txt", "spiece.model"]
    return Path(snapshot_download(repo_id, allow_patterns=patterns))


def load_lab_model(folder: str, roots: tuple[str, ...], seq_len: int):
    """The trained model of a lab run (uncached: `lab_checkpoint_model` keeps it in the budgeted cache): a
    transformers layout through `load_pretrained_folder` (confined to the lab roots, budget-checked), partial
    sharing through the lab's own loader."""
    from albert_core.lab.checkpoint import load_model
    from albert_core.live.interop import confine_folder, load_pretrained_folder

    path = Path(folder)
    if (path / "config.json").is_file():
        return load_pretrained_folder(folder, allowed_roots=roots, batch=1, seq_len=seq_len)
    confine_folder(path.parent, roots)  # partial sharing: no config.json to confine by, check the parent
    return load_model(folder, seq_len=seq_len)


def lab_checkpoint_model(folder: str, mtime_ns: int, roots: tuple[str, ...], seq_len: int):
    """A finished lab run's trained model, in the same budgeted expiring cache as checkpoints."""

    def load():
        with budget.LIVE_WORK.enter("lab run load", wait_s=WAIT_S):
            return load_lab_model(folder, roots, seq_len)

    return _CHECKPOINTS.get((folder, mtime_ns, roots, seq_len), load)


def model_of(ref: ModelRef):
    """The live model of ``ref`` (from its cache, rebuilt or reloaded if the cache freed it)."""
    if ref.lab:
        return lab_checkpoint_model(ref.folder, ref.mtime_ns, ref.roots, ref.seq_len)
    if ref.folder is not None:
        return checkpoint_model(ref.folder, ref.mtime_ns, ref.roots)
    return built_model(ref.cfg, ref.dtype, ref.seq_len)
