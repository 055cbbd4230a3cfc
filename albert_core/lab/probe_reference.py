"""The shipped downstream probes of the reference runs: albert_core/lab/reference/probe.json.

`python -m albert_core finetune --reference` (a maintainer's command, like `make reference`) takes every run of
every experiment and the Live model page's two twins from the run cache (training what is missing, as
`train-reference` does: the same keys, so the same runs), probes each (`albert_core.lab.probe.probe_model`: the
run's encoder fine-tuned with every seed of the recipe, beside the same model from scratch, which is fine-tuned
once per distinct architecture and tokenizer and shared by the runs that have them) and writes one JSON file:
the data's counts and fingerprint, the recipe, the baselines (majority class, bag-of-words), the CPU, and per
run key its probe with the run's label, seed and validation MLM loss as retrained here (the shipped histories
were trained on another CPU: the loss shows whether the retrained run is the shipped one).

`load_probes()` -> {run key: ProbeResult}; `albert_core.lab.reference.load_runs` attaches them to the shipped runs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from albert_core.lab.probe import RECIPE, ProbeResult

if TYPE_CHECKING:
    from albert_core.lab.spec import RunSpec

PROBE_FILE = "probe.json"


def data_fingerprint() -> dict[str, Any]:
    """Counts and a content hash of the probe's split sentences."""
    from albert_core.lab import probe

    data = probe.sentences()
    h = hashlib.sha256()
    for part in (data.train_texts, data.train_labels, data.dev_texts, data.dev_labels):
        for x in part:
            h.update(str(x).encode())
            h.update(b"\x00")
        h.update(b"\x01")
    return {"name": probe.DATA_NAME, **data.counts, "sha256": h.hexdigest()[:16]}


def reference_specs() -> list[RunSpec]:
    """Every distinct run the probe file covers: the experiments' reference runs and the Live-model twins."""
    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS
    from albert_core.lab.reference import live_twins

    out: dict[str, RunSpec] = {}
    for ex in EXPERIMENTS.values():
        for spec in ex.specs(steps=REFERENCE_STEPS):
            out.setdefault(spec.key, spec)
    for spec in live_twins().values():
        out.setdefault(spec.key, spec)
    return list(out.values())


def _architecture(spec: RunSpec) -> str:
    """What the from-scratch baseline depends on: the config, the tokenizer and the initial weights' scale."""
    return json.dumps([spec.config.to_dict(), spec.tokenizer_kind, spec.vocab_size, spec.weight_std], sort_keys=True)


def _probe_group(spec_dicts: list[dict[str, Any]], root: str, max_bytes: int) -> list[dict[str, Any]]:
    """In a worker process (one torch thread): the runs of one architecture, scratch fine-tuned once."""
    import torch

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import load_model
    from albert_core.lab.reference import live_limits, live_twins
    from albert_core.lab.runs import RunCache, run_cached
    from albert_core.lab.spec import RunSpec
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    cache = RunCache(root, max_bytes)
    live = {s.key for s in live_twins().values()}
    scratch = None
    out = []
    for data in spec_dicts:
        spec = RunSpec.from_dict(data)
        extra = {"limits": live_limits()} if spec.key in live else {}
        result = run_cached(spec, cache, threads=1, **extra)
        if result.cancelled or result.checkpoint is None:
            raise ValueError(f"reference run {spec.name!r} (seed {spec.seed}) stopped: {result.message}")
        model = load_model(result.checkpoint)
        tokenizer = lab_tokenizer(spec.tokenizer_kind, spec.vocab_size)
        t0 = time.process_time()
        probed = probe.probe_model(model, spec.config, tokenizer, std=spec.weight_std, scratch=scratch)
        if scratch is None:
            scratch = probed.scratch
        out.append({"key": spec.key, "label": spec.name, "seed": spec.seed,
                    "val_mlm_loss_retrained": float(result.final["val_mlm_loss"]),
                    "cpu_seconds": time.process_time() - t0, "probe": probed.to_dict()})
    return out


def build_probes(out_dir: Path | str | None = None, *, workers: int = 2,
                 on_group: Callable[[int, int, list[dict[str, Any]]], object] | None = None) -> Path:
    """Probe every reference run (module docstring) in ``workers`` processes; write and return probe.json."""
    from albert_core.lab import probe
    from albert_core.lab.checkpoint import environment
    from albert_core.lab.reference import REFERENCE_DIR
    from albert_core.lab.runs import RunCache

    out_dir = Path(out_dir) if out_dir is not None else REFERENCE_DIR
    cache = RunCache()
    groups: dict[str, list[dict[str, Any]]] = {}
    for spec in reference_specs():
        groups.setdefault(_architecture(spec), []).append(spec.to_dict())
    ordered = sorted(groups.values(), key=len, reverse=True)  # the largest groups first: the pool ends together
    bow = probe.bag_of_words()
    runs: dict[str, Any] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_probe_group, g, str(cache.root), cache.max_bytes) for g in ordered]
        for i, future in enumerate(futures, 1):
            done = future.result()
            for row in done:
                runs[row.pop("key")] = row
            if on_group is not None:
                on_group(i, len(futures), done)
    doc = {
        "data": data_fingerprint(),
        "recipe": dataclasses.asdict(RECIPE),
        "baselines": {"majority": probe.majority_accuracy(probe.sentences()), "bag_of_words": dataclasses.asdict(bow)},
        "environment": environment(),
        "threads": 1,
        "runs": runs,
    }
    path = out_dir / PROBE_FILE
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    load_probe_file.cache_clear()
    return path


@functools.lru_cache(maxsize=2)
def load_probe_file(folder: str) -> dict[str, Any]:
    path = Path(folder) / PROBE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def load_probes(folder: Path | str | None = None) -> dict[str, ProbeResult]:
    """{run key: ProbeResult} of the shipped probes ({} without the file)."""
    from albert_core.lab.reference import REFERENCE_DIR

    doc = load_probe_file(str(folder if folder is not None else REFERENCE_DIR))
    return {key: ProbeResult.from_dict(row["probe"]) for key, row in doc.get("runs", {}).items()}


def shipped_bag_of_words(folder: Path | str | None = None) -> dict[str, Any] | None:
    """The bag-of-words baseline as the probe file stores it, when it was computed on these very sentences."""
    from albert_core.lab.reference import REFERENCE_DIR

    doc = load_probe_file(str(folder if folder is not None else REFERENCE_DIR))
    if not doc or doc.get("data", {}).get("sha256") != data_fingerprint()["sha256"]:
        return None
    return doc.get("baselines", {}).get("bag_of_words")
