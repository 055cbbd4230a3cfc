"""A finished run on disk: a transformers checkpoint folder plus the run's record.

    config.json + model.safetensors   transformers' layout (`albert_core.live.interop.to_transformers` then
                                      `save_pretrained`): AlbertForPreTraining / BertForPreTraining load it
    tokenizer.json                    the run's `tokenizers.Tokenizer`
    run.json                          spec.to_dict(), key, final metrics, seconds, code version
    history.json                      the history DataFrame (pandas "split" orient)
    probe.csv                         a probed run's downstream probe, one row per fine-tuning seed and start
                                      (run.json's "probe" holds the same with its baselines and verdict)

Partial sharing (attention / ffn only) has no transformers layout: such a run keeps its weights as
`lab_model.safetensors` under this model's own parameter names (no config.json), loadable with
`load_model`. Only safetensors are ever written or read (no pickle).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from albert_core.lab.frames import frame_from_data, frame_to_data, to_plain
from albert_core.lab.outcome import HISTORY_COLUMNS, RunResult
from albert_core.lab.spec import CODE_VERSION, RunSpec

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from albert_core.configuration.config import ModelConfig
    from albert_core.lab.outcome import RunResult
    from albert_core.live.model import EncoderModel

RUN_FILE = "run.json"
HISTORY_FILE = "history.json"
CSV_FILE = "history.csv"  # the same history for spreadsheets and pandas
EVENTS_PREFIX = "events.out.tfevents."  # TensorBoard's event files (TensorBoard, W&B, Aim and others read them)
# history column -> TensorBoard tag
TENSORBOARD_TAGS = {
    "val_mlm_loss": "loss/validation_mlm", "train_mlm_loss": "loss/train_mlm", "train_order_loss": "loss/train_order",
    "val_mlm_acc": "accuracy/validation_mlm", "val_order_acc": "accuracy/validation_order",
    "train_mlm_acc": "accuracy/train_mlm", "val_order_ones": "accuracy/validation_order_share_of_ones",
    "lr": "optimizer/learning_rate", "tokens_per_s": "speed/tokens_per_s",
}
PROBE_FILE = "probe.csv"
PROBE_TAGS = {"probe_acc": "probe/pretrained_dev_accuracy", "probe_scratch_acc": "probe/scratch_dev_accuracy",
              "probe_bag_of_words_acc": "probe/bag_of_words_dev_accuracy",
              "probe_majority_acc": "probe/majority_dev_accuracy"}
TOKENIZER_FILE = "tokenizer.json"
LAB_WEIGHTS = "lab_model.safetensors"
MAX_RECORD_BYTES = 20_000_000  # run.json / history.json larger than this are not a lab record


def exportable(spec: RunSpec) -> bool:
    """Whether transformers can hold this model (sharing none or all)."""
    return spec.config.sharing in ("none", "all")


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def history_to_json(history: pd.DataFrame) -> str:
    return json.dumps(frame_to_data(history, index=False))


def history_from_json(text: str) -> pd.DataFrame:
    return history_from_frame(frame_from_data(json.loads(text)))


def history_from_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's history with exactly `HISTORY_COLUMNS` (steps and tokens whole numbers)."""
    if "val_order_ones" not in frame.columns:  # recorded before the share of "1" answers was logged
        frame["val_order_ones"] = math.nan
    missing = [c for c in HISTORY_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"history has no column(s) {', '.join(missing)}")
    frame = frame[list(HISTORY_COLUMNS)].astype(float)
    frame["step"] = frame["step"].astype(int)
    frame["tokens"] = frame["tokens"].astype(int)
    return frame


def environment() -> dict[str, Any]:
    """Where a run was trained: library versions, CPU and torch threads (what its speed depends on)."""
    import platform

    import tokenizers
    import torch
    import transformers

    from albert_core.hardware.profiles import cpu_name

    return {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "cpu": cpu_name(), "torch_threads": torch.get_num_threads(),
            "platform": platform.platform()}


