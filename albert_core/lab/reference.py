"""Shipped reference runs: every experiment's finished curves and measurements, as small JSON files.

`python -m albert_core train-reference` (or `make reference`) trains every run of every experiment in
`albert_core.lab.experiments` (default steps and seeds, one torch thread per run, through the disk
cache of runs) and writes albert_core/lab/reference/<experiment>.json: each run's spec, key, final
metrics, seconds and a thinned history (every evaluation row plus every few logged steps, floats to
7 significant digits), and the experiment's evaluation (cross-accuracy, smoothness, depth dial,
summaries). With ``with_live`` (the command's default) it also trains the Live model page's two twins
(`live_twins`, longer runs) and ships their weights in albert_core/lab/reference/checkpoints/<key> (a
checkpoint folder as albert_core.lab.checkpoint writes it), so a fresh install has trained models.
Deterministic from the seeds: the same command on the same code and corpus gives the same losses (times
differ: they are measured).

`load_reference()` -> {experiment: [RunResult, ...]} (checkpoint None); `load_evaluation(name)` ->
the experiment's stored measurements (DataFrames).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from albert_core.configuration.coerce import bert_twin
from albert_core.lab.checkpoint import record, result_from_record
from albert_core.lab.frames import from_plain, to_plain
from albert_core.lab.spec import CODE_VERSION, corpus_fingerprint

if TYPE_CHECKING:
    from albert_core.lab.outcome import RunResult
    from albert_core.lab.runs import RunCache
    from albert_core.lab.spec import RunSpec
    from albert_core.lab.trainer import LabLimits

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
CHECKPOINTS_DIR = REFERENCE_DIR / "checkpoints"
# The trained twins the Live model page offers on a fresh install (0.4 and 1.1 MB): the lab's base ALBERT
# (E 32, all-shared) with SOP and its BERT twin with its own recipe (WordPiece, single-piece masking, NSP),
# about 9 minutes each on an idle Intel Xeon core (517 and 523 s measured, docs/lab.md). Their limits are the
# maintainer's, not a visitor's (`live_limits`).
LIVE_STEPS = 30_000


def live_twins() -> dict[str, RunSpec]:
    """{"ALBERT": spec, "BERT": spec} of the shipped Live-model twins."""
    from albert_core.lab.spec import LAB_BASE, RUN_DEFAULTS, RunSpec

    common = {**RUN_DEFAULTS, "steps": LIVE_STEPS, "seed": 0}  # warmup and evaluations: the recipe's
    return {
        "ALBERT": RunSpec(LAB_BASE, task="sop", label="ALBERT twin (E 32, all-shared, SOP)", **common),
        "BERT": RunSpec(bert_twin(LAB_BASE), task="nsp", label="BERT twin (WordPiece, NSP)",
                        **{**common, "tokenizer": None, "max_ngram": None}),
    }


def live_limits() -> LabLimits:
    from albert_core.lab.trainer import LabLimits

    return LabLimits(max_steps=LIVE_STEPS, max_seconds=4 * 3600.0, max_flops=1e15)


KEEP_EVERY = 2  # every other logged row is kept, and every evaluation row
DIGITS = 7  # significant digits of the floats in the shipped files (lab.frames.to_plain)


def thin_history(history: pd.DataFrame) -> pd.DataFrame:
    """Every evaluation row, every KEEP_EVERY-th row and the last row."""
    keep = history["val_mlm_loss"].notna() | (history.index % KEEP_EVERY == 0)
    keep.iloc[-1] = True
    return history[keep].reset_index(drop=True)


def reference_record(result: RunResult) -> dict[str, Any]:
    return {**record(result), "history": to_plain(thin_history(result.history), DIGITS)}


def build_reference(
    names: Iterable[str] | None = None,
    out_dir: Path | str = REFERENCE_DIR,
    *,
    cache: RunCache | None = None,
    on_run: Callable[[str, int, int, RunResult | RunSpec], object] | None = None,
    workers: int = 1,
    with_live: bool = False,
    **spec_kwargs: Any,
) -> dict[str, Path]:
    """Train (or take from ``cache``) every run of the named experiments (default all) and write one
    JSON per experiment into ``out_dir``. ``on_run(experiment, i, n, result)`` after each run.
    ``workers`` > 1 first trains the distinct runs in that many processes (one torch thread each)
    into the cache; a run already cached is not trained again, so an interrupted build resumes.
    ``with_live`` also trains (or takes from the cache) the Live-model twins (`live_twins`) and ships their
    checkpoints into ``out_dir``/checkpoints."""
    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS
    from albert_core.lab.runs import RunCache, run_cached

    spec_kwargs.setdefault("steps", REFERENCE_STEPS)
    names = list(EXPERIMENTS) if names is None else list(names)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(f"experiment must be one of {', '.join(EXPERIMENTS)}; got {', '.join(unknown)}")
    cache = RunCache() if cache is None else cache
    if workers > 1:
        pretrain(names, cache, workers, on_run=on_run, with_live=with_live, **spec_kwargs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name in names:
        ex = EXPERIMENTS[name]
        specs = ex.specs(**spec_kwargs)
        results = []
        for i, spec in enumerate(specs):
            result = run_cached(spec, cache, threads=1)
            if result.cancelled:
                raise ValueError(f"reference run {spec.name!r} (seed {spec.seed}) stopped early: {result.message}")
            results.append(result)
            if on_run is not None:
                on_run(name, i + 1, len(specs), result)
        evaluation = ex.evaluate(results)
        doc = {
            "experiment": name,
            "title": ex.title,
            "code_version": CODE_VERSION,
            "corpus": corpus_fingerprint(),
            "threads": 1,
            "runs": [reference_record(r) for r in results],
            "evaluation": to_plain(evaluation, DIGITS),
        }
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
        written[name] = path
    if with_live:
        ship: list[RunResult] = []
        for spec in live_twins().values():
            result = run_cached(spec, cache, threads=1, limits=live_limits())
            if result.cancelled:
                raise ValueError(f"the Live-model twin {spec.name!r} stopped early: {result.message}")
            ship.append(result)
            if on_run is not None:
                on_run("live", len(ship), 2, result)
        _ship_checkpoints(ship, out_dir / CHECKPOINTS_DIR.name)
    return written


def _train_one(spec_dict: dict[str, Any], root: str, max_bytes: int, live: bool = False) -> str:
    """In a worker process: train one run into the cache; its key."""
    import torch

    from albert_core.lab.runs import RunCache, run_cached
    from albert_core.lab.spec import RunSpec

    torch.set_num_threads(1)
    extra = {"limits": live_limits()} if live else {}
    result = run_cached(RunSpec.from_dict(spec_dict), RunCache(root, max_bytes), threads=1, **extra)
    if result.cancelled:
        raise ValueError(f"reference run {result.spec.name!r} (seed {result.spec.seed}) stopped: {result.message}")
    return result.spec.key


def pretrain(names: Iterable[str], cache: RunCache, workers: int,
             on_run: Callable[[str, int, int, RunResult | RunSpec], object] | None = None, with_live: bool = False,
             **spec_kwargs: Any) -> None:
    """Train the distinct runs of the named experiments that are not cached yet, ``workers`` at a time,
    each in its own process with one torch thread (the longest first, so the pool ends together)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    from albert_core.lab.experiments import EXPERIMENTS

    todo: dict[str, RunSpec] = {}
    live = {s.key for s in live_twins().values()} if with_live else set()
    wanted = [s for name in names for s in EXPERIMENTS[name].specs(**spec_kwargs)]
    wanted += list(live_twins().values()) if with_live else []
    for spec in wanted:
        if spec.key not in todo and cache.get(spec.key) is None:
            todo[spec.key] = spec
    if not todo:
        return
    order = sorted(todo.values(), key=lambda s: -s.steps * s.batch_size * s.config.hidden_size)
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_train_one, s.to_dict(), str(cache.root), cache.max_bytes, s.key in live): s
                   for s in order}
        for i, done in enumerate(as_completed(futures), 1):
            key = done.result()
            if on_run is not None:
                on_run("pretrain", i, len(futures), cache.get(key) or futures[done])


