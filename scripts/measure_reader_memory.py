"""What hostile config.json files cost the server beyond parsing them (issue 39): each file read, in a fresh process
of its own, the way the sidebar upload reads it (the config doctor, then the config) and the way the paste box does
(the doctor), with Python's heap peak (tracemalloc) and the process's peak RSS (getrusage) measured above the peak
of parsing the bytes alone. Tracemalloc sees Python's allocations only; the RSS peak (Linux's VmHWM, reset before each
step through /proc/self/clear_refs) sees everything, pydantic's Rust core included.

    .venv/bin/python scripts/measure_reader_memory.py                                # this checkout
    .venv/bin/python scripts/measure_reader_memory.py --checkout /tmp/old-checkout   # another (git archive of a commit)

Prints one row per file, in MiB: the heap and RSS peaks of parsing the bytes alone, of reading them as the upload does
(the doctor and the config, each parsing the bytes again), the reading's excess over the parse, and what the reading
ended with (the message, or the exception type that escaped).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_ALBERT_BASE_V2 = {  # albert-base-v2's config.json as published: the baseline, a file that loads
    "architectures": ["AlbertForMaskedLM"], "attention_probs_dropout_prob": 0, "bos_token_id": 2,
    "classifier_dropout_prob": 0.1, "down_scale_factor": 1, "embedding_size": 128, "eos_token_id": 3,
    "gap_size": 0, "hidden_act": "gelu_new", "hidden_dropout_prob": 0, "hidden_size": 768,
    "initializer_range": 0.02, "inner_group_num": 1, "intermediate_size": 3072, "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512, "model_type": "albert", "net_structure_type": 0, "num_attention_heads": 12,
    "num_hidden_groups": 1, "num_hidden_layers": 12, "num_memory_blocks": 0, "pad_token_id": 0,
    "type_vocab_size": 2, "vocab_size": 30000,
}


def _nest(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


CASES = {
    "albert-base-v2 (loads)": json.dumps(_ALBERT_BASE_V2),
    "head_dim string 0.9 MB x 1,024 heads (upload)": json.dumps(
        {"model_type": "eurobert", "head_dim": "x" * 900_000, "num_attention_heads": 1024, "hidden_size": 1024}),
    "heads = hidden = 30,000, head_dim string (19 KB paste)": json.dumps(
        {"model_type": "nomic_bert", "head_dim": "x" * 19_000, "hidden_size": 30_000, "num_attention_heads": 30_000}),
    "model_type ['albert']": json.dumps({"model_type": ["albert"]}),
    "pos_att_type [null, null]": json.dumps(
        {"model_type": "deberta-v2", "relative_attention": True, "position_biased_input": False, "share_att_key": True,
         "norm_rel_ebd": "layer_norm", "position_buckets": 256, "pos_att_type": [None, None]}),
    "head_dim {}": json.dumps({"model_type": "eurobert", "head_dim": {}}),
    "100-digit number in every key": json.dumps(
        {"model_type": "albert", **{k: int("9" * 100) for k in _ALBERT_BASE_V2 if k != "model_type"}}),
    "layer_types of 50,000 entries": json.dumps(
        {"model_type": "modernbert", "layer_types": ["full_attention"] * 50_000}),
    "architectures: one 0.9 MB name": json.dumps({"model_type": "albert", "architectures": ["A" * 900_000]}),
    "id2label of 45,000 entries (loads)": json.dumps(
        {**_ALBERT_BASE_V2, "id2label": {str(i): f"L{i}" for i in range(45_000)}}),
    "nesting 16 levels (the limit; loads)": json.dumps({**_ALBERT_BASE_V2, "x": _nest(14)}),
    "nesting 100,000 levels": '{"model_type": "albert", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
}

_CHILD = r"""
import json, sys, tracemalloc
from albert_core.configuration.hf_config import config_from_json_bytes, parse_config_json
from albert_core.review.doctor import diagnose

def status(field):  # kB figures of /proc/self/status
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])

def reset_peak():  # Linux: writing 5 to clear_refs resets VmHWM (the peak RSS) to the current RSS
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")

raw = sys.stdin.buffer.read()
def read_like_the_upload():
    said = []
    for step in (diagnose, config_from_json_bytes):
        try:
            out = step(raw)
            said.append("doctor: " + out.findings[-1].what.split(": ", 1)[-1][:80]
                        if step is diagnose and out.config is None else "ok")
        except ValueError as exc:
            said.append("ValueError: " + str(exc)[:80])
        except Exception as exc:  # what escaped to the page on the old code
            said.append("ESCAPED " + type(exc).__name__ + ": " + str(exc)[:60])
    return said
# warm up the imports and lazily built schemas on small files so they count in neither figure
for warm in (b'{"model_type": "albert"}', b'{"model_type": "modernbert"}', b'{"model_type": "x"}'):
    for step in (config_from_json_bytes, diagnose):
        try:
            step(warm)
        except Exception:
            pass
tracemalloc.start()
reset_peak(); rss0 = status("VmRSS")
try:
    parse_config_json(raw)
except Exception:
    pass
_, parse_peak = tracemalloc.get_traced_memory()
rss_parse_peak = status("VmHWM") - rss0
tracemalloc.reset_peak()
reset_peak(); rss1 = status("VmRSS")
said = read_like_the_upload()
_, read_peak = tracemalloc.get_traced_memory()
rss_read_peak = status("VmHWM") - rss1
tracemalloc.stop()
print(json.dumps({"parse_peak": parse_peak, "read_peak": read_peak, "rss_parse_kib": rss_parse_peak,
                  "rss_read_kib": rss_read_peak, "said": said}))
"""


def main() -> None:
    import os

    checkout = sys.argv[sys.argv.index("--checkout") + 1] if "--checkout" in sys.argv else str(ROOT)
    env = {**os.environ, "PYTHONPATH": checkout}
    print(f"albert_core from {checkout}")
    print(f"{'file':<54} {'bytes':>9} | {'parse alone':>15} | {'read (upload)':>15} | {'read - parse':>15} | "
          "outcome (doctor | config)")
    print(f"{'':<54} {'':>9} | {'heap':>7} {'RSS':>7} | {'heap':>7} {'RSS':>7} | {'heap':>7} {'RSS':>7} |")
    for name, text in CASES.items():
        raw = text.encode()
        done = subprocess.run([sys.executable, "-c", _CHILD], input=raw, capture_output=True, env=env, cwd=checkout,
                              timeout=600)
        if done.returncode:
            print(f"{name:<54} {len(raw):>9,}  the process died: {done.stderr.decode()[-200:]}")
            continue
        r = json.loads(done.stdout.decode().strip().splitlines()[-1])
        outcome = " | ".join(r["said"])
        mib = [r["parse_peak"] / 2**20, r["rss_parse_kib"] / 1024, r["read_peak"] / 2**20, r["rss_read_kib"] / 1024]
        above = [max(0.0, mib[2] - mib[0]), max(0.0, mib[3] - mib[1])]
        cells = " | ".join(f"{a:>7.1f} {b:>7.1f}" for a, b in (mib[:2], mib[2:], above))
        print(f"{name:<54} {len(raw):>9,} | {cells} | {outcome[:170]}")


if __name__ == "__main__":
    main()
