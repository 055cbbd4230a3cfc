"""Reference figures printed elsewhere, kept once as data with their sources (never computed here).

The app shows each beside this project's exact count; the tests hold their own copies as oracles.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

PAPER = ("Lan et al., ALBERT: A Lite BERT for Self-supervised Learning of Language Representations, "
         "ICLR 2020 (arXiv 1909.11942v6)")
PAPER_VOCAB = 30_000  # the paper's V in every experiment

# Table 1: parameters per model, as printed (whole millions).
PAPER_TABLE1: Mapping[str, float] = MappingProxyType({
    "bert-base": 108e6, "bert-large": 334e6, "albert-base": 12e6, "albert-large": 18e6,
    "albert-xlarge": 60e6, "albert-xxlarge": 235e6,
})
# Table 2: training data throughput relative to BERT-large (ALBERT-large has the same H = 1024, L = 24).
# The paper (section 4.3): ALBERT models have higher data throughput "because of less communication and fewer
# computations"; at ALBERT-large's H and L the computations are nearly BERT-large's, so communication dominates.
PAPER_TABLE2_SPEEDUP: Mapping[str, float] = MappingProxyType({
    "bert-base": 4.7, "bert-large": 1.0, "albert-base": 5.6, "albert-large": 1.7,
    "albert-xlarge": 0.6, "albert-xxlarge": 0.3,
})
# Section 4.1: "Training was done on Cloud TPU V3. The number of TPUs used for training ranged from 64 to 512,
# depending on model size." (fewest, most)
PAPER_TPU_RANGE = (64, 512)
# Table 6, the same-training-time comparison ("What if we train for the same amount of time?", section 4.6):
# BERT-large and ALBERT-xxlarge trained for about the same wall-clock time on the same number of TPUs, at the
# batch 4,096 of every run.
PAPER_SAME_TIME: Mapping[str, Mapping[str, int]] = MappingProxyType({
    "bert-large": MappingProxyType({"steps": 400_000, "hours": 34}),
    "albert-xxlarge": MappingProxyType({"steps": 125_000, "hours": 32}),
})
# Table 3: ALBERT-base parameters per embedding size E, not-shared and all-shared.
PAPER_TABLE3: Mapping[str, Mapping[int, float]] = MappingProxyType({
    "none": {64: 87e6, 128: 89e6, 256: 93e6, 768: 108e6},
    "all": {64: 10e6, 128: 12e6, 256: 16e6, 768: 31e6},
})
# Table 4: ALBERT-base parameters per E and cross-layer sharing mode (rows in the paper's order).
PAPER_TABLE4: Mapping[int, Mapping[str, float]] = MappingProxyType({
    768: {"all": 31e6, "attention": 83e6, "ffn": 57e6, "none": 108e6},
    128: {"all": 12e6, "attention": 64e6, "ffn": 38e6, "none": 89e6},
})
TABLE4_MODES = ("all", "attention", "ffn", "none")
# The paper's names of the sharing modes (the rows of its Tables 3 and 4).
PAPER_SHARING_NAMES: Mapping[str, str] = MappingProxyType(
    {"all": "all-shared", "attention": "shared-attention", "ffn": "shared-FFN", "none": "not-shared"})
# Tables 3 and 4: the downstream average (Avg column) of ALBERT-base per (sharing, E) and (E, sharing).
PAPER_TABLE3_AVG: Mapping[tuple[str, int], float] = MappingProxyType({
    ("none", 64): 81.3, ("none", 128): 81.7, ("none", 256): 81.8, ("none", 768): 82.3,
    ("all", 64): 79.0, ("all", 128): 80.1, ("all", 256): 79.6, ("all", 768): 79.8,
})
PAPER_TABLE4_AVG: Mapping[tuple[int, str], float] = MappingProxyType({
    (768, "all"): 79.8, (768, "attention"): 81.6, (768, "ffn"): 79.5, (768, "none"): 82.3,
    (128, "all"): 80.1, (128, "attention"): 81.7, (128, "ffn"): 80.2, (128, "none"): 81.6,
})
# Table 5: intrinsic accuracies in percent, ALBERT-base; trained with (row) x evaluated on (column).
PAPER_TABLE5: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "none": {"MLM": 54.9, "NSP": 52.4, "SOP": 53.3},
    "nsp": {"MLM": 54.5, "NSP": 90.5, "SOP": 52.0},
    "sop": {"MLM": 54.0, "NSP": 78.9, "SOP": 86.5},
})
# Table 5: the downstream average (Avg column: SQuAD 1.1/2.0, MNLI, SST-2, RACE) per sentence task.
PAPER_TABLE5_AVG: Mapping[str, float] = MappingProxyType({"none": 79.0, "nsp": 79.2, "sop": 80.1})
# accuracy on each other's task (NSP-trained on SOP, SOP-trained on NSP)
PAPER_TABLE5_CROSS = MappingProxyType({"nsp_on_sop": PAPER_TABLE5["nsp"]["SOP"],
                                       "sop_on_nsp": PAPER_TABLE5["sop"]["NSP"]})

# Two figures that circulate about ALBERT's size, both at BERT's vocabulary V = 30,522 and E = 128:
# an embedding table (V·H against V·E + E·H, with a "BERT-Base (baseline) 24,030,720, −2.5%" first row)
# and an `estimate_albert_params` helper's totals with the pre-training heads.
QUOTED_VOCAB = 30_522
QUOTED_EMBEDDING = 128
QUOTED_BASELINE_ROW = (24_030_720, -0.025)
QUOTED_ESTIMATES: Mapping[str, float] = MappingProxyType({
    "albert-base": 15.8e6, "albert-large": 21.8e6, "albert-xlarge": 63.0e6, "albert-xxlarge": 227.1e6,
})

# What users report as the largest training batch at sequence 512 on a 16 GB card with mixed precision (forum
# and issue reports, rounded): BERT-large about twice ALBERT-xxlarge.
QUOTED_CARD_GB = 16
QUOTED_BATCH: Mapping[str, int] = MappingProxyType({"bert-large": 12, "albert-xxlarge": 6})

# The layer-smoothness plot (L2 distance and angle between each layer's input and output, BERT-large vs
# ALBERT-large): Figure 1 in the ICLR 2020 version (arXiv v6), Figure 2 in the first arXiv version.
SMOOTHNESS_FIGURE = "Figure 1 of the ICLR 2020 paper (Figure 2 in arXiv v1)"
SMOOTHNESS_FIGURE_SHORT = "paper Fig. 1"
