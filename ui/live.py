"""Streamlit-side helpers of the Live model page: bounded caches of live models and their runs,
the analytic-vs-live count table, and the checkpoint / hub switches read from the environment.

Memory stays bounded for a hosted demo: at most two built models, one loaded checkpoint and two
runs are cached (process-wide), and every real build goes through `build_model`'s budget check.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from albert_core import ModelConfig
from albert_core.params import COMPONENT_INFO, ParamBreakdown, component_of

ROOTS_ENV = "ALBERT_EXPLORER_CHECKPOINT_ROOTS"
HUB_ENV = "ALBERT_EXPLORER_ALLOW_HUB"
MAX_TOKENS = 128  # the live run's longest input; the budget check covers batch 1 x this
# Even on the meta device every attention / FFN block is a Python module (~25 kB, ~1 ms to build):
# above this many blocks the proof build itself would cost a hosted demo too much memory and time.
MAX_META_BLOCKS = 1024
# Plain words, not emoji: a browser without an emoji font (headless Chromium) drew empty boxes.
MATCH, MISMATCH = "match", "MISMATCH"
# A forward pass slower than this (seconds) puts the latency runs and the saved-activation pass
# behind buttons: a visitor sees the count proof and one run at once, never a minute of waiting.
SLOW_FORWARD_S = 0.5
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")


# ----------------------------------------------------------------------------- environment switches
def checkpoint_roots() -> list[Path]:
    """Folders a visitor may load checkpoints from ($ALBERT_EXPLORER_CHECKPOINT_ROOTS, os.pathsep
    separated). Empty by default: a hosted demo must not read arbitrary server paths."""
    raw = os.environ.get(ROOTS_ENV, "")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip()]


def hub_allowed() -> bool:
    """Hub downloads only when the operator opts in ($ALBERT_EXPLORER_ALLOW_HUB=1)."""
    return os.environ.get(HUB_ENV, "").strip() == "1"


def check_hub_id(repo_id: str) -> str:
    """A hub model id such as 'albert/albert-base-v2'; ValueError naming the rule otherwise."""
    repo_id = repo_id.strip()
    if not _HUB_ID.fullmatch(repo_id) or ".." in repo_id:
        raise ValueError("hub id must look like 'owner/name' (letters, digits, '-', '_', '.'; at most 96 each)")
    return repo_id


# ----------------------------------------------------------------------------- counts
def live_counts(model: Any) -> dict[str, int]:
    """Parameters of a live model per component (tied / shared tensors once), on any device."""
    out: dict[str, int] = {}
    for name, p in model.named_parameters():  # named_parameters() yields each tensor once
        comp = component_of(name)
        out[comp] = out.get(comp, 0) + p.numel()
    return out


def match_table(analytic: ParamBreakdown, live: dict[str, int]) -> pd.DataFrame:
    """Component, label, analytic count, live count and a MATCH / MISMATCH mark; the last row holds the totals."""
    names = [c.name for c in analytic.components] + sorted(set(live) - set(analytic.by_name()))
    exact = analytic.by_name()
    rows = []
    for name in names:
        a, b = exact.get(name), live.get(name)
        rows.append({
            "component": name,
            "label": COMPONENT_INFO.get(name, (name, ""))[0],
            "analytic": a,
            "live": b,
            "match": MATCH if a is not None and a == b else MISMATCH,
        })
    a_total, b_total = analytic.total, sum(live.values())
    rows.append({"component": "total", "label": "Total (tied weights once)", "analytic": a_total,
                 "live": b_total, "match": MATCH if a_total == b_total else MISMATCH})
    df = pd.DataFrame(rows)
    return df.astype({"analytic": "Int64", "live": "Int64"})


# ----------------------------------------------------------------------------- cached resources
def torch_dtype(name: str):
    from albert_core.model import TORCH_DTYPES

    return TORCH_DTYPES[name]


def too_many_blocks(cfg: ModelConfig) -> str | None:
    """Why ``cfg`` is not built at all (even on the meta device), or None."""
    blocks = cfg.attention_copies + cfg.ffn_copies
    if blocks <= MAX_META_BLOCKS:
        return None
    return (f"it holds {blocks:,} attention and feed-forward blocks, more than the {MAX_META_BLOCKS:,} this "
            "server builds as modules, even on the meta device")


@st.cache_resource(max_entries=2, show_spinner=False)
def built_model(cfg: ModelConfig, dtype: str, seq_len: int):
    """A real model of ``cfg`` (budget-checked by build_model: MemoryBudgetError above it)."""
    from albert_core.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    return build_model(cfg, "cpu", torch_dtype(dtype), batch=1, seq_len=seq_len)


@st.cache_resource(max_entries=2, show_spinner=False)
def meta_model(cfg: ModelConfig, dtype: str):
    """Shapes only: proves the count without allocating weights (ValueError above MAX_META_BLOCKS)."""
    from albert_core.model import build_model

    if problem := too_many_blocks(cfg):
        raise ValueError(problem)

    return build_model(cfg, "meta", torch_dtype(dtype))


@st.cache_resource(max_entries=1, show_spinner=False)
def checkpoint_model(folder: str, mtime_ns: int, roots: tuple[str, ...]):
    """A checkpoint folder loaded by `load_pretrained_folder` (confined to ``roots``, budget-checked
    for one sequence of up to MAX_TOKENS). ``mtime_ns`` is in the key so a re-saved folder reloads."""
    from albert_core.interop import confine_folder, load_pretrained_folder

    # the same confinement load_pretrained_folder applies, before config.json is read
    cfg = ModelConfig.from_hf(confine_folder(folder, roots))
    seq_len = min(MAX_TOKENS, cfg.max_position_embeddings)
    return load_pretrained_folder(folder, allowed_roots=roots, batch=1, seq_len=seq_len)


def hub_folder(repo_id: str, seq_len: int) -> Path:
    """Download a hub model's config, check the memory budget, then its safetensors and tokenizer
    files (never pickles). Only called when `hub_allowed()`; never in tests."""
    from huggingface_hub import hf_hub_download, snapshot_download

    from albert_core.model import MemoryBudgetError, check_budget
    from albert_core.params import count_params

    repo_id = check_hub_id(repo_id)
    cfg = ModelConfig.from_hf(hf_hub_download(repo_id, "config.json"))
    check = check_budget(cfg, 1, min(seq_len, cfg.max_position_embeddings),
                         extra_bytes=4 * count_params(cfg).total)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    patterns = ["*.json", "*.safetensors", "vocab.txt", "spiece.model"]
    return Path(snapshot_download(repo_id, allow_patterns=patterns))


def set_torch_threads() -> int:
    """Use every core this process may run on, once per process. torch picks its default when it
    is first imported, which in a server may be from a thread or a container view that differs."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if torch.get_num_threads() != cores:
        torch.set_num_threads(cores)
    return torch.get_num_threads()


