"""Sweeps: every metric over one or two varying config fields, for ALBERT and its BERT twin.

Fast because nothing is counted row by row: the rows are numpy columns, grouped by the categorical
fields (family, sharing, head, tie, activation), and each group goes once through the very same
formula code the scalar counters use (`param_terms`, `flop_terms`, `activation_bytes_terms`).
Rows that cannot be a model (hidden size not divisible by heads, G > L, ...) are dropped and listed in
``df.attrs["skipped"]`` with ModelConfig's own message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from albert_core.checks import check_flag
from albert_core.configuration.coerce import bert_fields, twin_fields
from albert_core.configuration.config import (
    AXIS_FIELDS,
    CHOICE_FIELDS,
    FAMILIES,
    FLAG_FIELDS,
    LIMITS,
    ModelConfig,
    family_of,
)
from albert_core.configuration.workload import DTYPE_BYTES, Workload, check_seq_len
from albert_core.counting.flops import flop_terms, training_factor
from albert_core.counting.memory import activation_bytes_terms, state_bytes, unused_params
from albert_core.counting.params import COMPONENT_INFO, param_terms

FIELDS = tuple(f.name for f in fields(ModelConfig))
SWEEPABLE = tuple(f for f in FIELDS if f != "layer_norm_eps")
CATEGORICAL = ("family", "sharing", "head", "tie_word_embeddings", "hidden_act",
               *(f for f in AXIS_FIELDS if f in CHOICE_FIELDS or f in FLAG_FIELDS),
               "block_order", "unique_ends", "lora_targets")
MODELS = ("ALBERT", "BERT")
METRICS = (
    "params", "embedding_params", "encoder_params", "head_params", "unshared_params",
    "forward_flops", "training_flops",
    "weights_bytes", "gradients_bytes", "optimizer_bytes", "activation_bytes", "training_bytes",
)  # fmt: skip
_GROUP_COLUMNS = {"embeddings": "embedding_params", "encoder": "encoder_params", "heads": "head_params"}
_INT64_SAFE = 2**62  # above this a group is recounted with exact Python ints
_MAX_MESSAGES = 50


class ConfigColumns:
    """ModelConfig-shaped view of one group of sweep rows: numeric fields are numpy arrays, the
    categorical ones scalars. The derived properties are ModelConfig's own (not re-implemented)."""

    head_dim = ModelConfig.head_dim
    executed_layers = ModelConfig.executed_layers
    executed_local_layers = ModelConfig.executed_local_layers
    shared_groups = ModelConfig.shared_groups
    _lora_positions = ModelConfig._lora_positions
    attention_lora_positions = ModelConfig.attention_lora_positions
    ffn_lora_positions = ModelConfig.ffn_lora_positions
    lora_shapes = ModelConfig.lora_shapes
    lora_terms = ModelConfig.lora_terms
    attention_shared = ModelConfig.attention_shared
    ffn_shared = ModelConfig.ffn_shared
    attention_copies = ModelConfig.attention_copies
    ffn_copies = ModelConfig.ffn_copies
    is_factorized = ModelConfig.is_factorized
    has_pooler = ModelConfig.has_pooler
    has_mlm_head = ModelConfig.has_mlm_head
    has_order_head = ModelConfig.has_order_head
    has_discriminator = ModelConfig.has_discriminator
    has_position_table = ModelConfig.has_position_table
    kv_heads = ModelConfig.kv_heads
    kv_size = ModelConfig.kv_size
    ffn_width = ModelConfig.ffn_width
    attention_norms = ModelConfig.attention_norms
    norm_size = ModelConfig.norm_size
    local_layers = ModelConfig.local_layers
    transform_act = ModelConfig.transform_act

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)


