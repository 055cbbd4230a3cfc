"""The torchrun entry point of the measured gradient traffic (`albert_core.hardware.allreduce`): one line of JSON
from rank 0 for one model, or every preset's bytes per step written to a file (`make measure-ddp`).

    torchrun --nproc-per-node 2 -m albert_core.cli.allreduce_cmd --preset albert-base --num-layers 2 --steps 2
    torchrun --nnodes 2 --node-rank 0 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        --nproc-per-node 8 -m albert_core.cli.allreduce_cmd ...
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import torch.distributed as dist

from albert_core.cli.args import Parser, config_from_args, model_options, whole
from albert_core.hardware.allreduce import count_allreduce, init, measure_presets
from albert_core.hardware.profiles import MEASURED_FILE


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="torchrun ... -m albert_core.cli.allreduce_cmd",
                epilog="Model options are those of `python -m albert_core params` (--preset, --num-layers, ...).")
    p.add_argument("--steps", type=whole, default=2)
    p.add_argument("--batch", type=whole, default=2, help="sequences per process")
    p.add_argument("--seq-len", type=whole, default=32)
    p.add_argument("--measure", metavar="FILE", help="measure every preset's bytes per step and write them as JSON "
                   f"(the shipped file: {MEASURED_FILE.parent.name}/{MEASURED_FILE.name})")
    args, model_args = p.parse_known_args(argv)
    try:
        init()
        if args.measure:
            result = measure_presets()
        else:
            cfg = config_from_args(model_options().parse_args(model_args))
            result = count_allreduce(cfg, args.batch, args.seq_len, args.steps)
    except ValueError as exc:
        p.error(str(exc))
    if dist.get_rank() == 0:
        if args.measure:
            Path(args.measure).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(result))
        sys.stdout.flush()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
