"""Hypothesis strategies for the encoder families after BERT: small configs of each family's own layout (what its
transformers class builds), and ALBERTized ones (E and sharing on any family)."""

from __future__ import annotations

from hypothesis import strategies as st

from albert_core import ModelConfig
from albert_core.configuration.hf_config import config_from_hf

NEW_FAMILIES = ("roberta", "xlm-roberta", "electra", "deberta-v2", "modernbert", "eurobert", "nomic_bert")
FAMILY_HEADS = {
    "roberta": ("model", "masked-lm"), "xlm-roberta": ("model", "masked-lm"),
    "electra": ("model", "masked-lm", "discriminator"), "deberta-v2": ("model", "masked-lm"),
    "modernbert": ("model", "masked-lm"), "eurobert": ("model", "masked-lm"), "nomic_bert": ("model", "masked-lm"),
}


@st.composite
def hf_family_dicts(draw, family: str | None = None, max_width: int = 8) -> dict:
    """A small config.json of one family, with that family's own keys drawn (biases, windows, kv heads...)."""
    family = family or draw(st.sampled_from(NEW_FAMILIES))
    heads = draw(st.integers(1, 4))
    head_dim = 2 * draw(st.integers(1, max_width))  # rotary needs an even head size
    hidden = heads * head_dim
    layers = draw(st.integers(1, 5))
    d = {
        "model_type": family, "vocab_size": draw(st.integers(8, 300)), "hidden_size": hidden,
        "num_hidden_layers": layers, "num_attention_heads": heads,
        "intermediate_size": draw(st.integers(1, 8 * max_width)),
        "max_position_embeddings": draw(st.integers(40, 80)), "tie_word_embeddings": draw(st.booleans()),
    }
    if family in ("roberta", "xlm-roberta", "electra", "deberta-v2", "nomic_bert"):
        d |= {"type_vocab_size": draw(st.integers(0 if family == "deberta-v2" else 1, 3)),
              "hidden_act": draw(st.sampled_from(["gelu", "relu", "gelu_new", "silu"]))}
    if family in ("roberta", "xlm-roberta"):
        d["pad_token_id"] = draw(st.integers(0, 3))
    if family in ("electra", "deberta-v2"):
        d["embedding_size"] = draw(st.integers(1, 4 * max_width))
    if family == "deberta-v2":
        d |= {"relative_attention": True, "position_biased_input": False, "pos_att_type": ["p2c", "c2p"],
              "share_att_key": True, "norm_rel_ebd": "layer_norm", "position_buckets": draw(st.integers(2, 32)),
              "max_relative_positions": -1, "legacy": True}
    if family == "modernbert":
        act = draw(st.sampled_from(["gelu", "silu", "relu"]))
        d |= {"hidden_activation": act, "classifier_activation": act, "norm_bias": draw(st.booleans()),
              "attention_bias": draw(st.booleans()), "mlp_bias": draw(st.booleans()),
              "classifier_bias": draw(st.booleans()), "decoder_bias": draw(st.booleans()),
              "local_attention": 2 * draw(st.integers(1, 12)),
              "global_attn_every_n_layers": draw(st.integers(1, layers)), "pad_token_id": 0, "bos_token_id": 1,
              "eos_token_id": 2, "cls_token_id": 1, "sep_token_id": 2}
        d["vocab_size"] = max(d["vocab_size"], 3)
    if family == "eurobert":
        kv = draw(st.sampled_from([k for k in range(1, heads + 1) if heads % k == 0]))
        d |= {"num_key_value_heads": kv, "head_dim": head_dim, "hidden_act": draw(st.sampled_from(["silu", "gelu"])),
              "attention_bias": draw(st.booleans()), "mlp_bias": draw(st.booleans()), "pad_token_id": 0,
              "bos_token_id": 1, "eos_token_id": 2, "mask_token_id": 3}
        d["vocab_size"] = max(d["vocab_size"], 4)
    return d


@st.composite
def family_configs(draw, family: str | None = None) -> ModelConfig:
    """A small config a transformers class of its family builds (head included)."""
    d = draw(hf_family_dicts(family))
    return config_from_hf(d, draw(st.sampled_from(FAMILY_HEADS[d["model_type"]])))


@st.composite
def albertized_configs(draw, family: str | None = None) -> ModelConfig:
    """A family config with ALBERT's ideas applied: a factorized E and/or cross-layer sharing (G groups, K blocks)."""
    cfg = draw(family_configs(family))
    sharing = draw(st.sampled_from(["none", "all", "attention", "ffn"]))
    layers = cfg.num_layers
    return cfg.replace(
        embedding_size=draw(st.integers(1, 2 * cfg.hidden_size)),
        sharing=sharing,
        num_hidden_groups=draw(st.integers(1, layers)) if sharing != "none" else 1,
        inner_group_num=draw(st.integers(1, 2)),
    )
