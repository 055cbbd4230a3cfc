"""The one facts module: the reference figures and closed forms the tests hold as independent oracles, from
the project's reference facts (transformers 5.24's exact counts, the ALBERT paper's printed figures and
shapes, the published configs and closed forms), written here, never computed by the code under test."""

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

# AlbertModel parameters of ALBERT-base (E = 128, V = 30,000) in each sharing mode (the paper's Table 4 rows),
# transformers' exact counts ("all" is albert-base itself).
SHARING_COUNTS = {"none": 89_650_176, "all": 11_683_584, "attention": 63_647_232, "ffn": 37_686_528}

# The paper (Lan et al. 2020, arXiv 1909.11942v6), V = 30,000 in every experiment.
# Table 1's shapes (+ heads / intermediate from its text): (family, V, E, L, H, heads, I, sharing); BERT at
# its own V = 30,522, as the presets hold it.
PAPER_SHAPES = {
    "bert-base": ("bert", 30_522, 768, 12, 768, 12, 3072, "none"),
    "bert-large": ("bert", 30_522, 1024, 24, 1024, 16, 4096, "none"),
    "albert-base": ("albert", 30_000, 128, 12, 768, 12, 3072, "all"),
    "albert-large": ("albert", 30_000, 128, 24, 1024, 16, 4096, "all"),
    "albert-xlarge": ("albert", 30_000, 128, 24, 2048, 16, 8192, "all"),
    "albert-xxlarge": ("albert", 30_000, 128, 12, 4096, 64, 16384, "all"),
}
# Table 1's printed parameter counts, in millions.
PAPER_TABLE1 = {
    "bert-base": 108, "bert-large": 334,
    "albert-base": 12, "albert-large": 18, "albert-xlarge": 60, "albert-xxlarge": 235,
}  # fmt: skip
# Table 3 (effect of E) and Table 4 (sharing) for ALBERT-base: (sharing, E) -> printed millions.
PAPER_TABLES_3_4 = {
    ("none", 64): 87, ("none", 128): 89, ("none", 256): 93, ("none", 768): 108,
    ("all", 64): 10, ("all", 128): 12, ("all", 256): 16, ("all", 768): 31,
    ("attention", 768): 83, ("ffn", 768): 57, ("attention", 128): 64, ("ffn", 128): 38,
}  # fmt: skip
# Table 12 (3-layer all-shared ALBERT-large, heads H/64, intermediate 4H): H -> printed millions.
PAPER_TABLE12 = {1024: 18, 2048: 60, 4096: 225, 6144: 499}

# Seed 000_*'s printed embedding table (shared/seeds/000_*), V = 30,522, E = 128: BERT-base's V*H, the
# factorized V*E + E*H (no projection bias) at each ALBERT H with its printed reduction, and its baseline row
# "BERT-Base 24,030,720, -2.5%" (V*H + H*H: the factorized formula at E = H).
SEED_000_STANDARD = 23_440_896
SEED_000_FACTORIZED = {768: 4_005_120, 1024: 4_037_888, 2048: 4_168_960, 4096: 4_431_104}
SEED_000_REDUCTION = {768: "82.9%", 1024: "87.1%", 2048: "93.3%", 4096: "96.5%"}
SEED_000_BASELINE_ROW = 24_030_720

# transformers' class for each (family, head), written from its documentation.
HF_CLASS_NAMES = {
    ("albert", "model"): "AlbertModel",
    ("albert", "pretraining"): "AlbertForPreTraining",
    ("albert", "masked-lm"): "AlbertForMaskedLM",
    ("bert", "model"): "BertModel",
    ("bert", "pretraining"): "BertForPreTraining",
    ("bert", "masked-lm"): "BertForMaskedLM",
    # the encoders since BERT (transformers 5.24's class names, from its documentation)
    ("roberta", "model"): "RobertaModel",
    ("roberta", "masked-lm"): "RobertaForMaskedLM",
    ("xlm-roberta", "model"): "XLMRobertaModel",
    ("xlm-roberta", "masked-lm"): "XLMRobertaForMaskedLM",
    ("electra", "model"): "ElectraModel",
    ("electra", "masked-lm"): "ElectraForMaskedLM",
    ("electra", "discriminator"): "ElectraForPreTraining",
    ("deberta-v2", "model"): "DebertaV2Model",
    ("deberta-v2", "masked-lm"): "DebertaV2ForMaskedLM",
    ("modernbert", "model"): "ModernBertModel",
    ("modernbert", "masked-lm"): "ModernBertForMaskedLM",
    ("eurobert", "model"): "EuroBertModel",
    ("eurobert", "masked-lm"): "EuroBertForMaskedLM",
    ("nomic_bert", "model"): "NomicBertModel",
    ("nomic_bert", "masked-lm"): "NomicBertForMaskedLM",
}

# The published transformers config.json of ALBERT v1 / v2 base, large, xlarge and xxlarge (architectures
# AlbertForMaskedLM). v1 uses dropout 0.1 except xxlarge (0); v2 uses 0 everywhere.
OFFICIAL_SIZES = {
    "base": dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, num_hidden_layers=12),
    "large": dict(hidden_size=1024, intermediate_size=4096, num_attention_heads=16, num_hidden_layers=24),
    "xlarge": dict(hidden_size=2048, intermediate_size=8192, num_attention_heads=16, num_hidden_layers=24),
    "xxlarge": dict(hidden_size=4096, intermediate_size=16384, num_attention_heads=64, num_hidden_layers=12),
}


def official(version: str, size: str) -> dict:
    """The published config.json of ALBERT ``version`` ("v1" or "v2") at ``size`` (an OFFICIAL_SIZES key)."""
    dropout = 0.1 if version == "v1" and size != "xxlarge" else 0
    return {
        "architectures": ["AlbertForMaskedLM"],
        "model_type": "albert",
        "attention_probs_dropout_prob": dropout,
        "hidden_dropout_prob": dropout,
        "classifier_dropout_prob": 0.1,
        "hidden_act": "gelu" if version == "v1" else "gelu_new",
        "embedding_size": 128,
        "vocab_size": 30000,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        "num_hidden_groups": 1,
        "inner_group_num": 1,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "bos_token_id": 2,
        "eos_token_id": 3,
        "pad_token_id": 0,
        "down_scale_factor": 1,
        "gap_size": 0,
        "net_structure_type": 0,
        "num_memory_blocks": 0,
        **OFFICIAL_SIZES[size],
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
