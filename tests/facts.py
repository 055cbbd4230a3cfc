"""Oracle figures shared by the tests, copied from ../shared/reference/albert-facts.md (transformers
5.24's exact counts), never computed by the code under test."""

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
