"""What one pretraining run is: `RunSpec`, frozen and validated, with a `key` that names its result.

A spec holds everything that determines a run: the model (`ModelConfig`, always with the pretraining
heads), the sentence task, steps, batch, sequence length, seed, optimizer schedule, evaluation cadence
and the data pipeline's knobs (tokenizer kind, n-gram masking, the training batches' mask rate). `key`
hashes all of that together with the corpus fingerprint, the tokenizer (kind and vocabulary size) and
`CODE_VERSION`, so two equal keys always mean the same finished run (the disk cache and the worker share
runs by key).

This module imports neither torch nor transformers.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from albert_core.checks import (
    check_field_names,
    check_number,
    check_whole_number,
    is_whole_number,
    short_repr,
)
from albert_core.configuration.config import ModelConfig
from albert_core.text import tokenizers as lab_tokenizers

# Bump when a change to the trainer, the data pipeline or the checkpoint layout changes what a run
# produces: every cached result is then recomputed instead of served stale.
CODE_VERSION = "lab-4"

TASKS = ("none", "nsp", "sop")
TOKENIZER_KINDS = lab_tokenizers.KINDS
FAMILY_MAX_NGRAM = {"albert": 3, "bert": 1}

# Hard ranges of the fields (what can describe a run at all); what a visitor may start is bounded
# further by `albert_core.lab.trainer.LabLimits`.
RANGES: Mapping[str, tuple[int, int]] = {
    "steps": (1, 1_000_000),
    "batch_size": (1, 4096),
    "seq_len": (8, 65_536),
    "seed": (0, 2**31 - 1),
    "warmup": (0, 1_000_000),
    "eval_every": (1, 1_000_000),
    "max_ngram": (1, 3),
}
MIN_VOCAB = lab_tokenizers.MIN_VOCAB_SIZE  # the smallest vocabulary a lab tokenizer can have
# The share of the training examples' word pieces chosen for MLM: BERT's and ALBERT's 15 % (NeoBERT pretrains at
# 20 %, ModernBERT and Ettin at 30 %). Held-out batches are always masked at the default (trainer.validation_batches).
DEFAULT_MASK_RATE = 0.15
MASK_RATE_RANGE = (0.05, 0.5)


def mask_rate_text(rate: float) -> str:
    """A mask rate in words: 0.3 -> '30 %'."""
    return f"{rate * 100:g} %"


# The lab's defaults (here rather than in experiments.py so that the CLI parser needs no pandas).
LAB_BASE = ModelConfig(
    family="albert", vocab_size=512, embedding_size=32, hidden_size=64, num_layers=4, num_heads=4,
    intermediate_size=256, max_position_embeddings=128, sharing="all", head="pretraining",
)
DEFAULT_STEPS = 9000  # 150-168 s a run at the lab's base size on an idle Intel Xeon core; results: docs/lab.md
# The lab's recipe (docs/lab.md, "Why the lab did not learn"): V 512 and sequence 32 (at V 2,048 or sequence
# 64 a 64-wide model learns nothing from context in thousands of steps), peak learning rate 1.5e-3 (at 9,000 steps it
# went 0.18-0.40 nat further below frequency-only than 3e-3 in four runs; 1e-2 and 6e-3 collapse a post-LN encoder to
# the frequency-only model), warmup 5 % of the steps, linear decay to 0.
# the recipe every front end uses (page, command line, experiments, reference runs); warmup and the
# evaluation interval follow the steps (`default_warmup`, `default_eval_every`), resolved by RunSpec
RUN_DEFAULTS: Mapping[str, Any] = {
    "batch_size": 16, "seq_len": 32, "lr": 1.5e-3, "tokenizer": "unigram", "max_ngram": 3,
}


def default_warmup(steps: int) -> int:
    """The recipe's warmup: 5 % of the steps (at least 1 for a run of 2 steps or more)."""
    return min(steps, max(1, steps // 20)) if steps > 1 else 0


def default_eval_every(steps: int) -> int:
    """15 evaluations per run of 1,500 steps or more, fewer for shorter runs (4 up to 400 steps): each is
    a forward pass over every held-out pair, about 10 training steps' compute at the base size."""
    evaluations = min(15, max(4, steps // 100))
    return max(1, steps // evaluations)


# The optimizer settings every lab training shares (pretraining and the downstream probe's fine-tuning).
GRAD_CLIP = 1.0
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-6  # BERT's and ALBERT's

EXPERIMENT_NAMES = ("table3", "table3-v8192", "table4", "table5", "figure2", "depth")


BERT_BASE_HIDDEN = 768
TRANSFORMERS_INIT_STD = 0.02  # transformers' initializer_range, chosen for BERT-base's width


def width_scaled_std(hidden_size: int) -> float:
    """transformers' 0.02 scaled to the width: 0.02 * sqrt(768 / H). A weight matrix then turns a
    unit-scale input into outputs (attention scores, projections) of the scale BERT-base starts with; at
    H 64 plain 0.02 starts 3.5x smaller. Measured: a copy task that needs attention is solved in about 250
    steps instead of 600 (the MLM loss itself was the same; docs/lab.md, "Why the lab did not learn")."""
    return TRANSFORMERS_INIT_STD * math.sqrt(BERT_BASE_HIDDEN / hidden_size)


@dataclass(frozen=True)
class RunSpec:
    """One pretraining run. Invalid values raise ValueError naming the field and the rule.

    ``config.head`` is set to "pretraining" (MLM head + SOP/NSP head) whatever it was: the lab always
    trains the pretraining heads. With task "none" the order head is present but receives no loss.
    ``tokenizer`` and ``max_ngram`` default (None) to the family's own: ALBERT a SentencePiece-style
    Unigram tokenizer and n-gram masking up to 3, BERT WordPiece and single-token masking; comparisons
    between families set them explicitly so that only the architecture differs.

    ``mask_rate`` is the share of the TRAINING examples' word pieces chosen for MLM (default 15 %, BERT's and
    ALBERT's; NeoBERT 20 %, ModernBERT and Ettin 30 %), in [0.05, 0.5]. The held-out batches and their baselines
    stay masked at 15 % whatever it is, so a 30 % run's validation MLM loss is scored on the very masked pieces a
    15 % run's is (like with like). ``to_dict`` leaves it out at the default, so the keys of runs made before it
    existed stay theirs.

    ``probe`` True: once trained, the run's encoder is fine-tuned on movie-review sentences beside the same model
    from scratch and the probe's baselines (`albert_core.lab.probe`); its results are part of the finished run.
    Left out of ``to_dict`` when False (the keys of runs made before it existed stay theirs).
    """

    config: ModelConfig
    task: str = "sop"
    steps: int = DEFAULT_STEPS
    batch_size: int = RUN_DEFAULTS["batch_size"]
    seq_len: int = RUN_DEFAULTS["seq_len"]
    seed: int = 0
    lr: float = RUN_DEFAULTS["lr"]
    warmup: int | None = None  # None: the recipe's, default_warmup(steps)
    eval_every: int | None = None  # None: the recipe's, default_eval_every(steps)
    label: str = ""
    tokenizer: str | None = None
    max_ngram: int | None = None
    weight_decay: float = 0.01
    init_std: float | None = None
    mask_rate: float = DEFAULT_MASK_RATE
    probe: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.config, ModelConfig):
            raise ValueError(f"config must be a ModelConfig, got {type(self.config).__name__}")
        if self.config.head != "pretraining":
            object.__setattr__(self, "config", self.config.replace(head="pretraining"))
        if self.config.vocab_size < MIN_VOCAB:
            raise ValueError(f"config.vocab_size must be at least {MIN_VOCAB}, got {self.config.vocab_size}")
        if not isinstance(self.task, str) or self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}; got {short_repr(self.task)}")
        if is_whole_number(self.steps) and self.steps >= 1:
            # one schedule rule for every front end: an unset warmup or interval is the recipe's, written
            # into the spec (and its key) as the number it stands for
            if self.warmup is None:
                object.__setattr__(self, "warmup", default_warmup(self.steps))
            if self.eval_every is None:
                object.__setattr__(self, "eval_every", default_eval_every(self.steps))
        for name, (lo, hi) in RANGES.items():
            value = getattr(self, name)
            if name == "max_ngram" and value is None:
                continue
            check_whole_number(name, value, lo, hi)
        if self.warmup > self.steps:
            raise ValueError(f"warmup must be at most steps ({self.steps}), got {self.warmup}")
        if self.seq_len > self.config.max_position_embeddings:
            raise ValueError(
                f"seq_len ({self.seq_len}) must not exceed config.max_position_embeddings "
                f"({self.config.max_position_embeddings})"
            )
        object.__setattr__(self, "lr", check_number("lr", self.lr, 0, 1, lo_open=True, hi_open=True))
        object.__setattr__(self, "weight_decay", check_number("weight_decay", self.weight_decay, 0, 1, hi_open=True))
        if self.init_std is not None:
            object.__setattr__(self, "init_std", check_number("init_std", self.init_std, 0, 1, lo_open=True,
                                                              why=" (or None)"))
        object.__setattr__(self, "mask_rate", check_number("mask_rate", self.mask_rate, *MASK_RATE_RANGE))
        if not isinstance(self.probe, bool):
            raise ValueError(f"probe must be true or false, got {short_repr(self.probe)}")
        if self.tokenizer is not None and self.tokenizer not in TOKENIZER_KINDS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZER_KINDS)} (or None); "
                             f"got {short_repr(self.tokenizer)}")
        if not isinstance(self.label, str) or len(self.label) > 80:
            raise ValueError(f"label must be a text of at most 80 characters, got {short_repr(self.label)}")

    # ----------------------------------------------------------------------------- derived values
    @property
    def tokenizer_kind(self) -> str:
        return self.tokenizer or lab_tokenizers.tokenizer_kind(self.config.family)  # the family's record

    @property
    def ngram(self) -> int:
        return self.max_ngram if self.max_ngram is not None else FAMILY_MAX_NGRAM[self.config.family]

    @property
    def weight_std(self) -> float:
        """The standard deviation the weights start with: ``init_std``, else `width_scaled_std`."""
        return self.init_std if self.init_std is not None else width_scaled_std(self.config.hidden_size)

    @property
    def vocab_size(self) -> int:
        return self.config.vocab_size

    @property
    def tokens_per_step(self) -> int:
        """Token positions per training step (padding included): batch x sequence length."""
        return self.batch_size * self.seq_len

    @property
    def name(self) -> str:
        """The label, else a short description of the run (with its mask rate when it is not the default)."""
        if self.label:
            return self.label
        mask = f", mask {mask_rate_text(self.mask_rate)}" if self.mask_rate != DEFAULT_MASK_RATE else ""
        mask += ", probed" if self.probe else ""
        return f"{self.config.label}, {self.task.upper() if self.task != 'none' else 'MLM only'}{mask}"

    @functools.cached_property
    def key(self) -> str:
        """A 20-hex-digit hash of everything that determines the finished run (see module docstring);
        the label is left out, so differently labelled requests for the same run share it. The
        tokenizer enters by its content (the `tokenizers` trainers are not reproducible across
        processes for sizes the lab does not ship, so kind and size alone would not name it)."""
        payload = {
            # a label names, not determines; the family's tokenizer and masking asked for by None are the same
            # run as asked for by name (the command line leaves them to the family, the page names them)
            "spec": {**{k: v for k, v in self.to_dict().items() if k != "label"},
                     "tokenizer": self.tokenizer_kind, "max_ngram": self.ngram},
            "resolved": {"tokenizer": self.tokenizer_kind, "max_ngram": self.ngram},
            "corpus": corpus_fingerprint(),
            "tokenizer": lab_tokenizers.tokenizer_fingerprint(self.tokenizer_kind, self.vocab_size),
            "code": CODE_VERSION,
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:20]

    def replace(self, **changes: Any) -> RunSpec:
        """A validated copy with some fields changed (ValueError for an unknown field)."""
        try:
            return dataclasses.replace(self, **changes)
        except TypeError as exc:  # an unexpected keyword argument
            raise ValueError(f"unknown field: {exc}") from None

    # ----------------------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: plain numbers and strings, the config as ModelConfig.to_dict() without the axes at the
        paper's layout and without ``mask_rate`` at the default (the keys of runs made before the axes and the
        mask rate existed stay theirs; `from_dict` reads either)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["config"] = self.config.to_dict(default_axes=False)
        if self.mask_rate == DEFAULT_MASK_RATE:
            del out["mask_rate"]
        if not self.probe:
            del out["probe"]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunSpec:
        check_field_names(cls, data, "a run spec")
        if "config" not in data:
            raise ValueError("config is missing")
        return cls(**{**data, "config": ModelConfig.from_dict(data["config"])})


@functools.lru_cache(maxsize=1)
def corpus_fingerprint() -> dict[str, Any]:
    """Name, document counts, characters and a content hash of the lab corpus (computed once)."""
    from albert_core.text.corpus import load_corpus

    corpus = load_corpus()
    h = hashlib.sha256()
    chars = 0
    for split in (corpus.train, corpus.validation):
        for doc in split:
            for sentence in doc:
                h.update(sentence.encode())
                h.update(b"\x00")
                chars += len(sentence)
            h.update(b"\x01")
        h.update(b"\x02")
    return {
        "name": corpus.name,
        "train_documents": len(corpus.train),
        "validation_documents": len(corpus.validation),
        "characters": chars,
        "sha256": h.hexdigest()[:16],
    }


