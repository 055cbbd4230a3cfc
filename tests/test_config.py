"""ModelConfig, presets, Workload and the transformers config.json codec (the URL codec: tests/test_urls.py).

Oracles: the paper's Table 1 shapes, transformers' own AlbertConfig / BertConfig and the models they
build (tiny, on the meta device), and round trips through files written by transformers.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings

from albert_core import PRESETS, ModelConfig, Workload
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.config import LIMITS
from albert_core.configuration.hf_config import config_from_hf, config_to_hf
from albert_core.configuration.presets import preset
from tests.helpers.facts import PAPER_SHAPES
from tests.helpers.strategies import configs

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")


def exportable(family: str | None = None):
    return configs(family).filter(lambda c: c.sharing in ("none", "all"))


def as_transformers(cfg: ModelConfig) -> ModelConfig:
    """transformers' ALBERT has no "none" mode: an unshared ALBERT is all-shared with G = L."""
    if cfg.family == "albert" and cfg.sharing == "none":
        return cfg.replace(sharing="all", num_hidden_groups=cfg.num_layers)
    return cfg


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "changes, field",
    [
        ({"family": "gpt"}, "family"),
        ({"family": None}, "family"),
        ({"sharing": "some"}, "sharing"),
        ({"head": "classifier"}, "head"),
        ({"hidden_act": "swish"}, "hidden_act"),
        ({"vocab_size": 0}, "vocab_size"),
        ({"vocab_size": -5}, "vocab_size"),
        ({"vocab_size": 10**9}, "vocab_size"),
        ({"embedding_size": 0}, "embedding_size"),
        ({"hidden_size": 768.0}, "hidden_size"),
        ({"hidden_size": "768"}, "hidden_size"),
        ({"hidden_size": True}, "hidden_size"),
        ({"num_layers": 0}, "num_layers"),
        ({"num_layers": 513}, "num_layers"),
        ({"num_heads": 0}, "num_heads"),
        ({"intermediate_size": None}, "intermediate_size"),
        ({"max_position_embeddings": 0}, "max_position_embeddings"),
        ({"type_vocab_size": 0}, "type_vocab_size"),
        ({"num_hidden_groups": 0}, "num_hidden_groups"),
        ({"num_hidden_groups": 13}, "num_hidden_groups"),  # G outside 1..L (L = 12)
        ({"inner_group_num": 0}, "inner_group_num"),
        ({"tie_word_embeddings": 1}, "tie_word_embeddings"),
        ({"layer_norm_eps": 0.0}, "layer_norm_eps"),
        ({"layer_norm_eps": math.nan}, "layer_norm_eps"),
        ({"layer_norm_eps": "1e-12"}, "layer_norm_eps"),
        ({"hidden_size": 768, "num_heads": 7}, "num_heads"),  # H not divisible by heads
        ({"family": "bert", "sharing": "all"}, "sharing"),
        ({"family": "bert", "sharing": "none", "inner_group_num": 2}, "inner_group_num"),
    ],
)
def test_every_rule_raises_value_error_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        ModelConfig().replace(**changes)
    with pytest.raises(ValueError, match=field):
        ModelConfig(**{**ModelConfig().to_dict(), **changes})


def test_replace_rejects_unknown_fields_and_keeps_the_original():
    base = ModelConfig()
    with pytest.raises(ValueError, match="hiden_size"):
        base.replace(hiden_size=1024)
    bigger = base.replace(hidden_size=1024, num_heads=16)
    assert (bigger.hidden_size, bigger.num_heads) == (1024, 16)
    assert (base.hidden_size, base.num_heads) == (768, 12)
    with pytest.raises(dataclasses.FrozenInstanceError):  # no in-place change
        base.hidden_size = 1  # type: ignore[misc]


def test_bert_embeddings_live_at_the_hidden_size():
    cfg = ModelConfig(family="bert", sharing="none", embedding_size=64, hidden_size=256, num_heads=4)
    assert cfg.embedding_size == 256
    assert cfg.num_hidden_groups == 1


def test_from_dict_round_trip_and_rejections():
    cfg = ModelConfig(num_hidden_groups=3, inner_group_num=2, head="masked-lm", tie_word_embeddings=False)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="bogus"):
        ModelConfig.from_dict({**cfg.to_dict(), "bogus": 1})
    with pytest.raises(ValueError, match="mapping"):
        ModelConfig.from_dict([("hidden_size", 768)])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- presets
