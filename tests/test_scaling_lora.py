"""The Scaling page's "Parameters against LoRA rank" chart (issue 44, item 1): its numbers against count_params of
the configs built one by one, and against the arithmetic of a LoRA written out here (r x (d_in + d_out) per matrix,
at every executed position of a shared block); its references; the configs that cannot carry a LoRA; Plotly's valid
form."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from albert_core import PRESETS, ModelConfig, count_params
from albert_core.configuration.coerce import albertize, coerce
from albert_core.configuration.presets import ALL_PRESETS
from tests.helpers.facts import MODEL_COUNTS, SHARING_COUNTS
from ui.scaling import charts
from ui.scaling import figures as fs

ALBERT_BASE = PRESETS["albert-base"]
H, I = 768, 3072  # noqa: E741 - ALBERT-base's hidden and intermediate sizes
# per unit of rank and per position, ALBERT-base's six matrices: q, k, v, o (H x H), FFN in (H x I), FFN out (I x H)
PER_POSITION = 4 * (H + H) + (H + I) + (I + H)
POOLER = H * H + H


def chart_of(cfg: ModelConfig):
    base = fs.lora_base(cfg)
    lora = charts.lora(base, fs.lora_ranks(base, cfg.lora_rank))
    return lora, lora.marked(cfg, count_params(cfg).total).to_dict()


def line(spec: dict, starts: str) -> dict:
    (t,) = [t for t in spec["data"] if t["name"].startswith(starts)]
    return t


def test_albert_base_lora_counts_by_hand():
    """ALBERT-base, rank 8 on all six matrices at its 12 positions: +1,327,104 parameters; rank 16: 13.75M without
    the pooler's 590,592."""
    assert PER_POSITION == 13_824 and POOLER == 590_592
    lora, spec = chart_of(ALBERT_BASE)
    points = dict(zip(line(spec, "LoRA on")["x"], line(spec, "LoRA on")["y"], strict=True))
    assert points[0] == MODEL_COUNTS["albert-base"]
    assert points[8] - points[0] == 12 * 8 * PER_POSITION == 1_327_104
    assert points[16] - POOLER == 13_747_200
    assert lora.numbers.per_rank == 12 * PER_POSITION
    # the ranks: 0, then powers of two up to H / 2
    assert line(spec, "LoRA on")["x"] == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert line(spec, "not shared")["y"] == [float(SHARING_COUNTS["none"])] * 2
    assert line(spec, "all-shared")["y"] == [float(SHARING_COUNTS["all"])] * 2
    # the LoRA holds as many parameters as not sharing at rank (89,650,176 - 11,683,584) / 165,888 = 470.0
    assert lora.numbers.break_even == pytest.approx(470.0, abs=0.01)


SCHEMES = {
    "albert-base, cycle, unique ends, x2, rank 8": coerce(
        {"num_hidden_groups": 2, "block_order": "cycle", "unique_ends": True, "repeat": 2, "lora_rank": 8},
        ALBERT_BASE).config,
    "modernbert ALBERTized, rank 8 on q-v": coerce({"lora_rank": 8, "lora_targets": "q-v"},
                                                   albertize(ALL_PRESETS["modernbert-base"])).config,
    "albert-base sharing attention": coerce({"sharing": "attention"}, ALBERT_BASE).config,
    "albert-base not shared, x2": coerce({"sharing": "none", "repeat": 2}, ALBERT_BASE).config,
    "albert-base, rank 24 on in-out, K 2": coerce({"inner_group_num": 2, "lora_rank": 24, "lora_targets": "in-out"},
                                                  ALBERT_BASE).config,
}


@pytest.mark.parametrize("name", list(SCHEMES))
def test_every_point_is_count_params_of_its_config(name):
    cfg = SCHEMES[name]
    base = fs.lora_base(cfg)
    _, spec = chart_of(cfg)
    lora = line(spec, "LoRA on")
    for rank, params in zip(lora["x"], lora["y"], strict=True):
        at = cfg.replace(lora_rank=rank, lora_targets=base.lora_targets)  # built alone, not through the sweep
        assert params == count_params(at).total, (name, rank)
    unshared = cfg.replace(sharing="none", num_hidden_groups=1, block_order="groups", unique_ends=False, lora_rank=0)
    shared = cfg.replace(sharing="all", lora_rank=0)
    assert line(spec, "not shared")["y"][0] == count_params(unshared).total
    assert line(spec, "all-shared")["y"][0] == count_params(shared).total
    star = line(spec, fs.CURRENT_NAME)
    assert (star["x"][0], star["y"][0]) == (cfg.lora_rank, count_params(cfg).total)
    validated = go.Figure(spec)  # raises on a property Plotly does not know
    assert json.loads(pio.to_json(validated, validate=False)) == json.loads(json.dumps(spec))


