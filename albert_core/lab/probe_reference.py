"""The shipped downstream probes of the reference runs: albert_core/lab/reference/probe.json.

`python -m albert_core finetune --reference` (a maintainer's command, like `make reference`) takes every run of
every experiment and the Live model page's two twins from the run cache (training what is missing, as
`train-reference` does: the same keys, so the same runs), probes each (`albert_core.lab.probe.probe_model`: the
run's encoder fine-tuned with every seed of the recipe, beside the same model from scratch, which is fine-tuned
once per distinct architecture and tokenizer and shared by the runs that have them) and writes one JSON file:
the data's counts and fingerprint, the recipe, the baselines (majority class, bag-of-words), the CPU, and per
run key its probe with the run's label, seed and validation MLM loss as retrained here (the shipped histories
were trained on another CPU: the loss shows whether the retrained run is the shipped one). Each fine-tuned
model's answers on the dev sentences are kept beside its accuracy (`pretrained_correct`, `scratch_correct`:
what a test over sentences as well as seeds needs; files built before issue 45 have accuracies only).

`albert_core.lab.reference` reads the file (`load_probes`, `depth_downstream`) and attaches the probes to the
shipped runs (`load_runs`).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from albert_core.lab.probe import RECIPE, ProbeResult, data_fingerprint
from albert_core.lab.reference import PROBE_FILE, load_probe_file

if TYPE_CHECKING:
    from albert_core.lab.spec import RunSpec



def reference_specs(names: list[str] | None = None) -> list[RunSpec]:
    """Every distinct run the probe file covers: the named experiments' reference runs and, when no names are
    given (every experiment), the Live-model twins too."""
    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS
    from albert_core.lab.reference import live_twins

    out: dict[str, RunSpec] = {}
    for name in names if names is not None else list(EXPERIMENTS):
        ex = EXPERIMENTS[name]
        for spec in ex.specs(steps=REFERENCE_STEPS):
            out.setdefault(spec.key, spec)
    for spec in live_twins().values() if names is None else ():
        out.setdefault(spec.key, spec)
    return list(out.values())


def _architecture(spec: RunSpec) -> str:
    """What the from-scratch baseline depends on: the config, the tokenizer and the initial weights' scale."""
    return json.dumps([spec.config.to_dict(), spec.tokenizer_kind, spec.vocab_size, spec.weight_std], sort_keys=True)


def _trained(spec: RunSpec, cache: Any) -> tuple[Any, Path]:
    """(RunResult, folder) of a reference run: a Live-model twin's shipped checkpoint, else the run cache's
    (trained now when missing, as train-reference would)."""
    from albert_core.lab.checkpoint import load_run
    from albert_core.lab.reference import CHECKPOINTS_DIR
    from albert_core.lab.runs import run_cached

    shipped = CHECKPOINTS_DIR / spec.key
    if (shipped / "run.json").is_file():
        return load_run(shipped), shipped
    result = run_cached(spec, cache, threads=1)
    if result.cancelled or result.checkpoint is None:
        raise ValueError(f"reference run {spec.name!r} (seed {spec.seed}) stopped: {result.message}")
    return result, Path(result.checkpoint)


