"""The architecture diagram: one block per executed attention / FFN, coloured by the copy it uses."""

from __future__ import annotations

from collections import Counter

import pytest

from albert_core import PRESETS, ModelConfig, count_flops, count_params
from albert_core.format import fmt_flops
from ui.explorer.architecture import (
    MAX_DRAWN,
    architecture_diagram,
    architecture_summary,
    lora_cost_text,
    schedule_text,
)


def _contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two '#rrggbb' colours (its relative-luminance formula, written here)."""

    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _blocks(fig, kind):
    """{executed position: (copy, fill colour)} of one row, read from the shapes' names."""
    out = {}
    for s in fig.layout.shapes:
        if s.name and s.name.startswith(kind + " copy "):
            copy = s.name.split(" copy ")[1].split(",")[0]
            out[round((s.x0 + s.x1) / 2)] = (copy, s.fillcolor)
    return out


def _names(fig, prefix):
    return [s.name for s in fig.layout.shapes if s.name and s.name.startswith(prefix)]


def test_albert_base_one_shared_layer():
    fig = architecture_diagram(PRESETS["albert-base"])
    att, ffn = _blocks(fig, "attention"), _blocks(fig, "FFN")
    assert sorted(att) == list(range(12)) and sorted(ffn) == list(range(12))
    assert {c for c, _ in att.values()} == {"0"} and len({col for _, col in att.values()}) == 1
    assert fig.layout.title.text == "L×K = 12×1 = 12 executed layers"
    assert not _names(fig, "group boundary") and not _names(fig, "layer ")
    assert _names(fig, "embeddings") == ["embeddings V×E + E→H"]
    texts = [a.text for a in fig.layout.annotations]
    assert texts.count("A0") == 12 and texts.count("F0") == 12


def test_groups_and_inner_repeats():
    # G = 2, K = 2 over L = 4: layers 0-1 use group 0, layers 2-3 group 1 (int(i / (L / G)))
    cfg = ModelConfig(num_layers=4, num_hidden_groups=2, inner_group_num=2)
    fig = architecture_diagram(cfg)
    att = _blocks(fig, "attention")
    assert [att[x][0] for x in range(8)] == ["0.0", "0.1", "0.0", "0.1", "1.0", "1.1", "1.0", "1.1"]
    assert len({col for _, col in att.values()}) == 4  # G*K copies, four colours
    assert att[0][1] == att[2][1] != att[1][1]
    assert fig.layout.title.text == "L×K = 4×2 = 8 executed layers"
    assert _names(fig, "group boundary") == ["group boundary 2"]
    boundary = next(s for s in fig.layout.shapes if s.name == "group boundary 2")
    assert boundary.x0 == 3.5  # between executed positions 3 (layer 1, repeat 1) and 4 (layer 2)
    assert len(_names(fig, "layer ")) == 4
    assert [a.text for a in fig.layout.annotations if a.text.startswith("group")] == ["group 0", "group 1"]
    assert "8 attention" in architecture_summary(cfg) and "holds 4 attention and 4 feed-forward" in \
        architecture_summary(cfg)


def test_attention_only_sharing():
    cfg = ModelConfig(sharing="attention", num_layers=6)
    fig = architecture_diagram(cfg)
    att, ffn = _blocks(fig, "attention"), _blocks(fig, "FFN")
    assert Counter(c for c, _ in att.values()) == {"0": 6}
    assert [ffn[x][0] for x in range(6)] == ["0", "1", "2", "3", "4", "5"]
    assert len({col for _, col in ffn.values()}) == 6
    assert "holds 1 attention and 6 feed-forward" in architecture_summary(cfg)


def test_bert_and_deep_models():
    fig = architecture_diagram(PRESETS["bert-large"])
    att = _blocks(fig, "attention")
    assert [att[x][0] for x in range(24)] == [str(i) for i in range(24)]
    assert _names(fig, "embeddings") == ["embeddings V×H"]
    deep = architecture_diagram(ModelConfig(num_layers=48))
    assert len(_blocks(deep, "FFN")) == 48
    assert not [a for a in deep.layout.annotations if a.text.startswith("A")]  # too dense: hover only
    hover = deep.data[0].hovertext
    assert "layer 47, repeat 0, group 0: FFN copy 0" in hover