def record(result: RunResult) -> dict[str, Any]:
    """The JSON-safe run.json dict of a RunResult."""
    probe = {} if result.probe is None else {"probe": result.probe.to_dict()}
    return to_plain({**probe,
        "key": result.spec.key,
        "code_version": CODE_VERSION,
        "spec": result.spec.to_dict(),
        "seed": result.spec.seed,
        "final": dict(result.final),
        "seconds": float(result.seconds),
        "cancelled": bool(result.cancelled),
        "message": result.message,
        "environment": environment(),
    })


def write_tensorboard(result: RunResult, folder: Path) -> Path:
    """The run's history as TensorBoard scalars in ``folder`` (one event file; steps as TensorBoard's
    steps, wall times from the run's own clock), with the baselines as flat lines over the run's steps."""
    import time

    from tensorboardX import SummaryWriter

    history = result.history
    start = time.time() - float(result.seconds)
    writer = SummaryWriter(logdir=str(folder), flush_secs=3600)
    try:
        for row in history.to_dict("records"):
            when = start + float(row["elapsed_s"])
            for column, tag in TENSORBOARD_TAGS.items():
                value = row.get(column)
                if value is not None and math.isfinite(value):
                    writer.add_scalar(tag, float(value), global_step=int(row["step"]), walltime=when)
        base = result.baselines
        if base is not None and len(history):
            ends = (history.iloc[0], history.iloc[-1])
            levels = {"baseline/frequency_only_loss": base.frequency_loss,
                      "baseline/neighbour_loss": base.neighbour_loss,
                      "baseline/always_most_frequent_accuracy": base.frequency_acc,
                      "baseline/sentence_majority_accuracy": base.order_majority}
            for tag, value in levels.items():
                if value is not None and math.isfinite(value):
                    for row in ends:
                        writer.add_scalar(tag, float(value), global_step=int(row["step"]),
                                          walltime=start + float(row["elapsed_s"]))
        if result.probe is not None and len(history):  # the probe's accuracies at the run's last step
            for column, tag in PROBE_TAGS.items():
                writer.add_scalar(tag, float(result.final[column]), global_step=int(history["step"].iloc[-1]),
                                  walltime=start + float(result.seconds))
    finally:
        writer.close()
    return folder


def write_exports(result: RunResult, folder: Path) -> None:
    """What opens a run outside the app: run.json (spec, seed, code version, versions, CPU, threads), the
    history as JSON and CSV, and TensorBoard event files."""
    folder = Path(folder)
    (folder / HISTORY_FILE).write_text(history_to_json(result.history), encoding="utf-8")
    result.history.to_csv(folder / CSV_FILE, index=False)
    for old in folder.glob(EVENTS_PREFIX + "*"):
        old.unlink()
    write_tensorboard(result, folder)
    if result.probe is not None:
        result.probe.frame().to_csv(folder / PROBE_FILE, index=False)
    (folder / RUN_FILE).write_text(json.dumps(record(result), indent=1), encoding="utf-8")


EXPORTED_FILES = (RUN_FILE, HISTORY_FILE, CSV_FILE, PROBE_FILE, TOKENIZER_FILE, "config.json")


def export_zip(result: RunResult) -> bytes:
    """A zip of the files that open a finished run outside the app (run.json, the history as JSON and CSV,
    TensorBoard event files, the tokenizer and transformers' config; not the weights). A run saved before
    the CSV and event files were written gets them made from its history now."""
    import tempfile
    import zipfile

    folder = Path(result.checkpoint)
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        files = {name: folder / name for name in EXPORTED_FILES if (folder / name).is_file()}
        events = sorted(folder.glob(EVENTS_PREFIX + "*"))
        if CSV_FILE not in files or not events:
            made = Path(tmp)
            result.history.to_csv(made / CSV_FILE, index=False)
            write_tensorboard(result, made)
            files[CSV_FILE] = made / CSV_FILE
            events = sorted(made.glob(EVENTS_PREFIX + "*"))
        for name, path in files.items():
            zf.write(path, f"{result.spec.key}/{name}")
        for path in events:
            zf.write(path, f"{result.spec.key}/{path.name}")
    return buffer.getvalue()