def _ship_checkpoints(results: list[RunResult], folder: Path) -> None:
    """Copy the runs' cached folders into ``folder``/<key>, replacing the checkpoints shipped before."""
    import shutil

    if folder.is_dir():
        for old in folder.iterdir():
            if old.is_dir() and (old / "run.json").is_file():
                shutil.rmtree(old)
    for result in results:
        if result.checkpoint is None:
            raise ValueError(f"reference run {result.spec.name!r} has no checkpoint to ship")
        shutil.copytree(result.checkpoint, folder / result.spec.key)


@functools.lru_cache(maxsize=8)
def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _path(name: str, folder: Path) -> Path:
    from albert_core.lab.experiments import EXPERIMENTS

    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {', '.join(EXPERIMENTS)}; got {str(name)[:40]!r}")
    return folder / f"{name}.json"


def load_runs(name: str, folder: Path | str = REFERENCE_DIR) -> list[RunResult]:
    """The shipped runs of one experiment as RunResults (thinned history, no checkpoint; the shipped downstream
    probe, `probe_reference`, when it has one)."""
    from albert_core.lab.checkpoint import history_from_frame

    path = _path(name, Path(folder))
    if not path.is_file():
        return []
    probes = load_probes(folder)
    out = []
    for run in _read(path)["runs"]:
        history = history_from_frame(from_plain(run["history"]))
        result = result_from_record(run, history, None)
        result.probe = probes.get(result.spec.key)
        out.append(result)
    return out