def test_many_distinct_copies_never_share_a_colour():
    # shared attention, G 3, K 2 over 21 layers: 6 attention copies (3 groups x 2) and 42 distinct FFN copies
    cfg = ModelConfig(num_layers=21, sharing="attention", num_hidden_groups=3, inner_group_num=2)
    fig = architecture_diagram(cfg)
    for kind in ("attention", "FFN"):
        by_copy = {}
        for copy, color in _blocks(fig, kind).values():
            by_copy.setdefault(copy, set()).add(color)
        assert all(len(c) == 1 for c in by_copy.values())  # one copy, one colour
        colors = [next(iter(c)) for c in by_copy.values()]
        assert len(set(colors)) == len(colors), kind  # different copies, different colours
    assert len({c for c, _ in _blocks(fig, "FFN").values()}) > 6  # more copies than the palette holds
    assert "hover a block" in architecture_summary(cfg)
    emb = next(a for a in fig.layout.annotations if a.text == "emb")
    block = next(s for s in fig.layout.shapes if s.name and s.name.startswith("embeddings"))
    assert _contrast(emb.font.color, block.fillcolor) >= 4.5  # readable on its block: WCAG 2 AA for text


# ----------------------------------------------------------------------------- the sharing schemes since ALBERT
def _hover(fig) -> list[str]:
    return list(fig.data[0].hovertext)


def test_the_cycle_order_runs_group_i_mod_g():
    # ALBERT's contiguous groups over L = 6, G = 2: 0 0 0 1 1 1; cycle: 0 1 0 1 0 1
    contiguous = _blocks(architecture_diagram(ModelConfig(num_layers=6, num_hidden_groups=2)), "attention")
    cfg = ModelConfig(num_layers=6, num_hidden_groups=2, block_order="cycle")
    fig = architecture_diagram(cfg)
    att = _blocks(fig, "attention")
    assert [contiguous[x][0] for x in range(6)] == ["0", "0", "0", "1", "1", "1"]
    assert [att[x][0] for x in range(6)] == ["0", "1", "0", "1", "0", "1"]
    assert att[0][1] == att[2][1] != att[1][1]  # same copy, same colour
    assert not _names(fig, "group boundary")  # no contiguous runs to separate
    assert "groups 0-1 in turn" in [a.text for a in fig.layout.annotations]
    assert "The copy each layer runs: 0 1 0 1 0 1; the 2 groups take turns" in schedule_text(cfg)


def test_unique_ends_give_the_first_and_last_layers_copies_of_their_own():
    # L = 8, G = 2, unique ends: layer 0 runs copy 0, layers 1-6 the groups 1 and 2 (contiguous), layer 7 copy 3
    cfg = ModelConfig(num_layers=8, num_hidden_groups=2, unique_ends=True)
    fig = architecture_diagram(cfg)
    att, ffn = _blocks(fig, "attention"), _blocks(fig, "FFN")
    assert [att[x][0] for x in range(8)] == ["0", "1", "1", "1", "2", "2", "2", "3"]
    assert [ffn[x][0] for x in range(8)] == [att[x][0] for x in range(8)]
    assert len({col for _, col in att.values()}) == 4 == cfg.attention_copies  # four copies, four colours
    assert _names(fig, "group boundary") == ["group boundary 1", "group boundary 4", "group boundary 7"]
    assert [a.text for a in fig.layout.annotations if a.text in ("first", "last") or a.text.startswith("group")] == [
        "first", "group 1", "group 2", "last"]
    assert "0 | 1 1 1 2 2 2 | 3" in schedule_text(cfg) and "the 2 groups share the 6 between them" in \
        schedule_text(cfg)
    assert "layer 0, repeat 0, first layer's own: attention copy 0" in _hover(fig)


