"""Shipped reference runs: every experiment's finished curves and measurements, as small JSON files.

`python -m albert_core train-reference` (or `make reference`) trains every run of every experiment in
`albert_core.lab.experiments` (default steps and seeds, one torch thread per run, through the disk
cache of runs) and writes albert_core/lab/reference/<experiment>.json: each run's spec, key, final
metrics, seconds and a thinned history (every evaluation row plus every few logged steps, floats to
7 significant digits), and the experiment's evaluation (cross-accuracy, smoothness, depth dial,
summaries). One small run is shipped with its weights (`SHIPPED_CHECKPOINTS`, in
albert_core/lab/reference/checkpoints/<key>, a checkpoint folder as albert_core.lab.checkpoint writes
it) so that a fresh install has a trained model. Deterministic from the seeds: the same command on the same code
and corpus gives the same losses (times differ: they are measured).

`load_reference()` -> {experiment: [RunResult, ...]} (checkpoint None); `load_evaluation(name)` ->
the experiment's stored measurements (DataFrames).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from albert_core.lab.checkpoint import record, result_from_record
from albert_core.lab.spec import CODE_VERSION, corpus_fingerprint

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
CHECKPOINTS_DIR = REFERENCE_DIR / "checkpoints"
# The one run shipped with its weights (about 0.5 MB): the all-shared ALBERT trained with SOP, seed 0,
# so the Live model page has trained weights on a fresh install. (experiment, variant label, seed)
SHIPPED_CHECKPOINTS = (("table5", "SOP", 0),)
KEEP_EVERY = 2  # every other logged row is kept, and every evaluation row
DIGITS = 7


def _round(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{DIGITS}g}")
    return value


def _encode(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        data = value.to_dict(orient="split")
        return {"__frame__": {
            "columns": [str(c) for c in data["columns"]],
            "index": [_round(i) if not isinstance(i, str) else i for i in data["index"]],
            "index_name": value.index.name,
            "data": [[_encode(v) for v in row] for row in data["data"]],
        }}
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if value is pd.NA:
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    return _round(value)


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "__frame__" in value:
        f = value["__frame__"]
        frame = pd.DataFrame(f["data"], columns=f["columns"], index=f["index"])
        frame.index.name = f.get("index_name")
        if list(frame.index) == list(range(len(frame))):
            frame = frame.reset_index(drop=True)
        return frame.fillna(value=math.nan) if not frame.empty else frame
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    return value


def thin_history(history: pd.DataFrame) -> pd.DataFrame:
    """Every evaluation row, every KEEP_EVERY-th row and the last row."""
    keep = history["val_mlm_loss"].notna() | (history.index % KEEP_EVERY == 0)
    keep.iloc[-1] = True
    return history[keep].reset_index(drop=True)


def reference_record(result: Any) -> dict[str, Any]:
    return {**record(result), "history": _encode(thin_history(result.history))}


def build_reference(
    names: Iterable[str] | None = None,
    out_dir: Path | str = REFERENCE_DIR,
    *,
    cache: Any = None,
    on_run: Callable[[str, int, int, Any], Any] | None = None,
    **spec_kwargs: Any,
) -> dict[str, Path]:
    """Train (or take from ``cache``) every run of the named experiments (default all) and write one
    JSON per experiment into ``out_dir``. ``on_run(experiment, i, n, result)`` after each run."""
    from albert_core.lab.experiments import EXPERIMENTS
    from albert_core.lab.runs import RunCache, run_cached

    names = list(EXPERIMENTS) if names is None else list(names)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(f"experiment must be one of {', '.join(EXPERIMENTS)}; got {', '.join(unknown)}")
    cache = RunCache() if cache is None else cache
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    ship: list[Any] = []
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
            "evaluation": _encode(evaluation),
        }
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
        written[name] = path
        ship += [r for r in results if (name, r.spec.label, r.spec.seed) in SHIPPED_CHECKPOINTS]
    if ship:
        _ship_checkpoints(ship, out_dir / CHECKPOINTS_DIR.name)
    return written


def _ship_checkpoints(results: list[Any], folder: Path) -> None:
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


def load_runs(name: str, folder: Path | str = REFERENCE_DIR) -> list[Any]:
    """The shipped runs of one experiment as RunResults (thinned history, no checkpoint)."""
    from albert_core.lab.checkpoint import history_from_json

    path = _path(name, Path(folder))
    if not path.is_file():
        return []
    out = []
    for run in _read(path)["runs"]:
        frame = _decode(run["history"])
        history = history_from_json(frame.to_json(orient="split", index=False))
        out.append(result_from_record(run, history, None))
    return out


def load_reference(folder: Path | str = REFERENCE_DIR) -> dict[str, list[Any]]:
    """{experiment name: its shipped RunResults} for every experiment that has a reference file."""
    from albert_core.lab.experiments import EXPERIMENTS

    return {name: runs for name in EXPERIMENTS if (runs := load_runs(name, folder))}


def load_evaluation(name: str, folder: Path | str = REFERENCE_DIR) -> dict[str, Any]:
    """The stored evaluation of a shipped experiment (DataFrames, or a dict of them), {} if none."""
    path = _path(name, Path(folder))
    return _decode(_read(path)["evaluation"]) if path.is_file() else {}
