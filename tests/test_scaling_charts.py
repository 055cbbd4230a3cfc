"""The Scaling page's charts (ui/scaling/charts.py): each one cached unit keyed by what its data depend on, shared
while its inputs are equal, rebuilt when one changes, bounded; the current config's marks added per run."""

from __future__ import annotations

from albert_core import ModelConfig, Workload, count_params
from albert_core.configuration.config import AXIS_FIELDS
from albert_core.configuration.presets import ENCODER_PRESETS
from ui import state
from ui.scaling import charts
from ui.scaling import figures as fs

WL = Workload(batch=2, seq_len=64)
LS = (1, 2, 4, 12, 24)


def star(fig):
    (point,) = [t for t in fig.data if t.name == fs.CURRENT_NAME]
    return point.x[0], point.y[0]


def test_equal_inputs_share_one_chart_even_when_made_separately():
    first = charts.layers(fs.any_depth(ModelConfig()), LS, WL)
    again = charts.layers(fs.any_depth(ModelConfig()), LS, Workload(batch=2, seq_len=64))  # new, equal objects
    assert again is first


def test_a_changed_config_gives_a_changed_figure():
    cfg = ModelConfig()
    deeper = cfg.replace(num_layers=24, sharing="none")
    a = charts.layers(fs.any_depth(cfg), LS, WL).marked(cfg, count_params(cfg).total)
    b = charts.layers(fs.any_depth(deeper), LS, WL).marked(deeper, count_params(deeper).total)
    assert star(a) == (cfg.num_layers, count_params(cfg).total)
    assert star(b) == (24, count_params(deeper).total)
    assert star(b) != star(a)
    assert a.to_plotly_json()["data"][:2] != b.to_plotly_json()["data"][:2]  # the lines too: unshared layers


def test_a_move_of_l_rebuilds_only_the_charts_whose_data_depend_on_l():
    cfg = ModelConfig()  # all-shared: params do not depend on L
    moved = cfg.replace(num_layers=6)
    assert charts.layers(fs.any_depth(cfg), LS, WL) is charts.layers(fs.any_depth(moved), LS, WL)
    assert charts.embedding(fs.any_depth(cfg), (1000, 30000), (64, 128), WL) is charts.embedding(
        fs.any_depth(moved), (1000, 30000), (64, 128), WL)
    assert charts.heatmap(fs.params_depth_key(cfg), (64, 128), (256, 768)) is charts.heatmap(
        fs.params_depth_key(moved), (64, 128), (256, 768))
    assert charts.reduction(fs.any_depth(cfg)) is charts.reduction(fs.any_depth(moved))
    # the activations follow the executed layers: the memory chart is rebuilt, and so are the H lines (its BERT
    # twin's parameters grow with L)
    assert charts.memory(cfg, WL) is not charts.memory(moved, WL)
    assert charts.hidden(cfg, (256, 768)) is not charts.hidden(moved, (256, 768))


def test_charts_of_one_kind_with_different_marks_share_their_base():
    sharing = charts.sharing()
    a, b = sharing.marked(11_000_000), sharing.marked(12_000_000)
    assert a is not b and a.to_plotly_json() != b.to_plotly_json()
    assert charts.sharing() is sharing and sharing.marked(11_000_000).to_plotly_json() == a.to_plotly_json()
    assert charts.memory(ModelConfig(), WL).marked() is charts.memory(ModelConfig(), WL).base  # no marks to add


def test_the_cache_is_bounded():
    """After `max_entries` other entries the first one is evicted (built again: a new object). The presets chart
    has 16 entries (one per sequence length and head in use)."""
    first = charts.presets(64, "model")
    assert charts.presets(64, "model") is first
    for seq in range(65, 65 + 16):
        charts.presets(seq, "model")
    rebuilt = charts.presets(64, "model")
    assert rebuilt is not first and rebuilt.base.to_plotly_json() == first.base.to_plotly_json()
    assert rebuilt.numbers == first.numbers


def test_config_hash_keys_differ_in_every_field():
    """The caches key configs and workloads by repr (state.CONFIG_HASH_FUNCS): a change of any one field
    must change the key, or two configs would share a cached result."""
    import dataclasses

    from albert_core import Workload

    for obj, changed in ((ModelConfig(), dict(vocab_size=30_001, embedding_size=64, hidden_size=1536, num_heads=6,
                                              intermediate_size=4096, num_layers=13, num_hidden_groups=2,
                                              inner_group_num=2, max_position_embeddings=1024, type_vocab_size=3,
                                              sharing="ffn", head="masked-lm", tie_word_embeddings=False,
                                              hidden_act="relu", layer_norm_eps=1e-6, block_order="cycle",
                                              unique_ends=True, repeat=2, lora_rank=8)),
                         (Workload(dtype="fp16"), dict(batch=3, seq_len=64, dtype="bf16", optimizer="sgd",
                                                       precision="mixed", checkpointing=True))):
        # the axes: below; the LoRA's targets too (at rank 0 they are always all six)
        names = {f.name for f in dataclasses.fields(obj)} - set(AXIS_FIELDS) - {"lora_targets"}
        assert names <= set(changed) | {"family"}, names - set(changed)
        keys = {state.CONFIG_HASH_FUNCS[type(obj)](obj)}
        for name in names & set(changed):
            other = obj.replace(**{name: changed[name]})
            assert other != obj
            keys.add(state.CONFIG_HASH_FUNCS[type(obj)](other))
        assert len(keys) == 1 + len(names & set(changed))
    lora = ModelConfig(lora_rank=8)
    assert state.CONFIG_HASH_FUNCS[ModelConfig](lora.replace(lora_targets="q-v")) != \
        state.CONFIG_HASH_FUNCS[ModelConfig](lora)
    bert = ModelConfig(family="bert", sharing="none")
    assert repr(bert) != repr(ModelConfig())
    # every architecture axis, each changed alone on a family that can take the change
    modern, p = ENCODER_PRESETS["modernbert-base"], ENCODER_PRESETS
    axis_changes = {
        "ffn_kind": (modern, "dense"), "position": (modern, "learned"), "position_offset": (p["roberta-base"], 3),
        "position_buckets": (p["deberta-v3-base"], 128), "norm": (modern, "rmsnorm"), "norm_bias": (modern, True),
        "norm_placement": (p["nomic-bert-2048"], "pre"), "embedding_norm": (modern, False),
        "first_layer_norm": (modern, True), "attention_bias": (modern, True), "mlp_bias": (modern, True),
        "num_kv_heads": (modern, 4), "local_window": (modern, 256), "global_every": (modern, 2),
        "pooler": (p["roberta-base"], False), "head_transform": (modern, False), "head_bias": (p["roberta-base"], False),
        "decoder_bias": (modern, False), "rope_theta": (modern, 10_000.0), "local_rope_theta": (modern, 20_000.0),
        "projection_bias": (p["electra-small-discriminator"], False), "norm_after_projection": (modern, True),
        "separate_decoder_bias": (modern, True), "head_act": (modern, "gelu"), "always_project": (modern, True),
    }
    assert set(axis_changes) == set(AXIS_FIELDS)
    for name, (base, value) in axis_changes.items():
        other = base.replace(**{name: value})
        assert other != base
        assert state.CONFIG_HASH_FUNCS[ModelConfig](other) != state.CONFIG_HASH_FUNCS[ModelConfig](base), name