def save_run(result: RunResult, model: EncoderModel, tokenizer: Tokenizer, folder: Path) -> Path:
    """Write ``result`` (a RunResult), its trained ``model`` and ``tokenizer`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if exportable(result.spec):
        from transformers.utils import logging as hf_logging

        from albert_core.live.interop import to_transformers

        hf_logging.disable_progress_bar()  # no "Writing model shards" bars from a background thread
        to_transformers(model).save_pretrained(folder)
    else:
        from safetensors.torch import save_file

        save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}, folder / LAB_WEIGHTS)
    if tokenizer is not None:
        tokenizer.save(str(folder / TOKENIZER_FILE))
    write_exports(result, folder)
    return folder


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"{path.parent} is not a lab run (no {path.name})")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError(f"{path} is too large to be a lab record")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None


def result_from_record(data: dict[str, Any], history: pd.DataFrame, checkpoint: Path | None) -> RunResult:
    final = {k: (_float(v) if k not in ("tokens", "steps") else int(v)) for k, v in data["final"].items()}
    probe = None
    if isinstance(data.get("probe"), dict):
        from albert_core.lab.probe import ProbeResult

        probe = ProbeResult.from_dict(data["probe"])
    return RunResult(
        spec=RunSpec.from_dict(data["spec"]),
        history=history,
        final=final,
        checkpoint=checkpoint,
        seconds=float(data["seconds"]),
        cancelled=bool(data.get("cancelled", False)),
        message=str(data.get("message", "")),
        probe=probe,
    )


def load_run(folder: Path | str) -> RunResult:
    """The RunResult saved in ``folder`` (model None; checkpoint = the folder)."""
    folder = Path(folder)
    data = _read_json(folder / RUN_FILE)
    if not isinstance(data, dict) or "spec" not in data or "final" not in data:
        raise ValueError(f"{folder / RUN_FILE} is not a lab run record")
    history_path = folder / HISTORY_FILE
    if not history_path.is_file() or history_path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError(f"{folder} has no readable {HISTORY_FILE}")
    history = history_from_json(history_path.read_text(encoding="utf-8"))
    return result_from_record(data, history, folder)


def load_model(folder: Path | str, config: ModelConfig | None = None, *, batch: int = 1,
               seq_len: int | None = None) -> EncoderModel:
    """The trained EncoderModel of the run in ``folder`` (eval mode), built with ``config`` if given
    (another depth of the same shared weights: any config whose parameters have the same names and
    shapes), else the run's own config; memory-budget checked by `build_model` at (batch, seq_len)."""
    from albert_core.live.model import build_model

    folder = Path(folder)
    spec = RunSpec.from_dict(_read_json(folder / RUN_FILE)["spec"])
    cfg = spec.config if config is None else config
    if (folder / LAB_WEIGHTS).is_file():
        from safetensors.torch import load_file

        from albert_core.live.interop import check_weights_file

        check_weights_file(folder / LAB_WEIGHTS)
        state = load_file(folder / LAB_WEIGHTS)
    else:
        from transformers.utils import logging as hf_logging

        from albert_core.live.interop import load_pretrained_folder

        hf_logging.disable_progress_bar()
        # an ALBERT with sharing "none" comes back as G = L groups: the same parameter names
        state = load_pretrained_folder(folder, allowed_roots=None).state_dict()
    model = build_model(cfg, batch=batch, seq_len=seq_len or spec.seq_len)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"the weights in {folder} do not fit {cfg.label}: {str(exc)[:300]}") from None
    return model.eval()