def _metrics(c: Any, batch: int, seq_len: int, dtype: str, optimizer: str) -> dict[str, Any]:
    """Every metric of one group of rows (or of one config)."""
    out = dict.fromkeys(("params", "embedding_params", "encoder_params", "head_params", "unshared_params"), 0)
    for name, n, unshared in param_terms(c):
        out["params"] = out["params"] + n
        out["unshared_params"] = out["unshared_params"] + unshared
        key = _GROUP_COLUMNS[COMPONENT_INFO[name][1]]
        out[key] = out[key] + n
    forward = sum(f for _, f in flop_terms(c, batch, seq_len, seq_len))
    out["forward_flops"] = forward
    out["training_flops"] = forward * training_factor(False)
    # Memory as estimate_memory(cfg, batch, seq_len, dtype, optimizer, training=True); int8 weights are
    # inference-only, so for int8 the inference figures are given (no gradients or optimizer state).
    training = dtype != "int8"
    act_bytes = DTYPE_BYTES["fp32"] if dtype == "int8" else DTYPE_BYTES[dtype]
    states = state_bytes(out["params"], unused_params(c), dtype, optimizer, training)
    weights, grads, opt = states["weights"], states["gradients"], states["optimizer"]
    groups = activation_bytes_terms(c, batch, seq_len, act_bytes, training, family_of(c.family).dropout)
    acts = sum(groups.values())
    out.update(
        weights_bytes=weights,
        gradients_bytes=grads,
        optimizer_bytes=opt,
        activation_bytes=acts,
        training_bytes=weights + grads + opt + acts,
    )
    return out


def _column(field: str, values: Any) -> np.ndarray:
    if field in LIMITS:
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu" or arr.ndim != 1:
            raise ValueError(f"values for {field} must be a list of whole numbers")
        return arr.astype(np.int64)
    return np.asarray(list(values), dtype=object)


def _check_axis(name: str, field: Any, values: Any) -> None:
    if field not in SWEEPABLE:
        raise ValueError(f"{name} must be one of the ModelConfig fields {', '.join(SWEEPABLE)}; got {field!r:.40}")
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
        raise ValueError(f"values for {field} must be a non-empty list")