def tokens_frame(encoded: Any) -> pd.DataFrame:
    """One row per token (position, token, id, segment): read top to bottom, no sideways scroll."""
    return pd.DataFrame({
        "token": list(encoded.tokens),
        "id": [int(i) for i in encoded.ids],
        "segment": ["A" if int(t) == 0 else "B" for t in encoded.token_type_ids],
    })


@dataclass(frozen=True)
class Run:
    """One forward pass on the user's text, with hidden states and attention maps kept."""

    encoded: Any  # albert_core.tokenizer.Encoded
    output: Any  # albert_core.model.EncoderOutput
    seconds: float  # wall time of that forward pass: decides whether more runs wait for a click


@st.cache_resource(max_entries=2, show_spinner=False)
def run_text(_model: Any, key: tuple, text: str, pair: str | None, checkpoint: str | None) -> Run:
    """Tokenize and run once (hidden states and attentions kept); ``key`` identifies the model."""
    import torch

    from albert_core.tokenizer import encode

    cfg = _model.config
    enc = encode(text, cfg, min(MAX_TOKENS, cfg.max_position_embeddings), pair, checkpoint)
    set_torch_threads()
    with torch.inference_mode():
        t0 = time.perf_counter()
        out = _model(**enc.tensors(), output_hidden_states=True, output_attentions=True)
        seconds = time.perf_counter() - t0
    return Run(enc, out, seconds)


@st.cache_data(max_entries=16, show_spinner=False)
def timing(_model: Any, key: tuple, text: str, pair: str | None, checkpoint: str | None, n: int) -> dict:
    """Median latency of n forward passes, achieved GFLOP/s and the share of the matmul probe."""
    from albert_core.analysis import achieved_gflops, matmul_peak_gflops, measure_latency

    threads = set_torch_threads()
    run = run_text(_model, key, text, pair, checkpoint)
    lat = measure_latency(_model, run.encoded, n=n, warmup=1)
    gflops = achieved_gflops(_model.config, 1, len(run.encoded), lat.median_s)
    peak = matmul_peak_gflops()  # measured once per process and thread count (about half a second)
    return {"median_s": lat.median_s, "p10": lat.p10, "p90": lat.p90, "gflops": gflops, "peak": peak,
            "threads": threads}


@st.cache_data(max_entries=16, show_spinner=False)
def saved_bytes(_model: Any, key: tuple, text: str, pair: str | None, checkpoint: str | None) -> int:
    """Bytes autograd really saves for backward on the user's text (training-mode forward)."""
    from albert_core.analysis import saved_activation_bytes

    run = run_text(_model, key, text, pair, checkpoint)
    return saved_activation_bytes(_model, run.encoded)