# The paper's Table 1 shapes (tests/helpers/facts.py).
def test_presets_are_the_papers_shapes():
    assert set(PRESETS) == set(PAPER_SHAPES)
    for name, shape in PAPER_SHAPES.items():
        cfg = PRESETS[name]
        assert cfg is PRESETS[name]
        got = (cfg.family, cfg.vocab_size, cfg.embedding_size, cfg.num_layers, cfg.hidden_size,
               cfg.num_heads, cfg.intermediate_size, cfg.sharing)
        assert got == shape, name
        assert (cfg.max_position_embeddings, cfg.type_vocab_size, cfg.num_hidden_groups) == (512, 2, 1)


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match="preset.*albert-base"):
        preset("albert-huge")


def test_presets_match_transformers_defaults_where_they_coincide():
    # transformers' AlbertConfig() is ALBERT-xxlarge and BertConfig() is BERT-base.
    assert config_from_hf(transformers.AlbertConfig()) == PRESETS["albert-xxlarge"]
    assert config_from_hf(transformers.BertConfig()) == PRESETS["bert-base"]


def test_bert_twin_is_the_papers_bert_of_the_same_shape():
    cfg = ModelConfig(embedding_size=64, num_hidden_groups=3, inner_group_num=2, sharing="ffn",
                      head="pretraining", tie_word_embeddings=False, hidden_act="relu")
    twin = bert_twin(cfg)
    assert twin.family == "bert" and twin.sharing == "none" and twin.hidden_act == "gelu"  # BERT's GELU
    assert (twin.embedding_size, twin.num_hidden_groups, twin.inner_group_num) == (cfg.hidden_size, 1, 1)
    for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size", "head", "tie_word_embeddings"):
        assert getattr(twin, name) == getattr(cfg, name), name
    # ALBERT-base's twin is bert-base at ALBERT's vocabulary, with bert-base's own activation.
    assert bert_twin(PRESETS["albert-base"]) == PRESETS["bert-base"].replace(vocab_size=30_000)
    assert bert_twin(PRESETS["bert-large"].replace(hidden_act="relu")).hidden_act == "relu"  # a BERT is its own


def test_group_of_layer_follows_transformers_rule():
    # transformers: group_idx = int(i / (num_hidden_layers / num_hidden_groups))
    for layers in range(1, 13):
        for groups in range(1, layers + 1):
            cfg = ModelConfig(num_layers=layers, num_hidden_groups=groups)
            got = [cfg.group_of_layer(i) for i in range(layers)]
            assert got == [int(i / (layers / groups)) for i in range(layers)]
            assert sorted(set(got)) == list(range(groups))  # every group is used


# ----------------------------------------------------------------------------- transformers codec
def _hf_class(cfg: ModelConfig):
    return transformers.AlbertConfig if cfg.family == "albert" else transformers.BertConfig


@settings(max_examples=40, deadline=None)
@given(exportable())
def test_to_hf_from_hf_round_trip_through_dict_and_config_object(cfg):
    data = config_to_hf(cfg)
    json.dumps(data)  # a real config.json: plain JSON values only
    hf = _hf_class(cfg)(**data)
    want = as_transformers(cfg)
    assert config_from_hf(data) == want
    assert config_from_hf(hf) == want
    assert config_from_hf(hf.to_dict()) == want
    assert config_from_hf(config_to_hf(want)) == want


@settings(max_examples=8, deadline=None)
@given(exportable())
def test_round_trip_through_a_saved_config_json(tmp_path_factory, cfg):
    folder = tmp_path_factory.mktemp("hf")
    _hf_class(cfg)(**config_to_hf(cfg)).save_pretrained(folder)
    assert config_from_hf(folder / "config.json") == as_transformers(cfg)
    assert config_from_hf(str(folder)) == as_transformers(cfg)  # a folder holding config.json


@pytest.mark.parametrize("head, cls", [("model", "Model"), ("pretraining", "ForPreTraining"),
                                       ("masked-lm", "ForMaskedLM")])
