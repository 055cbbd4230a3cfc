"""An encoder beside its ALBERTized twin: the same model with ALBERT's factorized embedding and/or cross-layer
sharing (`albert_core.configuration.coerce.albertize`), compared on every cost the explorer counts: parameters
(exact), FLOPs (exact), training memory (exact but for the activations, an estimate), the largest batch per
device size (from that estimate) and the step time on the hardware profiles (an estimate)."""

from __future__ import annotations

from dataclasses import dataclass

from albert_core.configuration.config import SHARING_SCHEME, ModelConfig
from albert_core.configuration.workload import Workload
from albert_core.counting.flops import count_flops, differences_words, flop_differences, outside_layers
from albert_core.counting.memory import DEVICE_MEMORY_GB, estimate_memory, largest_batches
from albert_core.counting.params import count_params
from albert_core.format import change_words, fmt_flops, fmt_params, fmt_pct
from albert_core.hardware.time_model import estimate_time

TIME_PROFILES = ("a100", "h100")  # datasheet profiles the comparison times the step on


@dataclass(frozen=True)
class PairRow:
    """One cost of the original and of the twin; ``kind``: "exact" or "estimate"."""

    measure: str
    unit: str  # "params", "FLOPs", "bytes", "sequences", "seconds"
    original: float
    twin: float
    kind: str

    @property
    def ratio(self) -> float:
        """twin / original (nan when the original is 0)."""
        return self.twin / self.original if self.original else float("nan")


@dataclass(frozen=True)
class AlbertizedPair:
    original: ModelConfig
    twin: ModelConfig
    workload: Workload
    rows: tuple[PairRow, ...]
    flop_differences: tuple[tuple[str, int], ...] = ()  # twin minus original per component (`flop_differences`)

    def row(self, measure: str) -> PairRow:
        return next(r for r in self.rows if r.measure == measure)

    def sentences(self) -> list[str]:
        """What the twin changes, in the config's own numbers; sharing saves parameters, never compute. Each
        comparing word follows the figures beside it (`albert_core.format.change_words`), and the part of the
        model that makes a FLOP difference is named from the per-component counts."""
        p, f = self.row("parameters"), self.row("forward FLOPs per sequence")
        diffs = list(self.flop_differences)
        out = [f"Parameters: {fmt_params(p.original)} -> {fmt_params(p.twin)} ({fmt_pct(p.ratio - 1, signed=True)})."]
        where = ("" if not diffs else
                 f"; what differs is outside the layers: {differences_words(diffs)}" if outside_layers(diffs) else
                 f"; what differs: {differences_words(diffs)}")
        if self.twin.sharing != "none":
            out.append(f"Sharing saves parameters, never compute: the twin still runs all {self.twin.executed_layers} "
                       f"layers, so its forward pass costs {fmt_flops(f.twin)} per sequence against "
                       f"{fmt_flops(f.original)} ({change_words(f.twin, f.original)}{where}).")
        elif diffs:
            out.append(f"Forward FLOPs per sequence: {fmt_flops(f.original)} -> {fmt_flops(f.twin)} "
                       f"({change_words(f.twin, f.original)}{where}).")
        return out


