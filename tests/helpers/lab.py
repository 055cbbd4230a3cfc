"""Shared pieces of the pretraining-lab tests: a tiny model and tiny runs (the isolated run cache, `runs_dir`,
is a fixture in tests/conftest.py)."""

from __future__ import annotations

import threading

from albert_core.configuration.config import ModelConfig
from albert_core.lab import trainer
from albert_core.lab.spec import RunSpec

V = 512
TINY = ModelConfig(
    family="albert", vocab_size=V, embedding_size=16, hidden_size=32, num_layers=2, num_heads=2,
    intermediate_size=64, max_position_embeddings=64, sharing="all", head="pretraining",
)


def tiny_spec(**changes) -> RunSpec:
    fields = dict(task="sop", steps=8, batch_size=4, seq_len=32, seed=0, lr=3e-3, warmup=2, eval_every=4,
                  tokenizer="unigram", max_ngram=3)
    config = changes.pop("config", TINY)
    fields["warmup"] = min(2, changes.get("steps", 8))
    return RunSpec(config, **{**fields, **changes})


class CountingTrain:
    """Wraps trainer.train: counts calls and records the order of the specs it trained."""

    def __init__(self, monkeypatch):
        self.calls: list[RunSpec] = []
        self._lock = threading.Lock()
        self._train = trainer.train
        monkeypatch.setattr(trainer, "train", self)

    def __call__(self, spec, *args, **kwargs):
        with self._lock:
            self.calls.append(spec)
        return self._train(spec, *args, **kwargs)