def load_reference(folder: Path | str = REFERENCE_DIR) -> dict[str, list[RunResult]]:
    """{experiment name: its shipped RunResults} for every experiment that has a reference file."""
    from albert_core.lab.experiments import EXPERIMENTS

    return {name: runs for name in EXPERIMENTS if (runs := load_runs(name, folder))}


def reference_cpus(folder: Path | str = REFERENCE_DIR) -> list[str]:
    """The CPUs the shipped runs were measured on, as each run's record names it (sorted, each once)."""
    from albert_core.lab.experiments import EXPERIMENTS

    paths = [p for name in EXPERIMENTS if (p := _path(name, Path(folder))).is_file()]
    return sorted({run.get("environment", {}).get("cpu") or "an unrecorded CPU"
                   for path in paths for run in _read(path)["runs"]})


def load_evaluation(name: str, folder: Path | str = REFERENCE_DIR) -> dict[str, Any]:
    """The stored evaluation of a shipped experiment (DataFrames, or a dict of them), {} if none."""
    path = _path(name, Path(folder))
    evaluation = from_plain(_read(path)["evaluation"]) if path.is_file() else {}
    if name == "depth" and isinstance(evaluation, dict):
        downstream = depth_downstream(folder)
        if downstream is not None:
            evaluation["downstream"] = downstream  # the depth dial fine-tuned (probe.json)
    return evaluation


# ----------------------------------------------------------------------------- the shipped downstream probes
PROBE_FILE = "probe.json"  # written by `albert_core.lab.probe_reference.build_probes` (finetune --reference)


@functools.lru_cache(maxsize=2)
def load_probe_file(folder: str) -> dict[str, Any]:
    path = Path(folder) / PROBE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def load_probes(folder: Path | str | None = None) -> dict[str, Any]:
    """{run key: ProbeResult} of the shipped probes ({} without the file)."""
    from albert_core.lab.probe import ProbeResult

    doc = load_probe_file(str(folder if folder is not None else REFERENCE_DIR))
    return {key: ProbeResult.from_dict(row["probe"]) for key, row in doc.get("runs", {}).items()}


def depth_downstream(folder: Path | str | None = None) -> pd.DataFrame | None:
    """The depth dial's downstream rows (depth, seed, pretrained mean, scratch mean, and ``models``: the
    fine-tuned models' accuracies, the units of `albert_core.lab.separation`; the trained depth from the runs'
    own probes) as a DataFrame, None without them."""
    from albert_core.lab.experiments import EXPERIMENTS, REFERENCE_STEPS

    doc = load_probe_file(str(folder if folder is not None else REFERENCE_DIR))
    if not doc.get("depth"):
        return None
    rows = [{"depth": r["depth"], "seed": r["seed"], "downstream": sum(r["pretrained"]) / len(r["pretrained"]),
             "scratch": sum(r["scratch"]) / len(r["scratch"]), "models": tuple(r["pretrained"])} for r in doc["depth"]]
    for spec in EXPERIMENTS["depth"].specs(steps=REFERENCE_STEPS):
        own = doc.get("runs", {}).get(spec.key)
        if own is not None:
            p = own["probe"]
            rows.append({"depth": spec.config.num_layers, "seed": spec.seed,
                         "downstream": sum(p["pretrained"]) / len(p["pretrained"]),
                         "scratch": sum(p["scratch"]) / len(p["scratch"]), "models": tuple(p["pretrained"])})
    return pd.DataFrame(rows).sort_values(["depth", "seed"]).reset_index(drop=True)
