"""Run under torchrun by tests/test_lab_parallel.py (`-m tests.helpers.lab_ddp_worker`): 2-step data-parallel
lab runs of the tiny model in every sharing mode (and BERT, and MLM only), one JSON line per run from rank 0."""

import json

from albert_core.lab import parallel
from albert_core.lab.trainer import train
from tests.helpers.lab import TINY, tiny_spec

RUNS = {
    **{f"albert-{mode}": tiny_spec(config=TINY.replace(sharing=mode), steps=2) for mode in ("all", "attention", "ffn",
                                                                                             "none")},
    "bert": tiny_spec(config=TINY.replace(family="bert", embedding_size=TINY.hidden_size, sharing="none"), steps=2,
                      tokenizer="unigram"),
    "albert-all-mlm-only": tiny_spec(task="none", steps=2),
}

if __name__ == "__main__":
    parallel.init("gloo")
    try:
        for name, spec in RUNS.items():
            result = train(spec)
            if parallel.is_writer():
                print(json.dumps({"name": name, "processes": result.processes,
                                  "bytes": result.allreduce_bytes}), flush=True)
    finally:
        parallel.finish()
