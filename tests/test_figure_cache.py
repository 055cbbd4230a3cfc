"""ui.state.cached_figure: one shared figure per distinct input, rebuilt when any input changes, bounded."""

from __future__ import annotations

import pytest

from albert_core import ModelConfig, count_params
from albert_core.counting.sweeps import sweep
from ui import figures_scaling as fs
from ui import state

WL = dict(batch=2, seq_len=64, dtype="fp32", optimizer="adamw")


@pytest.fixture(autouse=True)
def empty_cache():
    state._figure.cache_clear()
    yield
    state._figure.cache_clear()


def layers_inputs(cfg: ModelConfig):
    df = sweep(cfg, "num_layers", [1, 2, 4, 12, 24], **WL)
    return df, cfg, count_params(cfg).total


def star(fig):
    (point,) = [t for t in fig.data if t.name == fs.CURRENT_NAME]
    return point.x[0], point.y[0]


def test_equal_inputs_share_one_figure_even_when_rebuilt_separately():
    cfg = ModelConfig()
    first = state.cached_figure(fs.params_vs_layers_base, layers_inputs(cfg)[0])
    again = state.cached_figure(fs.params_vs_layers_base, layers_inputs(ModelConfig())[0])  # new, equal objects
    assert again is first


def test_a_changed_config_gives_a_changed_figure():
    cfg = ModelConfig()
    deeper = cfg.replace(num_layers=24, sharing="none")
    (df_a, _, total_a), (df_b, _, total_b) = layers_inputs(cfg), layers_inputs(deeper)
    a = fs.mark_params_vs_layers(state.cached_figure(fs.params_vs_layers_base, df_a), cfg, total_a)
    b = fs.mark_params_vs_layers(state.cached_figure(fs.params_vs_layers_base, df_b), deeper, total_b)
    assert star(a) == (cfg.num_layers, count_params(cfg).total)
    assert star(b) == (24, count_params(deeper).total)
    assert star(b) != star(a)


def test_a_changed_frame_value_alone_gives_a_changed_figure():
    df, _, _ = layers_inputs(ModelConfig())
    edited = df.copy()
    edited.loc[0, "params"] = 1  # same shape, one value differs
    a = state.cached_figure(fs.params_vs_layers_base, df)
    b = state.cached_figure(fs.params_vs_layers_base, edited)
    assert b is not a
    assert 1 in b.data[0].y or 1 in b.data[1].y


def test_builders_with_equal_inputs_do_not_share_a_figure():
    df = layers_inputs(ModelConfig())[0]  # a sweep has every config column: both builders can chart it
    a = state.cached_figure(fs.params_vs_layers_base, df)
    b = state.cached_figure(fs.params_vs_hidden_base, df)
    assert a is not b and a.to_plotly_json() != b.to_plotly_json()


def test_the_cache_is_bounded():
    """After FIGURE_CACHE_ENTRIES other entries the first one is evicted (built again: a new object).
    A cheap pure builder of ui/ stands in for a chart, so the test builds 257 values, not figures."""
    first = state.cached_figure(fs.linear_ticks, 1_000_000, fs.fmt_params)
    assert state.cached_figure(fs.linear_ticks, 1_000_000, fs.fmt_params) is first
    for i in range(state.FIGURE_CACHE_ENTRIES):
        state.cached_figure(fs.linear_ticks, 2_000_000 + i, fs.fmt_params)
    rebuilt = state.cached_figure(fs.linear_ticks, 1_000_000, fs.fmt_params)
    assert rebuilt is not first and rebuilt == first


def test_content_key_follows_every_kind_of_column_and_nothing_else():
    df = sweep(ModelConfig(), "num_layers", [1, 2, 4], **WL)  # numeric, categorical ("model") and more
    key = state.content_key((df,))
    assert state.content_key((df.copy(),)) == key
    renamed = df.rename(columns={"params": "parameters"})
    flipped = df.copy()
    flipped["model"] = flipped["model"].iloc[::-1].to_numpy()  # categorical values swapped between rows
    labelled = df.assign(label=["a", "b", "c", "d", "e", "f"][: len(df)])
    relabelled = labelled.copy()
    relabelled.loc[relabelled.index[0], "label"] = "z"
    keys = {key, *(state.content_key((f,)) for f in (renamed, flipped, labelled, relabelled))}
    assert len(keys) == 5
    assert state.content_key((df, 1)) != state.content_key((df, 2))
    assert state.content_key((ModelConfig(),)) != state.content_key((ModelConfig().replace(num_layers=3),))


def test_config_hash_keys_differ_in_every_field():
    """The caches key configs and workloads by repr (state.CONFIG_HASH_FUNCS): a change of any one field
    must change the key, or two configs would share a cached result."""
    import dataclasses

    from albert_core import Workload

    for obj, changed in ((ModelConfig(), dict(vocab_size=30_001, embedding_size=64, hidden_size=1536, num_heads=6,
                                              intermediate_size=4096, num_layers=13, num_hidden_groups=2,
                                              inner_group_num=2, max_position_embeddings=1024, type_vocab_size=3,
                                              sharing="ffn", head="masked-lm", tie_word_embeddings=False,
                                              hidden_act="relu", layer_norm_eps=1e-6)),
                         (Workload(dtype="fp16"), dict(batch=3, seq_len=64, dtype="bf16", optimizer="sgd",
                                                       precision="mixed", checkpointing=True))):
        names = {f.name for f in dataclasses.fields(obj)}
        assert names <= set(changed) | {"family"}, names - set(changed)
        keys = {state.CONFIG_HASH_FUNCS[type(obj)](obj)}
        for name in names & set(changed):
            other = obj.replace(**{name: changed[name]})
            assert other != obj
            keys.add(state.CONFIG_HASH_FUNCS[type(obj)](other))
        assert len(keys) == 1 + len(names & set(changed))
    bert = ModelConfig(family="bert", sharing="none")
    assert repr(bert) != repr(ModelConfig())


def test_a_frame_is_digested_once_while_it_lives(monkeypatch):
    df = sweep(ModelConfig(), "num_layers", [1, 2, 4], **WL)
    calls = []
    real = state._frame_parts
    monkeypatch.setattr(state, "_frame_parts", lambda frame: calls.append(1) or real(frame))
    key = state.content_key((df, 3))
    assert state.content_key((df, 3)) == key and len(calls) == 1  # the same object: its digest is kept
    assert state.content_key((df.copy(), 3)) == key and len(calls) == 2  # an equal frame: digested, same key
    frame_id = id(df)
    del df
    import gc

    gc.collect()
    assert frame_id not in state._FRAME_DIGESTS  # forgotten with the frame


def test_the_cache_lets_go_of_the_inputs_it_was_built_from():
    import weakref

    df = layers_inputs(ModelConfig())[0]
    alive = weakref.ref(df)
    state.cached_figure(fs.params_vs_layers_base, df)
    del df
    import gc

    gc.collect()
    assert alive() is None  # the cache holds the figure and a digest, not the frame
