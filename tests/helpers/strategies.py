"""Hypothesis strategies shared by the tests."""

from __future__ import annotations

from hypothesis import strategies as st

from albert_core import ACTIVATIONS, HEADS, SHARING_MODES, ModelConfig


@st.composite
def configs(draw, family: str | None = None, sharing=SHARING_MODES, max_width: int = 16) -> ModelConfig:
    """Small valid configs: both families (unless ``family``), the given ALBERT sharing modes, every
    head, activation, G, K and tying. Sizes stay tiny so models build and run in milliseconds."""
    family = family or draw(st.sampled_from(["albert", "bert"]))
    heads = draw(st.integers(1, 4))
    layers = draw(st.integers(1, 6))
    albert = family == "albert"
    return ModelConfig(
        family=family,
        vocab_size=draw(st.integers(1, 500)),
        embedding_size=draw(st.integers(1, 4 * max_width)),
        hidden_size=heads * draw(st.integers(1, max_width)),
        num_layers=layers,
        num_heads=heads,
        intermediate_size=draw(st.integers(1, 8 * max_width)),
        max_position_embeddings=draw(st.integers(1, 64)),
        type_vocab_size=draw(st.integers(1, 4)),
        hidden_act=draw(st.sampled_from(ACTIVATIONS)),
        sharing=draw(st.sampled_from(sharing)) if albert else "none",
        num_hidden_groups=draw(st.integers(1, layers)) if albert else 1,
        inner_group_num=draw(st.integers(1, 3)) if albert else 1,
        head=draw(st.sampled_from(HEADS)),
        tie_word_embeddings=draw(st.booleans()),
        layer_norm_eps=draw(st.sampled_from([1e-12, 1e-6, 1e-5])),
    )
