"""Oracle figures and closed forms shared by the tests, from the project's reference facts (transformers
5.24's exact counts and the published closed forms), never computed by the code under test."""

from albert_core import ModelConfig

# (XModel, XForPreTraining) parameters; ALBERT V=30,000, BERT V=30,522, P=512, T=2.
EXACT_COUNTS = {
    "albert-base": (11_683_584, 11_813_810),
    "albert-large": (17_683_968, 17_847_474),
    "albert-xlarge": (58_724_864, 59_021_490),
    "albert-xxlarge": (222_595_584, 223_158_450),
    "bert-base": (109_482_240, 110_106_428),
    "bert-large": (335_141_888, 336_226_108),
}
MODEL_COUNTS = {name: counts[0] for name, counts in EXACT_COUNTS.items()}

# transformers' class for each (family, head), written from its documentation.
HF_CLASS_NAMES = {
    ("albert", "model"): "AlbertModel",
    ("albert", "pretraining"): "AlbertForPreTraining",
    ("albert", "masked-lm"): "AlbertForMaskedLM",
    ("bert", "model"): "BertModel",
    ("bert", "pretraining"): "BertForPreTraining",
    ("bert", "masked-lm"): "BertForMaskedLM",
}


def albert_model_closed_form(c: ModelConfig) -> int:
    V, E, H, P, T = c.vocab_size, c.embedding_size, c.hidden_size, c.max_position_embeddings, c.type_vocab_size
    I = c.intermediate_size  # noqa: E741 (the paper's notation)
    layer = 4 * H * H + 2 * H * I + 9 * H + I
    return (V + P + T) * E + 2 * E + (E * H + H) + c.num_hidden_groups * c.inner_group_num * layer + H * H + H


def forward_flops_closed_form(c: ModelConfig, B: int, S: int) -> int:
    """ALBERT XModel forward matmul FLOPs (the reference facts' closed form)."""
    E, H, I, L, K = c.embedding_size, c.hidden_size, c.intermediate_size, c.num_layers, c.inner_group_num  # noqa: E741
    return 2 * B * S * E * H + L * K * (8 * B * S * H * H + 4 * B * S * S * H + 4 * B * S * H * I) + 2 * B * H * H