def test_the_scheme_counts_by_hand():
    a = SCHEMES["albert-base, cycle, unique ends, x2, rank 8"]
    # the LoRA sits on the shared middle: (12 - 2) layers x 2 runs = 20 positions
    lora, spec = chart_of(a)
    assert lora.numbers.per_rank == 20 * PER_POSITION
    m = SCHEMES["modernbert ALBERTized, rank 8 on q-v"]
    lora, spec = chart_of(m)
    assert line(spec, "LoRA on")["name"] == "LoRA on q, v"
    assert lora.numbers.per_rank == 22 * 2 * (768 + 768)  # 22 layers, q and v of 768 x 768
    # sharing attention: the chart puts its LoRA on the four attention matrices only
    att = SCHEMES["albert-base sharing attention"]
    assert fs.lora_targets_for(att) == "q-k-v-o"
    assert chart_of(att)[0].numbers.per_rank == 12 * 4 * (H + H)
    # nothing shared but every layer run twice: all six at 24 positions
    assert chart_of(SCHEMES["albert-base not shared, x2"])[0].numbers.per_rank == 24 * PER_POSITION
    # K = 2 blocks per layer, rank 24 on the FFN: 24 positions; 24 is a point of its own (not a power of two)
    k2 = SCHEMES["albert-base, rank 24 on in-out, K 2"]
    lora, spec = chart_of(k2)
    assert lora.numbers.per_rank == 24 * 2 * (H + I)
    assert 24 not in line(spec, "LoRA on")["x"]  # inside the powers of two: the star lies on the straight line


def test_a_rank_past_the_charted_ones_is_a_point_of_its_own():
    cfg = coerce({"lora_rank": 300}, ALBERT_BASE).config
    base = fs.lora_base(cfg)
    assert fs.lora_ranks(base, 300)[-2:] == (256, 300)
    assert fs.lora_max_rank(base) == 768
    small = coerce({"hidden_size": 128, "num_heads": 2, "intermediate_size": 64, "lora_rank": 4,
                    "lora_targets": "in"}, ALBERT_BASE).config
    assert fs.lora_max_rank(fs.lora_base(small)) == 64  # the 128 x 64 FFN up has rank 64 at most
    assert fs.lora_ranks(fs.lora_base(small)) == (0, 1, 2, 4, 8, 16, 32, 64)


@pytest.mark.parametrize(("cfg", "words"), [
    (PRESETS["bert-base"], "shares no weights between layers"),
    (ALL_PRESETS["roberta-base"], "Nothing is shared here and every layer runs once"),
    (ModelConfig(sharing="none"), "Nothing is shared here and every layer runs once"),
])
def test_configs_that_cannot_carry_a_lora_say_why(cfg, words):
    assert words in fs.lora_refusal(cfg)
    assert fs.lora_targets_for(cfg) is None
    with pytest.raises(ValueError):
        fs.lora_base(cfg)


def test_one_chart_serves_every_rank_of_a_config():
    a, b = (coerce({"lora_rank": r}, ALBERT_BASE).config for r in (8, 16))
    assert fs.lora_base(a) == fs.lora_base(b) == fs.lora_base(ALBERT_BASE)
    assert charts.lora(fs.lora_base(a), fs.lora_ranks(fs.lora_base(a), 8)) is charts.lora(
        fs.lora_base(b), fs.lora_ranks(fs.lora_base(b), 16))


def test_hover_is_for_people():
    _, spec = chart_of(ALBERT_BASE)
    text = dict(zip(line(spec, "LoRA on")["x"], line(spec, "LoRA on")["text"], strict=True))
    assert text[8] == "rank 8: 13.01M params (13,010,688)<br>LoRA +1,327,104 (+11.4%)"
    assert text[0] == "rank 0: 11.68M params (11,683,584)"
    assert line(spec, "not shared")["text"][0] == "not shared (every layer its own weights): 89.65M params (89,650,176)"