def compare_albertized(original: ModelConfig, twin: ModelConfig, workload: Workload,
                       profiles: tuple[str, ...] = TIME_PROFILES) -> AlbertizedPair:
    """Every cost of ``original`` and ``twin`` at ``workload`` (training memory at its dtype, precision and
    checkpointing; FLOPs per sequence and per training step). An inference-only workload (int8 weights) compares
    what inference costs: the training rows are left out and the inference working set is compared instead."""
    for name, cfg in (("original", original), ("twin", twin)):
        if not isinstance(cfg, ModelConfig):
            raise ValueError(f"{name} must be a ModelConfig, got {type(cfg).__name__}")
    wl = workload
    rows: list[PairRow] = []

    def add(measure: str, unit: str, a: float, b: float, kind: str = "exact") -> None:
        rows.append(PairRow(measure, unit, a, b, kind))

    pa, pb = count_params(original), count_params(twin)
    add("parameters", "params", pa.total, pb.total)
    add("embedding parameters", "params", pa.group_totals()["embeddings"], pb.group_totals()["embeddings"])
    fa = count_flops(original, 1, wl.seq_len, recompute=wl.checkpointing)
    fb = count_flops(twin, 1, wl.seq_len, recompute=wl.checkpointing)
    add("forward FLOPs per sequence", "FLOPs", fa.forward, fb.forward)
    if not wl.training:  # int8 weights: no backward, no optimizer, no training step to time
        working = [estimate_memory(c, wl.batch, wl.seq_len, wl.dtype, training=False) for c in (original, twin)]
        add("weights", "bytes", *(m.weights for m in working))
        add("inference working set (activations estimated)", "bytes", *(m.total for m in working), "estimate")
        return AlbertizedPair(original, twin, wl, tuple(rows), tuple(flop_differences(fb, fa)))
    add("training FLOPs per step", "FLOPs", fa.training * wl.batch, fb.training * wl.batch)
    memory = [estimate_memory(c, wl.batch, wl.seq_len, wl.dtype, wl.optimizer, precision=wl.precision,
                              checkpointing=wl.checkpointing) for c in (original, twin)]
    add("weights + gradients + optimizer", "bytes", *(m.weights + m.gradients + m.optimizer for m in memory))
    add("training memory (activations estimated)", "bytes", *(m.total for m in memory), "estimate")
    sizes = [gb * 1e9 for gb in DEVICE_MEMORY_GB]
    fits = [largest_batches(c, wl.seq_len, sizes, wl.dtype, wl.optimizer, wl.precision, wl.checkpointing)
            for c in (original, twin)]
    for gb, a, b in zip(DEVICE_MEMORY_GB, *fits, strict=True):
        add(f"largest batch on {gb} GB", "sequences", a[0], b[0], "estimate")
    for hw in profiles:
        ta, tb = (estimate_time(c, wl, hw) for c in (original, twin))
        add(f"training step on {ta.hardware.label}", "seconds", ta.training_s, tb.training_s, "estimate")
    return AlbertizedPair(original, twin, wl, tuple(rows), tuple(flop_differences(fb, fa)))


@dataclass(frozen=True)
class AlbertizingSavings:
    """What ALBERTizing ``original`` into ``albertized`` saves, idea by idea: each variant ("the factorization
    alone", "the sharing alone", "both") with its comparison against the original (`compare_albertized`). A variant
    that would equal the original or another one is left out (ELECTRA-small's own E is already 128)."""

    original: ModelConfig
    albertized: ModelConfig
    variants: tuple[tuple[str, AlbertizedPair], ...]


def albertizing_savings(original: ModelConfig, albertized: ModelConfig, workload: Workload,
                        profiles: tuple[str, ...] = TIME_PROFILES) -> AlbertizingSavings:
    """``albertized`` (the original with ALBERT's ideas) against ``original``, and each idea apart: the original with
    only ``albertized``'s embedding size, and with only its sharing (G and K included); every cost of
    `compare_albertized` for each."""
    from albert_core.configuration.coerce import albertize

    candidates = []
    if albertized.embedding_size != original.embedding_size:
        candidates.append((f"E = {albertized.embedding_size} alone",
                           albertize(original, embedding_size=albertized.embedding_size, sharing=None)))
    if (albertized.sharing, albertized.num_hidden_groups, albertized.inner_group_num) != (
            original.sharing, original.num_hidden_groups, original.inner_group_num):
        candidates.append(("sharing alone", albertize(original, embedding_size=None, sharing=albertized.sharing,
                                                      num_hidden_groups=albertized.num_hidden_groups,
                                                      inner_group_num=albertized.inner_group_num)))
    candidates.append(("both (ALBERTized)", albertized))
    seen = {original}
    variants = []
    for label, cfg in candidates:
        if cfg in seen:
            continue
        seen.add(cfg)
        variants.append((label, compare_albertized(original, cfg, workload, profiles)))
    return AlbertizingSavings(original, albertized, tuple(variants))


# E, sharing, G, K and the sharing schemes since ALBERT (a twin with a LoRA or a repeat was made from the same original)
ALBERT_FIELDS = ("embedding_size", "sharing", "num_hidden_groups", "inner_group_num", *SHARING_SCHEME)


def albertized_from(cfg: ModelConfig, candidates) -> ModelConfig | None:
    """The first of ``candidates`` that ``cfg`` is with ALBERT's ideas (the same config but for E, sharing, G, K and
    the sharing scheme; the candidate itself without them), or None: the preset or the file an ALBERTized twin was
    made from."""
    from albert_core.configuration.coerce import is_albertized

    if not is_albertized(cfg):
        return None
    for c in candidates:
        if (c is not None and c != cfg and c.family == cfg.family and not is_albertized(c)
                and cfg.replace(**{name: getattr(c, name) for name in ALBERT_FIELDS}) == c):
            return c
    return None
