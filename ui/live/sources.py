"""The Live model page's "Model" choice: the sidebar's config (built further down), a transformers checkpoint
folder inside the folders the server allows, a run from the lab, the trained MiniLM an installed package ships
(`ui.live.real`), or a Hugging Face hub id (only when the
server allows downloads). A loaded model is budget-checked before any weight is read; what cannot be
loaded is said and stops the page. The page keeps the `Source` (a `ModelRef`), never the model."""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from albert_core import settings
from albert_core.configuration.config import ModelConfig
from albert_core.format import escape_markdown
from albert_core.live.model import TORCH_DTYPES
from ui.live import lab as live_lab
from ui.live import real as live_real
from ui.live.gate import busy_or_error
from ui.live.lab import LabRun
from ui.live.models import MAX_TOKENS, ModelRef, checkpoint_model, hub_folder
from ui.url_state import seed_widget, sync_widget

URL_SOURCE = "model"  # the page's own URL key (the share link reopens the same source)
SOURCE_KEY = "live_source"


def sources() -> dict[str, str]:
    """The radio's options (key -> label), the hub only where the server allows downloads."""
    out = {"config": "The sidebar config", "folder": "A transformers checkpoint folder",
           live_lab.SOURCE_KEY: live_lab.SOURCE_LABEL, live_real.SOURCE_KEY: live_real.SOURCE_LABEL}
    if settings.hub_allowed():
        out["hub"] = "A Hugging Face hub id (downloads)"
    return out


@dataclass(frozen=True)
class Source:
    """The model the page shows: its config and compute dtype, and for a loaded model its `ModelRef` (None:
    the sidebar's config, not built yet) and, for a lab run, the run."""

    cfg: ModelConfig
    dtype: str
    ref: ModelRef | None = None
    lab_run: LabRun | None = None


def pick() -> str:
    """The "Model" radio, its value seeded from and written back to the URL."""
    options = sources()
    seeded = seed_widget(URL_SOURCE, SOURCE_KEY, "config", options.__contains__)
    source = st.radio("Model", list(options), index=list(options).index(seeded), format_func=options.get,
                      horizontal=True, key=SOURCE_KEY,
                      help="The sidebar's config (random weights, seeded), or trained weights from a folder "
                      "saved with transformers' save_pretrained.")
    sync_widget(URL_SOURCE, source, "config")
    return source


def compute_dtype(dtype: str) -> str:
    """The dtype the live model runs in: the sidebar's, or fp32 (said in a caption) for a storage format."""
    out = dtype if dtype in TORCH_DTYPES else "fp32"
    if out != dtype:
        st.caption(f"The live model runs in fp32: {dtype} is a storage format here, not a compute dtype.")
    return out


def load(source: str, cfg: ModelConfig, dtype: str) -> Source:
    """The chosen model: the sidebar's ``cfg`` in ``dtype`` as it is, or a folder, hub or lab model loaded
    (its widgets drawn here) in fp32; stops the page when there is nothing to load or it cannot be."""
    if source == "folder":
        return _from_folder()
    if source == "hub":
        return _from_hub()
    if source == live_lab.SOURCE_KEY:
        ref, run = live_lab.render_source(MAX_TOKENS)
        return Source(ref.cfg, "fp32", ref, run)
    if source == live_real.SOURCE_KEY:  # the trained MiniLM of an installed package (ui/live/real.py)
        ref = live_real.render_source(MAX_TOKENS)
        return Source(ref.cfg, "fp32", ref)
    return Source(cfg, dtype)


def _from_folder() -> Source:
    roots = settings.checkpoint_roots()
    if not roots:
        st.info(
            "Loading checkpoint folders is switched off on this server: it would let visitors read the "
            "server's files. Whoever runs the server can allow some folders (docs/deploy.md); run the app on "
            "your own machine to load your own checkpoints."
        )
        st.stop()
    st.caption("Allowed folders: " + ", ".join(f"`{escape_markdown(str(r))}`" for r in roots))
    path = st.text_input("Checkpoint folder", key="live_folder", max_chars=500,
                         help="A folder saved with save_pretrained (config.json + *.safetensors), inside "
                         "one of the allowed folders. Pickle (.bin) weights are never loaded.")
    if not path.strip():
        st.stop()
    try:
        with st.spinner("Loading the checkpoint (budget checked before any weight is read)…"):
            resolved = os.path.realpath(path.strip())
            mtime = os.stat(resolved).st_mtime_ns if os.path.isdir(resolved) else 0
            model = checkpoint_model(resolved, mtime, tuple(map(str, roots)))
    except (ValueError, OSError) as exc:  # MemoryBudgetError and BusyError are ValueErrors
        busy_or_error("load this folder", exc)
        st.stop()
    ref = ModelRef(model.config, "fp32", model.guard.seq_len, resolved, mtime, tuple(map(str, roots)))
    return Source(ref.cfg, "fp32", ref)


def _from_hub() -> Source:
    repo = st.text_input("Hub id", key="live_hub", max_chars=200, placeholder="albert/albert-base-v2")
    if not repo.strip():
        st.stop()
    try:
        with st.spinner("Downloading config.json, checking the budget, then the safetensors weights…"):
            folder = hub_folder(repo, MAX_TOKENS)
            mtime = os.stat(folder).st_mtime_ns
            model = checkpoint_model(str(folder), mtime, (str(folder),))
    except Exception as exc:  # network, hub and format errors all end here, shown, not raised
        busy_or_error(f"load {escape_markdown(repo[:100])} from the hub", exc)
        st.stop()
    ref = ModelRef(model.config, "fp32", model.guard.seq_len, str(folder), mtime, (str(folder),))
    return Source(ref.cfg, "fp32", ref)