@pytest.mark.parametrize("family", ["albert", "bert"])
def test_to_hf_builds_the_same_architecture_in_transformers(family, head, cls):
    cfg = ModelConfig(family=family, vocab_size=50, embedding_size=6, hidden_size=16, num_layers=4,
                      num_heads=2, intermediate_size=24, max_position_embeddings=20, type_vocab_size=3,
                      sharing="all" if family == "albert" else "none",
                      num_hidden_groups=2 if family == "albert" else 1,
                      inner_group_num=3 if family == "albert" else 1, head=head, tie_word_embeddings=False)
    data = config_to_hf(cfg)
    prefix = "Albert" if family == "albert" else "Bert"
    assert data["architectures"] == [prefix + cls]
    with torch.device("meta"):
        model = getattr(transformers, prefix + cls)(_hf_class(cfg)(**data))
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    word = next(s for n, s in shapes.items() if n.endswith("embeddings.word_embeddings.weight"))
    assert word == (cfg.vocab_size, cfg.embedding_size)
    pos = next(s for n, s in shapes.items() if n.endswith("position_embeddings.weight"))
    assert pos == (cfg.max_position_embeddings, cfg.embedding_size)
    if family == "albert":
        assert model.config.num_hidden_groups == 2
        groups = {n.split("albert_layer_groups.")[1].split(".")[0] for n in shapes if "albert_layer_groups" in n}
        inner = {n.split("albert_layers.")[1].split(".")[0] for n in shapes if "albert_layers" in n}
        assert (len(groups), len(inner)) == (2, 3)
    has_decoder = any(n.endswith("decoder.weight") for n in shapes)
    assert has_decoder == (head != "model")  # untied: the decoder is its own parameter
    assert config_from_hf(model.config) == cfg  # head inferred from architectures


def test_from_hf_explicit_head_and_bert_ignores_albert_keys():
    data = config_to_hf(PRESETS["bert-base"])
    assert config_from_hf(data, head="masked-lm").head == "masked-lm"
    assert config_from_hf({**data, "embedding_size": 64, "num_hidden_groups": 3}) == PRESETS["bert-base"]


@pytest.mark.parametrize("sharing", ["attention", "ffn"])
def test_partial_sharing_cannot_be_exported(sharing):
    with pytest.raises(ValueError, match="sharing"):
        config_to_hf(ModelConfig(sharing=sharing))


@pytest.mark.parametrize(
    "data, field",
    [
        ({"model_type": "gpt2"}, "model_type"),
        ({}, "model_type"),
        ({"model_type": "albert", "hidden_size": "big"}, "hidden_size"),
        ({"model_type": "bert", "hidden_size": "big"}, "hidden_size"),
        ({"model_type": "albert", "num_hidden_groups": 40}, "num_hidden_groups"),
        ({"model_type": "albert", "hidden_act": "silu"}, "hidden_act"),
        ({"model_type": "bert", "position_embedding_type": "relative_key"}, "position_embedding_type"),
        ({"model_type": "albert", "layer_norm_eps": None}, "layer_norm_eps"),
        ({"model_type": "albert", "layer_norm_eps": [1e-12]}, "layer_norm_eps"),
        ({"model_type": "albert", "layer_norm_eps": 10**400}, "layer_norm_eps"),
    ],
)
def test_from_hf_rejects_bad_configs_naming_the_field(data, field):
    with pytest.raises(ValueError, match=field):
        config_from_hf(data)


def test_from_hf_rejects_bad_files(tmp_path):
    with pytest.raises(ValueError, match="config"):
        config_from_hf(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="config"):
        config_from_hf(tmp_path)  # a folder without config.json
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="JSON"):
        config_from_hf(bad)
    bad.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="JSON"):
        config_from_hf(bad)
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="object"):
        config_from_hf(bad)
    with pytest.raises(ValueError, match="source"):
        config_from_hf(42)


def test_workload_validation():
    with pytest.raises(ValueError, match="batch"):
        Workload(batch=0)
    with pytest.raises(ValueError, match="seq_len"):
        Workload(seq_len=10**6)
    with pytest.raises(ValueError, match="dtype"):
        Workload(dtype="fp8")
    with pytest.raises(ValueError, match="optimizer"):
        Workload(optimizer="lion")
    with pytest.raises(ValueError, match="seq_len"):
        Workload(seq_len=1024).check_fits(ModelConfig())


def test_limits_cover_every_integer_field():
    ints = {f for f, v in ModelConfig().to_dict().items() if isinstance(v, int) and not isinstance(v, bool)}
    assert ints == set(LIMITS)