def _probe_run(spec_dict: dict[str, Any], root: str, max_bytes: int, recipe: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """In a worker process (one torch thread): one reference run, trained if missing, its encoder fine-tuned with
    every seed of ``recipe`` (default the probe's `RECIPE`)."""
    import torch

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import load_model
    from albert_core.lab.runs import RunCache
    from albert_core.lab.spec import RunSpec
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    spec = RunSpec.from_dict(spec_dict)
    result, folder = _trained(spec, RunCache(root, max_bytes))
    tokenizer = lab_tokenizer(spec.tokenizer_kind, spec.vocab_size)
    t0 = time.process_time()
    probed = probe.probe_model(load_model(folder), spec.config, tokenizer, std=spec.weight_std, scratch=(),
                               recipe=_recipe(recipe))
    return {"key": spec.key, "label": spec.name, "seed": spec.seed,
            "val_mlm_loss_retrained": float(result.final["val_mlm_loss"]),
            "cpu_seconds": time.process_time() - t0, "pretrained": list(probed.pretrained),
            "pretrained_correct": list(probed.pretrained_correct)}


def _recipe(recipe: dict[str, Any] | None) -> Any:
    from albert_core.lab import probe

    if recipe is None:
        return probe.RECIPE
    return probe.Recipe(**{**recipe, "seeds": tuple(recipe["seeds"])})


def _probe_scratch(spec_dict: dict[str, Any], recipe: dict[str, Any] | None = None) -> dict[str, list[Any]]:
    """In a worker process: the from-scratch baseline of a run's architecture and tokenizer, per seed of
    ``recipe`` (default `RECIPE`): its dev accuracies and answers ({"accuracy": [...], "correct": [...]})."""
    import torch

    from albert_core.lab import probe
    from albert_core.lab.spec import RunSpec
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    spec = RunSpec.from_dict(spec_dict)
    recipe = _recipe(recipe)
    seq_len = min(recipe.max_len, spec.config.max_position_embeddings)
    out: dict[str, list[Any]] = {"accuracy": [], "correct": []}
    for seed in recipe.seeds:
        encoder = probe.scratch_encoder(spec.config, std=spec.weight_std, seed=seed, batch=recipe.batch_size,
                                        seq_len=seq_len)
        score = probe.finetune(encoder, "scratch", seed, lab_tokenizer(spec.tokenizer_kind, spec.vocab_size),
                               std=spec.weight_std, recipe=recipe)
        out["accuracy"].append(score.dev_accuracy)
        out["correct"].append(score.dev_correct)
    return out


def build_probes(names: list[str] | None = None, out_dir: Path | str | None = None, *, workers: int = 2,
                 on_run: Callable[[int, int, dict[str, Any]], object] | None = None,
                 seeds: Sequence[int] | None = None) -> Path:
    """Probe every reference run of the named experiments and the Live-model twins (module docstring) in
    ``workers`` processes, one task per run and one per architecture's from-scratch baseline, with the
    fine-tuning ``seeds`` (default the recipe's); write and return probe.json. Without names every run is probed
    and the file written anew; with names only their runs are probed and the file's other runs are kept as they
    were (each run's probe records its own recipe and seeds)."""
    from concurrent.futures import as_completed

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import environment
    from albert_core.lab.reference import REFERENCE_DIR
    from albert_core.lab.runs import RunCache

    out_dir = Path(out_dir) if out_dir is not None else REFERENCE_DIR
    path = out_dir / PROBE_FILE
    kept: dict[str, Any] = {}
    if names is not None and path.is_file():
        kept = json.loads(path.read_text(encoding="utf-8"))
    recipe = RECIPE if seeds is None else dataclasses.replace(RECIPE, seeds=tuple(int(x) for x in seeds))
    if not recipe.seeds:
        raise ValueError("seeds must hold at least one fine-tuning seed")
    plain = dataclasses.asdict(recipe)
    cache = RunCache()
    specs = reference_specs(names)
    archs: dict[str, RunSpec] = {}
    for spec in specs:
        archs.setdefault(_architecture(spec), spec)
    bow = probe.bag_of_words()
    data = probe.sentences()
    rows: dict[str, dict[str, Any]] = {}
    scratch: dict[str, dict[str, list[Any]]] = {}
    # the runs that must be trained first (the longest tasks) are submitted first, so the pool ends together
    order = sorted(specs, key=lambda s: RunCache().get(s.key) is not None)
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_probe_run, s.to_dict(), str(cache.root), cache.max_bytes, plain): ("run", s)
                   for s in order}
        futures.update({pool.submit(_probe_scratch, s.to_dict(), plain): ("scratch", a) for a, s in archs.items()})
        for i, future in enumerate(as_completed(futures), 1):
            kind, what = futures[future]
            if kind == "scratch":
                scratch[what] = future.result()
                continue
            row = future.result()
            rows[row.pop("key")] = {**row, "architecture": _architecture(what)}
            if on_run is not None:
                on_run(i, len(futures), row)
    runs = dict(kept.get("runs", {}))
    for key, row in rows.items():
        base = scratch[row.pop("architecture")]
        result = ProbeResult(tuple(row.pop("pretrained")), tuple(base["accuracy"]), tuple(recipe.seeds),
                             probe.majority_accuracy(data), bow.accuracy, len(data.dev_texts), recipe=plain,
                             pretrained_correct=tuple(row.pop("pretrained_correct")),
                             scratch_correct=tuple(base["correct"]))
        runs[key] = {**row, "probe": result.to_dict()}
    doc = {**kept,
        "data": data_fingerprint(),
        "recipe": dataclasses.asdict(RECIPE),
        "baselines": {"majority": probe.majority_accuracy(data), "bag_of_words": dataclasses.asdict(bow)},
        "environment": environment(),
        "threads": 1,
        "runs": runs,
    }
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    load_probe_file.cache_clear()
    return path


