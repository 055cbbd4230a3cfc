"""The one strict reader of config.json (issue 39, items 4 and 5): every key's type and range checked before any value
is used, one ValueError naming the key and its rule, and the files as published read as transformers (or the file's
own config class) reads them. The published files below are written out by hand from the model repositories; the
oracle for every count is transformers' own model of the same configuration on the meta device."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from albert_core import count_params
from albert_core.configuration.hf_config import config_from_hf, config_from_json_bytes, parse_config_json
from albert_core.review.doctor import diagnose

# ----------------------------------------------------------------------------- published files
# microsoft/deberta-v3-base config.json (as published: no architectures key, pos_att_type as one string)
DEBERTA_V3_BASE = {
    "model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 512,
    "relative_attention": True, "position_buckets": 256, "norm_rel_ebd": "layer_norm", "share_att_key": True,
    "pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7, "max_relative_positions": -1, "position_biased_input": False,
    "num_attention_heads": 12, "num_hidden_layers": 12, "type_vocab_size": 0, "vocab_size": 128100,
}
# nomic-ai/nomic-bert-2048 config.json (nomic's own GPT2Config-based class: GPT-2-style size keys)
NOMIC_BERT_2048 = {
    "activation_function": "swiglu", "architectures": ["NomicBertForPreTraining"], "attn_pdrop": 0.0,
    "auto_map": {"AutoConfig": "configuration_hf_nomic_bert.NomicBertConfig",
                 "AutoModelForMaskedLM": "modeling_hf_nomic_bert.NomicBertForPreTraining"},
    "bos_token_id": None, "causal": False, "dense_seq_output": True, "embd_pdrop": 0.1, "eos_token_id": None,
    "fused_bias_fc": True, "fused_dropout_add_ln": True, "initializer_range": 0.02, "layer_norm_epsilon": 1e-12,
    "mlp_fc1_bias": False, "mlp_fc2_bias": False, "model_type": "nomic_bert", "n_embd": 768, "n_head": 12,
    "n_inner": 3072, "n_layer": 12, "n_positions": 2048, "pad_vocab_size_multiple": 64, "parallel_block": False,
    "parallel_block_tied_norm": False, "prenorm": False, "qkv_proj_bias": False, "reorder_and_upcast_attn": False,
    "resid_pdrop": 0.1, "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": False,
    "rotary_emb_scale_base": None, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
    "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
    "summary_type": "cls_index", "summary_use_proj": True, "torch_dtype": "float32", "transformers_version": "4.34.0",
    "type_vocab_size": 2, "use_cache": True, "use_flash_attn": True, "use_rms_norm": False, "use_xentropy": True,
    "vocab_size": 30528,
}
# the same layout 512 wide, 6 layers (the file), as a bare encoder
NOMIC_SMALL = NOMIC_BERT_2048 | {"n_embd": 512, "n_head": 8, "n_inner": 1536, "n_layer": 6,
                                 "architectures": ["NomicBertModel"]}


def _transformers_total(cls_name: str, **config) -> int:
    """Parameters of transformers' model of ``config`` (built on the meta device: nothing allocated)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    conf = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        model = getattr(transformers, cls_name)(conf)
    return sum(p.numel() for p in model.parameters())


# ----------------------------------------------------------------------------- item 4: used before it is checked
HOSTILE = [  # (file, the key the message must name)
    ({"model_type": ["albert"]}, "model_type"),
    (DEBERTA_V3_BASE | {"pos_att_type": [None, None]}, "pos_att_type"),
    ({"model_type": "eurobert", "head_dim": {}}, "head_dim"),
    ({"model_type": "nomic_bert", "head_dim": {}}, "head_dim"),
    ({"model_type": "eurobert", "head_dim": "x" * 1000, "num_attention_heads": 1024}, "head_dim"),
    ({"model_type": "nomic_bert", "head_dim": "x" * 19_000, "hidden_size": 30_000,
      "num_attention_heads": 30_000}, "num_attention_heads"),
    ({"model_type": "albert", "num_attention_heads": 7, "hidden_size": 10**17}, "hidden_size"),
    ({"model_type": "modernbert", "layer_types": {"a": 1}}, "layer_types"),
    ({"model_type": "modernbert", "rope_parameters": {"full_attention": []}}, "rope_parameters"),
    ({"model_type": "roberta", "pad_token_id": "1"}, "pad_token_id"),
    ({"model_type": "albert", "architectures": [{"x": 1}]}, "architectures"),
    ({"model_type": "eurobert", "num_key_value_heads": [4]}, "num_key_value_heads"),
]