def test_a_repeat_runs_each_layer_in_a_row_and_a_lora_marks_its_positions():
    """Cycle, unique ends, each layer twice and a LoRA on q, v and the FFN's up projection: 16 executed layers, the
    LoRA at every position of the shared middle (12), none at the unique ends, on the matrices chosen."""
    cfg = ModelConfig(num_layers=8, num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2,
                      lora_rank=8, lora_targets="q-v-in")
    fig = architecture_diagram(cfg)
    att = _blocks(fig, "attention")
    assert [att[x][0] for x in range(16)] == ["0", "0", "1", "1", "2", "2", "1", "1", "2", "2", "1", "1", "2", "2",
                                              "3", "3"]
    assert fig.layout.title.text == "L×K×r = 8×1×2 = 16 executed layers"
    assert len(_names(fig, "layer ")) == 8  # each layer's two passes in one outline
    lora = _names(fig, "LoRA on ")
    assert lora.count("LoRA on attention (q, v), executed layer 2") == 1
    assert sorted(int(n.rsplit(" ", 1)[1]) for n in lora if "attention" in n) == list(range(2, 14))
    assert sorted(int(n.rsplit(" ", 1)[1]) for n in lora if "FFN (in)" in n) == list(range(2, 14))
    assert "layer 1 pass 1, repeat 0, group 1: attention copy 1 + its own LoRA (rank 8) on q, v" in _hover(fig)
    text = schedule_text(cfg)
    assert "every layer runs 2 times in a row" in text and "on q, v at 12 executed attention blocks" in text
    assert "not at the unique ends" in text


@pytest.mark.parametrize("cfg", [
    ModelConfig(lora_rank=4),
    ModelConfig(sharing="attention", num_layers=6, lora_rank=4, lora_targets="q-k-v-o"),
    ModelConfig(sharing="ffn", num_layers=5, repeat=3, lora_rank=2, lora_targets="q-out"),
    ModelConfig(sharing="none", num_layers=4, repeat=2, inner_group_num=2, lora_rank=2, lora_targets="k-in"),
    ModelConfig(num_layers=7, num_hidden_groups=3, unique_ends=True, inner_group_num=2, repeat=2, lora_rank=1),
])
def test_the_lora_bands_are_the_positions_the_counts_charge(cfg):
    """Each matrix's LoRA marks as many executed blocks as `ModelConfig.lora_terms` counts positions for it."""
    marks = Counter()
    for name in _names(architecture_diagram(cfg), "LoRA on "):
        for m in name.split("(")[1].split(")")[0].split(", "):
            marks[m] += 1
    assert marks == {m: n for m, n, _, _ in cfg.lora_terms() if n}


def test_a_very_deep_schedule_draws_its_first_executed_layers_and_says_so():
    cfg = ModelConfig(num_layers=128, inner_group_num=64, repeat=16, lora_rank=1)
    fig = architecture_diagram(cfg)
    assert len(_blocks(fig, "attention")) == MAX_DRAWN
    assert fig.layout.title.text == f"L×K×r = 128×64×16 = 131072 executed layers (the first {MAX_DRAWN} drawn)"


def test_the_lora_sentence_uses_the_configs_own_numbers():
    base = PRESETS["albert-base"]
    cfg = base.replace(lora_rank=8)
    added = 12 * 8 * (4 * (768 + 768) + 2 * (768 + 3072))  # 12 positions, rank 8, q k v o and the two FFN matrices
    flops = count_flops(cfg, 1, 128)
    text = lora_cost_text(count_params(cfg), flops, batch=8)
    assert added == 1_327_104 and f"adds {added:,} parameters" in text
    assert f"{fmt_flops(2 * 128 * added)} per forward pass of one 128-token sequence" in text
    assert f"({fmt_flops(8 * 2 * 128 * added)} for the batch of 8)" in text
    assert "cannot be merged" in text and lora_cost_text(count_params(base), count_flops(base, 1, 128)) == ""