def sweep(
    base: ModelConfig,
    x: str,
    values: Any,
    y: str | None = None,
    y_values: Any = None,
    *,
    batch: int = 1,
    seq_len: int = 128,
    dtype: str = "fp32",
    optimizer: str = "adamw",
    include_bert: bool = True,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per config of the grid ``values`` (x ``y_values``) around ``base``, plus (with
    ``include_bert``) one per ALBERT row's BERT twin (`albert_core.configuration.coerce.bert_twin`).

    Columns: ``model`` ("ALBERT" / "BERT"), ``x`` (and ``y``): the swept value the row came from (a
    BERT twin keeps its ALBERT row's value, though e.g. its embedding_size is H), every ModelConfig
    field, then params, embedding_params, encoder_params, head_params, unshared_params,
    forward_flops, training_flops (matmul convention), weights_bytes, gradients_bytes,
    optimizer_bytes, activation_bytes and training_bytes (as `estimate_memory`; int8: inference).
    ``df.attrs["skipped"]``: one message per dropped combination. ``columns``: only these columns, in this
    order (the frame of a chart that plots three of its ~60 columns costs a fraction to build).
    """
    if not isinstance(base, ModelConfig):
        raise ValueError(f"base must be a ModelConfig, got {type(base).__name__}")
    Workload(batch=batch, seq_len=seq_len, dtype=dtype, optimizer=optimizer)  # validates all four
    check_seq_len(base, seq_len)
    _check_axis("x", x, values)
    if (y is None) != (y_values is None):
        raise ValueError("y and y_values must be given together")
    if y is not None:
        _check_axis("y", y, y_values)
        if y == x:
            raise ValueError(f"y must differ from x, both are {x!r}")
    check_flag("include_bert", include_bert)
    if columns is not None and (isinstance(columns, str) or not columns):
        raise ValueError(f"columns must be a non-empty list of the frame's columns, got {columns!r}")

    # The grid, x varying slowest.
    xs = _column(x, values)
    ys = _column(y, y_values) if y is not None else None
    n = len(xs) * (len(ys) if ys is not None else 1)
    cols: dict[str, Any] = {f: getattr(base, f) for f in FIELDS}
    if ys is None:
        cols[x] = xs
    else:
        cols[x] = np.repeat(xs, len(ys))
        cols[y] = np.tile(ys, len(xs))
    swept = {"x": cols[x]} | ({"y": cols[y]} if y is not None else {})
    if (not family_of(base.family).paper and base.embedding_size == base.hidden_size
            and "embedding_size" not in (x, y)):
        cols["embedding_size"] = cols["hidden_size"]  # the coerce rule: an unfactorized E follows H outside ALBERT

    ok = _valid_rows(cols, n, seq_len)
    skipped = _messages(base, cols, ~ok, x, y, seq_len)
    rows = {f: (v[ok] if isinstance(v, np.ndarray) else v) for f, v in cols.items()}
    swept = {k: v[ok] for k, v in swept.items()}
    m = int(ok.sum())
    _family_rule(rows, m)  # BERT rows: E = H, G = 1 (as coerce and ModelConfig do); each family's fixed fields

    parts = [_columns(rows, swept, m, batch, seq_len, dtype, optimizer)]
    if include_bert:
        albert = _of(rows["family"], m, lambda r: r.paper and r.albert_ideas)  # an ALBERT's twin is its BERT
        twin = {f: (v[albert] if isinstance(v, np.ndarray) else v) for f, v in rows.items()}
        twin |= twin_fields(twin["hidden_size"])  # coerce.bert_twin, per column
        _family_rule(twin, int(albert.sum()))
        parts.append(_columns(twin, {k: v[albert] for k, v in swept.items()}, int(albert.sum()),
                              batch, seq_len, dtype, optimizer))
    keep = list(parts[0]) if columns is None else list(columns)
    if unknown := [c for c in keep if c not in parts[0]]:
        raise ValueError(f"columns: no such column(s) {unknown}; the frame has {', '.join(parts[0])}")
    data = {k: _concat([p[k] for p in parts]) for k in keep}
    # Choice fields become categoricals with every choice listed (stable colours and orders in plots).
    for f, choices in {"model": MODELS, **CHOICE_FIELDS}.items():
        if f in data:
            data[f] = pd.Categorical.from_codes(data[f], categories=list(choices))
    df = pd.DataFrame(data)
    df.attrs["skipped"] = skipped
    return df


def _is(value: Any, choice: str, n: int) -> np.ndarray:
    """Row mask of a column (or a constant) equal to ``choice``."""
    return value == choice if isinstance(value, np.ndarray) else np.full(n, value == choice)


def _of(family: Any, n: int, keep: Any) -> np.ndarray:
    """Row mask of the rows whose family (a column or a constant) has a record that ``keep`` accepts (rows of an
    unknown family: False, `_valid_rows` drops them)."""
    names = [name for name in FAMILIES if keep(family_of(name))]
    return np.isin(family, names) if isinstance(family, np.ndarray) else np.full(n, family in names)


def _valid_rows(cols: dict[str, Any], n: int, seq_len: int) -> np.ndarray:
    """The rules of ModelConfig.__post_init__, element-wise."""
    ok = np.ones(n, dtype=bool)
    for f, v in cols.items():
        if not isinstance(v, np.ndarray):
            continue
        if f in LIMITS:
            lo, hi = LIMITS[f]
            ok &= (v >= lo) & (v <= hi)
        elif f in CHOICE_FIELDS:
            ok &= np.isin(v, CHOICE_FIELDS[f])
        elif f == "tie_word_embeddings":
            ok &= np.array([type(t) is bool for t in v])
    # Rows already rejected may hold out-of-range numbers: make them harmless before the arithmetic.
    g = lambda f: np.where(ok, cols[f], 1) if isinstance(cols[f], np.ndarray) else cols[f]  # noqa: E731
    bert = _of(cols["family"], n, lambda r: not r.albert_ideas)  # no sharing, no inner groups
    ok &= ~bert | (_is(cols["sharing"], "none", n) & (g("inner_group_num") == 1))
    ok &= g("hidden_size") % g("num_heads") == 0
    ok &= bert | (g("num_hidden_groups") <= g("num_layers"))
    ok &= g("max_position_embeddings") >= seq_len
    # the sharing schemes (ModelConfig._check_sharing_scheme): none on a BERT; unique ends around >= 1 middle layer
    ok &= ~bert | ((g("repeat") == 1) & (g("lora_rank") == 0) & _is(cols["block_order"], "groups", n)
                   & ~_is(cols["unique_ends"], True, n))
    ends = _is(cols["unique_ends"], True, n)
    ok &= ~ends | ((g("num_layers") >= 3) & (g("num_hidden_groups") <= g("num_layers") - 2))
    ok &= _lora_rows(cols, g, n)
    return ok


def _lora_rows(cols: dict[str, Any], g: Any, n: int) -> np.ndarray:
    """Rows whose LoRA (if any) sits on blocks some positions share and fits each target's smaller side."""
    from albert_core.configuration.config import ATTENTION_MATRICES, SHARING_MODES

    rank, repeat = g("lora_rank"), g("repeat")
    ok = np.ones(n, dtype=bool)
    targets = cols["lora_targets"]
    for value in (np.unique(targets) if isinstance(targets, np.ndarray) else (targets,)):
        rows = _is(targets, value, n)
        for m in str(value).split("-"):
            attention = m in ATTENTION_MATRICES
            for mode in SHARING_MODES:
                shared = mode in (("all", "attention") if attention else ("all", "ffn"))
                if not shared:
                    ok &= ~(rows & _is(cols["sharing"], mode, n) & (rank > 0) & (repeat == 1))
            H, heads, kv = g("hidden_size"), g("num_heads"), g("num_kv_heads")
            kv_size = np.where(kv == 0, heads, kv) * (H // np.maximum(heads, 1))
            F = g("intermediate_size") * np.where(_is(cols["ffn_kind"], "glu", n), 2, 1)
            side = {"q": H, "o": H, "k": np.minimum(H, kv_size), "v": np.minimum(H, kv_size),
                    "in": np.minimum(H, F), "out": np.minimum(H, g("intermediate_size"))}[m]
            ok &= ~rows | (rank <= side)
    return ok


def _messages(base: ModelConfig, cols: dict[str, Any], bad: np.ndarray, x: str, y: str | None,
              seq_len: int) -> list[str]:
    """ModelConfig's own reason for the first few dropped rows (cheap: only bad rows are built)."""
    idx = np.flatnonzero(bad)
    out = []
    for i in idx[:_MAX_MESSAGES]:
        change = {f: _py(cols[f][i]) for f in (x, y) if f is not None}
        where = ", ".join(f"{k}={v!r}" for k, v in change.items())
        try:
            check_seq_len(base.replace(**change), seq_len)
            reason = "invalid combination"
        except (ValueError, TypeError) as exc:
            reason = str(exc)
        out.append(f"{where}: {reason}")
    if len(idx) > _MAX_MESSAGES:
        out.append(f"... and {len(idx) - _MAX_MESSAGES} more combinations skipped")
    return out


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _family_rule(rows: dict[str, Any], m: int) -> None:
    """`bert_fields` on the rows of a family without ALBERT's ideas (their sharing and K are already checked by
    `_valid_rows`), and on every row the fields its family fixes (ModelConfig's rule, per column)."""
    bert = _of(rows["family"], m, lambda r: not r.albert_ideas)
    if bert.any():
        for f in ("embedding_size", "num_hidden_groups"):
            rows[f] = np.where(bert, bert_fields(rows["hidden_size"])[f], rows[f]).astype(np.int64)
    family = rows["family"]
    for name in (np.unique(family) if isinstance(family, np.ndarray) else (family,)):
        for f, value in family_of(name).fixed.items():
            if isinstance(family, np.ndarray) or isinstance(rows[f], np.ndarray):
                rows[f] = np.where(_is(family, name, m), value, rows[f])
            else:
                rows[f] = value


def _columns(rows: dict[str, Any], swept: dict[str, np.ndarray], m: int, batch: int, seq_len: int,
             dtype: str, optimizer: str) -> dict[str, np.ndarray]:
    """Every output column (choice fields as category codes); the metrics are evaluated once per
    group of rows sharing the categorical fields."""
    numeric = {f: np.broadcast_to(np.asarray(rows[f], dtype=np.int64), (m,)) for f in LIMITS}
    varying = [f for f in CATEGORICAL if isinstance(rows[f], np.ndarray)]
    if varying:
        arrays = [rows[f] for f in varying]
        keys = pd.MultiIndex.from_arrays(arrays) if len(arrays) > 1 else arrays[0]
        codes, uniques = pd.factorize(keys)
        groups = [(np.flatnonzero(codes == k), u if len(varying) > 1 else (u,)) for k, u in enumerate(uniques)]
    else:
        groups = [(slice(None), ())]
    results: dict[str, np.ndarray] = {k: np.zeros(m, dtype=np.int64) for k in METRICS}
    for idx, key in groups:
        scalars = {f: rows[f] for f in CATEGORICAL} | dict(zip(varying, key, strict=True))
        values = _group_metrics(scalars, {f: a[idx] for f, a in numeric.items()}, batch, seq_len, dtype, optimizer)
        for k, v in values.items():
            if v.dtype == object and results[k].dtype != object:
                results[k] = results[k].astype(object)
            results[k][idx] = v
    data = {"model": _of(rows["family"], m, lambda r: not r.albert_ideas).astype(np.int8)}
    data |= swept
    data |= {f: numeric[f] if f in numeric else _plain(f, rows[f], m) for f in FIELDS}
    return data | results


def _plain(field: str, value: Any, m: int) -> np.ndarray:
    """A constant or swept non-numeric column; choice fields as codes into their list of choices."""
    if field in CHOICE_FIELDS:
        choices = list(CHOICE_FIELDS[field])
        if isinstance(value, np.ndarray):
            return pd.Categorical(value, categories=choices).codes
        return np.full(m, choices.index(value), dtype=np.int8)
    if isinstance(value, np.ndarray):
        return value.astype(type(value[0])) if m else value
    return np.full(m, value)


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    if any(a.dtype == object for a in arrays):
        arrays = [a.astype(object) for a in arrays]
    return np.concatenate(arrays)


def _group_metrics(scalars: dict[str, Any], numeric: dict[str, np.ndarray], batch: int, seq_len: int,
                   dtype: str, optimizer: str) -> dict[str, np.ndarray]:
    n = len(next(iter(numeric.values())))

    def run(columns: dict[str, Any], kind: Any) -> dict[str, Any]:
        c = ConfigColumns(scalars | columns)
        out = _metrics(c, batch, seq_len, dtype, optimizer).items()
        return {k: np.broadcast_to(np.asarray(v, dtype=kind), (n,)) for k, v in out}

    # Every figure grows with every size, so the figures at the column-wise maxima (exact Python
    # ints) bound the group: if they fit, int64 is exact; if not, count with Python ints.
    top = {f: int(a.max(initial=1)) for f, a in numeric.items()}
    bound = _metrics(ConfigColumns(scalars | top), batch, seq_len, dtype, optimizer)
    if max(bound.values()) < _INT64_SAFE:
        return run(numeric, np.int64)
    return run({f: a.astype(object) for f, a in numeric.items()}, object)