def _refusal(raw: bytes) -> str:
    """What the reader says of ``raw`` (a ValueError expected), and what the doctor says: the same key named."""
    with pytest.raises(ValueError) as err:
        config_from_json_bytes(raw, "upload")
    try:
        result = diagnose(raw)
    except ValueError as exc:  # the doctor refuses a file that is no config of a family read here
        assert "model_type" in str(exc)
    else:  # ... and gives a config with a bad key one error finding naming it
        assert result.config is None and [f.code for f in result.findings if f.severity == "error"][-1] == "invalid"
        assert str(err.value) in next(f.what for f in result.findings if f.code == "invalid")
    return str(err.value)


def _peak_above_parse(raw: bytes, read) -> int:
    """Bytes the Python heap peaked at while ``read(raw)`` ran, beyond the peak of parsing ``raw`` alone."""
    tracemalloc.start()
    try:
        parse_config_json(raw)
        _, parse_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        read(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - parse_peak


@pytest.mark.parametrize("data, key", HOSTILE, ids=[k for _, k in HOSTILE])
def test_a_wrong_type_is_one_value_error_naming_the_key(data, key):
    raw = json.dumps(data).encode()
    said = _refusal(raw)
    assert said.startswith(key) and " must " in said, said
    assert len(said) < 400  # an excerpt of the value, never the value
    with pytest.raises(ValueError, match=key):
        config_from_hf(data)  # a dict (the CLI's and a folder's path): the same reader
    assert _peak_above_parse(raw, _refusal) < 2 * 2**20


def test_a_head_dim_string_is_refused_before_it_is_multiplied():
    """issue 39: a head_dim string was multiplied by num_attention_heads before any check (0.9 MB -> +660 MiB)."""
    raw = json.dumps({"model_type": "eurobert", "head_dim": "x" * 900_000, "num_attention_heads": 1024,
                      "hidden_size": 1024}).encode()
    assert _refusal(raw).startswith("head_dim must be a whole number")
    assert _peak_above_parse(raw, _refusal) < 2 * 2**20


# ----------------------------------------------------------------------------- item 5: real files read right
def test_deberta_v3_writes_pos_att_type_as_one_string():
    cfg = config_from_hf(DEBERTA_V3_BASE)
    assert (cfg.hidden_size, cfg.num_layers, cfg.position_buckets, cfg.vocab_size) == (768, 12, 256, 128100)
    assert count_params(cfg).total == _transformers_total("DebertaV2Model", **DEBERTA_V3_BASE)
    # transformers lower-cases and strips each part
    assert config_from_hf(DEBERTA_V3_BASE | {"pos_att_type": "C2P | p2c"}) == cfg
    with pytest.raises(ValueError, match="pos_att_type must be"):
        config_from_hf(DEBERTA_V3_BASE | {"pos_att_type": "p2c"})  # one disentangled term: not modelled


def test_deberta_without_position_buckets_is_refused_with_the_reason():
    """transformers' -1 (the key absent) means raw relative positions, not log buckets: refused, not mis-built."""
    data = {k: v for k, v in DEBERTA_V3_BASE.items() if k != "position_buckets"}
    for bad in (data, data | {"position_buckets": -1}, data | {"position_buckets": 0}):
        with pytest.raises(ValueError, match="position_buckets must be .*raw relative positions"):
            config_from_hf(bad)


@pytest.mark.parametrize("data, want", [
    (NOMIC_BERT_2048, dict(hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072,
                           max_position_embeddings=2048, layer_norm_eps=1e-12, rope_theta=1000.0, head="masked-lm")),
    (NOMIC_SMALL, dict(hidden_size=512, num_layers=6, num_heads=8, intermediate_size=1536,
                       max_position_embeddings=2048, layer_norm_eps=1e-12, rope_theta=1000.0, head="model")),
], ids=["nomic-bert-2048", "512-wide-6-layers"])
def test_nomic_gpt2_style_keys_are_read(data, want):
    cfg = config_from_hf(data)
    assert {k: getattr(cfg, k) for k in want} == want
    assert cfg.hidden_act == "silu" and cfg.ffn_kind == "glu" and cfg.vocab_size == 30528
    cls = "NomicBertForMaskedLM" if want["head"] == "masked-lm" else "NomicBertModel"
    assert count_params(cfg).total == _transformers_total(
        cls, model_type="nomic_bert", vocab_size=30528, hidden_size=want["hidden_size"],
        num_hidden_layers=want["num_layers"], num_attention_heads=want["num_heads"],
        intermediate_size=want["intermediate_size"], max_position_embeddings=2048, layer_norm_eps=1e-12,
        hidden_act="silu", type_vocab_size=2, rope_parameters={"rope_type": "default", "rope_theta": 1000.0})


# ----------------------------------------------------------------------------- transformers 4 and 5 spellings
# answerdotai/ModernBERT-base config.json (written by transformers 4.47: rotary bases as global/local_rope_theta)
MODERNBERT_BASE = {
    "architectures": ["ModernBertForMaskedLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 50281, "classifier_activation": "gelu", "classifier_bias": False, "classifier_dropout": 0.0,
    "classifier_pooling": "mean", "cls_token_id": 50281, "decoder_bias": True, "deterministic_flash_attn": False,
    "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
    "gradient_checkpointing": False, "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
    "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05, "local_attention": 128,
    "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": False, "mlp_dropout": 0.0,
    "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 12,
    "num_hidden_layers": 22, "pad_token_id": 50283, "position_embedding_type": "absolute", "sep_token_id": 50282,
    "tie_word_embeddings": True, "torch_dtype": "float32", "transformers_version": "4.47.0.dev0", "vocab_size": 50368,
}
# EuroBERT/EuroBERT-210m config.json (transformers 4: rope_theta and rope_scaling beside each other)
EUROBERT_210M = {
    "architectures": ["EuroBertForMaskedLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu", "hidden_size": 768,
    "initializer_range": 0.02, "intermediate_size": 3072, "mask_token_id": 128002, "max_position_embeddings": 8192,
    "mlp_bias": False, "model_type": "eurobert", "num_attention_heads": 12, "num_hidden_layers": 12,
    "num_key_value_heads": 12, "pad_token_id": 128001, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "rope_theta": 250000, "tie_word_embeddings": False, "torch_dtype": "float32",
    "transformers_version": "4.48.0", "use_cache": False, "vocab_size": 128256,
}


@pytest.mark.parametrize("data, cls", [(MODERNBERT_BASE, "ModernBertForMaskedLM"),
                                       (EUROBERT_210M, "EuroBertForMaskedLM")], ids=["modernbert", "eurobert"])
def test_transformers_4_and_5_spellings_read_alike(data, cls):
    """The file as transformers 4 wrote it, and as transformers 5 rewrites it (its own config class's to_dict: rotary
    bases moved into rope_parameters, layer_types written out): one config, transformers' count."""
    transformers = pytest.importorskip("transformers")
    rewritten = getattr(transformers, cls.replace("ForMaskedLM", "Config"))(**data).to_dict()
    assert "rope_parameters" in rewritten and "rope_theta" not in rewritten
    cfg = config_from_hf(data)
    assert config_from_hf(rewritten) == cfg
    assert count_params(cfg).total == _transformers_total(cls, **rewritten)
    if cfg.family == "modernbert":
        assert (cfg.rope_theta, cfg.local_rope_theta, cfg.local_window, cfg.global_every) == (160000.0, 10000.0, 128, 3)
    else:
        assert cfg.rope_theta == 250000.0 and cfg.num_kv_heads == 0


def test_nomic_in_transformers_5_keys_is_the_same_model():
    """The transformers 5 spelling of nomic-bert-2048 (NomicBertConfig's keys) and nomic's own GPT-2-style file."""
    native = {"model_type": "nomic_bert", "architectures": ["NomicBertForMaskedLM"], "vocab_size": 30528,
              "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
              "max_position_embeddings": 2048, "layer_norm_eps": 1e-12, "hidden_act": "silu", "type_vocab_size": 2,
              "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0}}
    assert config_from_hf(native) == config_from_hf(NOMIC_BERT_2048)
    # both spellings in one file (nomic's updated files): the transformers key is the one both classes end up with
    # (GPT2Config's attribute_map sets n_positions from max_position_embeddings after reading n_positions)
    both = NOMIC_BERT_2048 | {"n_positions": 8192, "max_position_embeddings": 2048,
                              "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0}}
    assert config_from_hf(both).max_position_embeddings == 2048


REFUSED = [  # (file, the message's start): keys that would change a size or the outputs, not modelled
    (NOMIC_BERT_2048 | {"qkv_proj_bias": True}, "qkv_proj_bias must be false"),
    (NOMIC_BERT_2048 | {"mlp_fc1_bias": True}, "mlp_fc1_bias must be false"),
    (NOMIC_BERT_2048 | {"prenorm": True}, "prenorm must be false"),
    (NOMIC_BERT_2048 | {"rotary_emb_fraction": 0.5}, "rotary_emb_fraction must be 1.0"),
    ({k: v for k, v in NOMIC_BERT_2048.items() if k != "rotary_emb_fraction"}, "rotary_emb_fraction must be 1.0"),
    (NOMIC_BERT_2048 | {"activation_function": "gelu"}, "activation_function must be one of 'swiglu', 'geglu'"),
    (NOMIC_BERT_2048 | {"n_inner": 1000}, "n_inner must be a multiple of 256 (nomic's code rounds its gated FFN up to "
                                          "one: this file builds 1,024"),
    (NOMIC_BERT_2048 | {"vocab_size": 30522}, "vocab_size (30,522) must be a multiple of pad_vocab_size_multiple (64)"),
    (NOMIC_BERT_2048 | {"intermediate_size": 2048}, "n_inner (3072) and intermediate_size (2048) disagree"),
    (NOMIC_BERT_2048 | {"rotary_scaling_factor": 2.0}, "rotary_scaling_factor must be null"),
    ({"model_type": "bert", "add_cross_attention": True}, "add_cross_attention must be false"),
    ({"model_type": "roberta", "is_decoder": True}, "is_decoder must be false"),
    ({"model_type": "eurobert", "rope_scaling": {"type": "linear", "factor": 2.0}}, "rope_scaling.type must be 'default'"),
    ({"model_type": "eurobert", "rope_parameters": {"rope_type": "yarn"}}, "rope_parameters.rope_type must be 'default'"),
    ({"model_type": "eurobert", "partial_rotary_factor": 0.5}, "partial_rotary_factor must be null or 1.0"),
    ({"model_type": "modernbert", "rope_parameters": {"rope_theta": 1e4}}, "rope_parameters (its keys) must be"),
    (DEBERTA_V3_BASE | {"attention_head_size": 32}, "attention_head_size (32) must be hidden_size / num_attention_heads"),
    (DEBERTA_V3_BASE | {"conv_kernel_size": 3}, "conv_kernel_size must be 0 or null"),
    ({k: v for k, v in DEBERTA_V3_BASE.items() if k != "share_att_key"}, "share_att_key must be true"),
]


@pytest.mark.parametrize("data, says", REFUSED, ids=[s.split(" must")[0].split(" (")[0] for _, s in REFUSED])
def test_keys_that_change_a_size_and_are_not_modelled_are_refused_by_name(data, says):
    with pytest.raises(ValueError) as err:
        config_from_hf(data)
    assert str(err.value).startswith(says), str(err.value)