# ----------------------------------------------------------------------------- the depth dial downstream
def _probe_depth(spec_dict: dict[str, Any], depth: int, root: str, max_bytes: int) -> dict[str, Any]:
    """In a worker process: a depth-dial run's shared weights unrolled to ``depth`` layers, fine-tuned."""
    import torch

    from albert_core.lab import probe
    from albert_core.lab.checkpoint import load_model
    from albert_core.lab.runs import RunCache
    from albert_core.lab.spec import RunSpec
    from albert_core.text.tokenizers import lab_tokenizer

    torch.set_num_threads(1)
    spec = RunSpec.from_dict(spec_dict)
    _, folder = _trained(spec, RunCache(root, max_bytes))
    config = spec.config.replace(num_layers=depth)
    model = load_model(folder, config)
    tokenizer = lab_tokenizer(spec.tokenizer_kind, spec.vocab_size)
    probed = probe.probe_model(model, config, tokenizer, std=spec.weight_std, scratch=())
    return {"key": spec.key, "seed": spec.seed, "depth": depth, "pretrained": list(probed.pretrained),
            "pretrained_correct": list(probed.pretrained_correct)}


def _probe_depth_scratch(spec_dict: dict[str, Any], depth: int) -> dict[str, list[Any]]:
    from albert_core.lab.spec import RunSpec

    spec = RunSpec.from_dict(spec_dict)
    return _probe_scratch(spec.replace(config=spec.config.replace(num_layers=depth)).to_dict())


def build_depth_probes(*, workers: int = 2) -> Path:
    """The depth dial on the downstream axis: each depth run's trained weights at L/2 and 2L layers fine-tuned,
    beside the same depth from scratch (the trained depth L is the run's own probe); added to probe.json as
    "depth" rows."""
    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS
    from albert_core.lab.reference import REFERENCE_DIR
    from albert_core.lab.runs import RunCache

    path = REFERENCE_DIR / PROBE_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    specs = EXPERIMENTS["depth"].specs(steps=REFERENCE_STEPS)
    layers = specs[0].config.num_layers
    depths = [d for d in (max(1, layers // 2), 2 * layers) if d != layers]
    cache = RunCache()
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        runs = [pool.submit(_probe_depth, s.to_dict(), d, str(cache.root), cache.max_bytes)
                for s in specs for d in depths]
        scratch = {d: pool.submit(_probe_depth_scratch, specs[0].to_dict(), d) for d in depths}
        rows = [f.result() for f in runs]
        scratch_acc = {d: f.result() for d, f in scratch.items()}
    doc["depth"] = [{**row, "scratch": scratch_acc[row["depth"]]["accuracy"],
                     "scratch_correct": scratch_acc[row["depth"]]["correct"]} for row in rows]
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    load_probe_file.cache_clear()
    return path
