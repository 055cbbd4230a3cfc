"""Run under torchrun by tests/test_distributed.py (`-m tests.helpers.ddp_worker`): data-parallel steps of
tiny configs in every sharing mode, one JSON line per config from rank 0."""

import json

import torch.distributed as dist

from albert_core import ModelConfig
from albert_core.hardware.allreduce import count_allreduce, init

TINY = dict(vocab_size=300, embedding_size=16, hidden_size=32, num_layers=4, num_heads=2, intermediate_size=64,
            max_position_embeddings=64)
CONFIGS = {
    "bert": ModelConfig(family="bert", sharing="none", **TINY),
    **{f"albert-{mode}": ModelConfig(sharing=mode, **TINY) for mode in ("all", "attention", "ffn", "none")},
    "albert-all-G2": ModelConfig(sharing="all", num_hidden_groups=2, **TINY),
}

if __name__ == "__main__":
    init("gloo")
    for name, cfg in CONFIGS.items():
        result = count_allreduce(cfg, batch=2, seq_len=16, steps=2)
        if dist.get_rank() == 0:
            print(json.dumps({"name": name, **result}), flush=True)
    dist.destroy_process_group()
