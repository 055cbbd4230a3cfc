"""The architecture diagram: one block per executed attention / FFN, coloured by the copy it uses."""

from __future__ import annotations

from collections import Counter

from albert_core import PRESETS, ModelConfig
from ui.explorer.architecture import architecture_diagram, architecture_summary


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
