"""The published quality record (albert_core.quality) and its costs (albert_core.quality_cost): every figure has
every field, a sample agrees with the sources' own numbers written out here by hand, the computed averages follow
from the sources' per-task numbers, and the costs are the library's exact counts."""

from __future__ import annotations

import math

import pytest

from albert_core.configuration.coerce import albertize
from albert_core.configuration.presets import ALL_PRESETS, PRESETS
from albert_core.quality import (
    COMPUTE,
    FIGURES,
    METRICS,
    PROTOCOLS,
    RELEASED,
    SPLITS,
    compute_of,
    covered_presets,
    default_protocol,
    figures,
    fmt_value,
    protocols_of,
    published_for,
)
from albert_core.quality_cost import (
    EXTRA_CONFIGS,
    nearest,
    pareto_front,
    points,
    record,
    table2_tradeoff,
    twins,
)
from tests.helpers.facts import MODEL_COUNTS

TEXT_FIELDS = ("model", "metric", "split", "aggregation", "fine_tuned_by", "training", "source", "protocol")


@pytest.mark.parametrize("fig", FIGURES, ids=lambda f: f"{f.model}-{f.metric}-{f.protocol}")
def test_every_figure_has_every_field(fig):
    for name in TEXT_FIELDS:
        assert isinstance(getattr(fig, name), str) and getattr(fig, name).strip(), name
    assert fig.split in SPLITS and fig.metric in METRICS and fig.protocol in PROTOCOLS
    assert fig.preset is None or fig.preset in ALL_PRESETS
    assert fig.preset is not None or fig.model in EXTRA_CONFIGS or fig.model.startswith(("NeoBERT", "MosaicBERT"))
    assert isinstance(fig.computed, bool) and isinstance(fig.note, str)
    assert 0 < fig.value <= 100 and math.isfinite(fig.value)
    assert "http" not in fig.source and "../" not in fig.source  # the repository stands alone
    assert set(fig.to_dict()) == {*TEXT_FIELDS, "preset", "value", "computed", "note"}


def test_the_record_covers_at_least_25_presets_and_each_family():
    covered = covered_presets()
    assert len(covered) >= 25
    for prefix in ("bert-", "roberta-", "xlm-roberta-", "albert-", "electra-", "deberta-v3-", "modernbert-",
                   "ettin-encoder-", "mmbert-", "eurobert-", "nomic-bert"):
        assert any(p.startswith(prefix) for p in covered), prefix
    assert {"albert-base", "albert-large", "albert-xlarge", "albert-xxlarge"} <= set(covered)
    assert sum(p.startswith("ettin-encoder-") for p in covered) == 6


def test_no_model_has_two_values_for_one_metric_in_one_protocol():
    seen = {}
    for f in FIGURES:
        key = (f.model, f.metric, f.protocol)
        assert key not in seen, key
        seen[key] = f.value


# The sources' numbers, copied by hand from the papers, READMEs and model cards (not from albert_core):
# (model, metric, protocol) -> value.
SOURCES = {
    # ALBERT paper v6, Table 2 (125k steps, dev)
    ("BERT-base", "squad1-f1", "albert-t2"): 90.4, ("BERT-base", "race", "albert-t2"): 68.2,
    ("BERT-large", "albert-avg", "albert-t2"): 85.2, ("BERT-large", "sst2", "albert-t2"): 93.0,
    ("ALBERT-base", "mnli", "albert-t2"): 81.6, ("ALBERT-large", "squad2-em", "albert-t2"): 79.4,
    ("ALBERT-xlarge", "albert-avg", "albert-t2"): 85.5, ("ALBERT-xxlarge", "albert-avg", "albert-t2"): 88.7,
    ("ALBERT-xxlarge", "race", "albert-t2"): 82.3,
    # Table 6 (the same training time)
    ("BERT-large (400k steps)", "albert-avg", "albert-t6"): 87.2, ("BERT-large (400k steps)", "race", "albert-t6"): 77.3,
    ("ALBERT-xxlarge (125k steps)", "squad1-f1", "albert-t6"): 94.0,
    # ALBERT README: V2, and the 1.5M-step V1 xxlarge
    ("ALBERT-base v2", "albert-avg", "albert-readme"): 82.3, ("ALBERT-xxlarge v2", "albert-avg", "albert-readme"): 90.9,
    ("ALBERT-xxlarge v2", "mnli", "albert-readme"): 90.6, ("ALBERT-large v2", "sst2", "albert-readme"): 94.9,
    ("ALBERT-xxlarge v1 (1.5M steps)", "albert-avg", "albert-readme"): 91.0,
    # ModernBERT Tables 1 and 5
    ("BERT-base", "glue", "modernbert"): 84.7, ("RoBERTa-large", "glue", "modernbert"): 88.9,
    ("DeBERTa-v3-large", "glue", "modernbert"): 91.4, ("ModernBERT-base", "glue", "modernbert"): 88.4,
    ("ModernBERT-large", "glue", "modernbert"): 90.4, ("NomicBERT (2048)", "glue", "modernbert"): 84.0,
    # Ettin's table, mmBERT's figures
    ("Ettin-17m", "glue", "ettin"): 79.2, ("Ettin-1b", "glue", "ettin"): 91.6, ("Ettin-400m", "mnli", "ettin"): 91.3,
    ("Ettin-68m", "mteb-v2-eng", "ettin"): 52.6, ("ModernBERT-base", "glue", "mmbert"): 87.4,
    ("XLM-R base", "xtreme", "mmbert"): 70.4, ("mmBERT-base", "xtreme", "mmbert"): 72.8,
    ("mmBERT-small", "glue", "mmbert"): 84.7, ("EuroBERT-210m", "glue", "mmbert"): 81.2,
    # ELECTRA README, BERT's test, NeoBERT, DeBERTa-v3 cards
    ("ELECTRA-small", "glue", "electra-test"): 77.4, ("ELECTRA-base", "squad2-em", "electra-dev"): 80.5,
    ("BERT-base", "glue", "bert-test"): 79.6, ("BERT-large", "glue", "bert-test"): 82.1,
    ("NeoBERT (4096)", "glue", "neobert"): 89.0, ("NeoBERT (4096)", "mteb-v1-eng", "neobert-mteb"): 51.3,
    ("DeBERTa-v3-large", "mteb-v1-eng", "neobert-mteb"): 27.1, ("DeBERTa-v3-base", "mnli", "deberta-cards"): 90.6,
    ("DeBERTa-v3-xsmall", "squad2-f1", "deberta-cards"): 84.8, ("DeBERTa-v3-small", "mnli", "deberta-cards"): 88.3,
}


@pytest.mark.parametrize(("key", "value"), SOURCES.items(), ids=["-".join(k) for k in SOURCES])
def test_a_sample_of_figures_equals_the_sources(key, value):
    model, metric, protocol = key
    [fig] = figures(metric, protocol, model=model)
    assert fig.value == value


def test_the_traps_are_in_the_record_as_published():
    # the same BERT-base: 79.6 (test) or 84.7 (dev re-run); ModernBERT-base 88.4 in its paper, 87.4 in mmBERT's run
    bert = {f.protocol: (f.value, f.split) for f in figures("glue", model="BERT-base")}
    assert bert == {"modernbert": (84.7, "dev"), "bert-test": (79.6, "test")}
    assert {f.protocol: f.value for f in figures("glue", model="ModernBERT-base")} == {"modernbert": 88.4,
                                                                                       "mmbert": 87.4}
    # MTEB of one model under three recipes, on two suites
    mteb = {(f.metric, f.protocol): f.value for f in FIGURES if f.model == "ModernBERT-base" and "mteb" in f.metric}
    assert mteb == {("mteb-v2-eng", "ettin"): 54.0, ("mteb-v2-eng", "mmbert"): 53.8,
                    ("mteb-v1-eng", "neobert-mteb"): 45.0}
    # ALBERT v1 xxlarge: the README's 1.5M-step 91.0 is not the paper's 125k-step 88.7
    [readme] = figures("albert-avg", "albert-readme", model="ALBERT-xxlarge v1 (1.5M steps)")
    assert "1.5M" in readme.training and "88.7" in readme.note
    assert all("125k" in f.training for f in figures(protocol="albert-t2"))
    assert {f.training for f in figures("albert-avg", "albert-readme") if "v2" in f.model} == {
        "10M steps with additional data and no dropout (the released V2)",
        "3M steps with additional data and no dropout (the released V2)"}
    # ALBERT's "Avg" is not GLUE, and says so
    assert "not GLUE" in METRICS["albert-avg"].aggregation
    # figures of the released checkpoints say so
    assert figures("glue", "ettin", model="Ettin-17m")[0].training == RELEASED


# ALBERT's downstream tables, per-task, as printed (SQuAD F1/EM): the Avg column is their mean, SQuAD's F1 and EM
# averaged first (the paper's caption). Written out by hand from Table 2 and Table 6.
ALBERT_ROWS = {
    ("BERT-base", "albert-t2"): (90.4, 83.2, 80.4, 77.6, 84.5, 92.8, 68.2, 82.3),
    ("BERT-large", "albert-t2"): (92.2, 85.5, 85.0, 82.2, 86.6, 93.0, 73.9, 85.2),
    ("ALBERT-base", "albert-t2"): (89.3, 82.3, 80.0, 77.1, 81.6, 90.3, 64.0, 80.1),
    ("ALBERT-large", "albert-t2"): (90.6, 83.9, 82.3, 79.4, 83.5, 91.7, 68.5, 82.4),
    ("ALBERT-xlarge", "albert-t2"): (92.5, 86.1, 86.1, 83.1, 86.4, 92.4, 74.8, 85.5),
    ("ALBERT-xxlarge", "albert-t2"): (94.1, 88.3, 88.1, 85.1, 88.0, 95.2, 82.3, 88.7),
    ("BERT-large (400k steps)", "albert-t6"): (93.5, 87.4, 86.9, 84.3, 87.8, 94.6, 77.3, 87.2),
    ("ALBERT-xxlarge (125k steps)", "albert-t6"): (94.0, 88.1, 88.3, 85.3, 87.8, 95.4, 82.5, 88.7),
}
COLUMNS = ("squad1-f1", "squad1-em", "squad2-f1", "squad2-em", "mnli", "sst2", "race", "albert-avg")


@pytest.mark.parametrize(("key", "row"), ALBERT_ROWS.items(), ids=["-".join(k) for k in ALBERT_ROWS])
def test_albert_tables_every_column_and_their_average(key, row):
    model, protocol = key
    got = {f.metric: f.value for f in figures(protocol=protocol, model=model)}
    assert got == dict(zip(COLUMNS, row, strict=True))
    s1, s2 = (row[0] + row[1]) / 2, (row[2] + row[3]) / 2
    assert abs((s1 + s2 + row[4] + row[5] + row[6]) / 5 - row[7]) <= 0.051  # the printed Avg, rounded


def test_computed_glue_averages_follow_from_the_printed_per_task_scores():
    # ALBERT Table 9 / README GLUE dev rows: MNLI, QNLI, QQP, RTE, SST, MRPC, CoLA, STS (by hand)
    per_task = {
        "ALBERT-xxlarge v1 (1.5M steps)": (90.8, 95.3, 92.2, 89.2, 96.9, 90.9, 71.4, 93.0),
        "ALBERT-xxlarge (1M steps)": (90.4, 95.2, 92.0, 88.1, 96.8, 90.2, 68.7, 92.7),
        "BERT-large": (86.6, 92.3, 91.3, 70.4, 93.2, 88.0, 60.6, 90.0),
        "RoBERTa-large": (90.2, 94.7, 92.2, 86.6, 96.4, 90.9, 68.0, 92.4),
    }
    for model, scores in per_task.items():
        [fig] = figures("glue", "albert-t9", model=model)
        assert fig.computed and abs(fig.value - sum(scores) / 8) < 0.0051, model  # to the printed 2 decimals
    assert all(f.computed for f in figures("glue", "electra-dev"))
    assert not any(f.computed for f in figures("glue", "modernbert") if f.preset)


def test_published_training_compute():
    hours = {c.model: c.device_hours for c in COMPUTE}
    # ModernBERT Table 3: 194.2 + 39.9 + 11.5 and 425.3 + 80.7 + 21.7 hours on 8 H100s; mmBERT: 10 and 40 days on 8
    assert hours["ModernBERT-base"] == pytest.approx((194.2 + 39.9 + 11.5) * 8)
    assert round(hours["ModernBERT-large"]) == 4222
    assert (hours["mmBERT-small"], hours["mmBERT-base"]) == (10 * 24 * 8, 40 * 24 * 8)
    assert hours["NeoBERT (4096)"] == 6000
    assert hours["BERT-large (400k steps)"] is None  # the paper does not print the chip count
    assert compute_of("mmBERT-base").approximate and not compute_of("ModernBERT-base").approximate
    assert compute_of("nothing") is None


def test_protocols_and_defaults():
    assert default_protocol("albert-avg") == "albert-t2"
    assert default_protocol("glue") == "modernbert"
    assert protocols_of("mteb-v2-eng") == ["ettin", "mmbert"]
    assert protocols_of("mteb-v1-eng") == ["neobert-mteb"]  # v1 and v2 are different suites: never one axis
    with pytest.raises(ValueError, match="metric must be one of"):
        protocols_of("accuracy")
    assert fmt_value(88.0) == "88.0" and fmt_value(89.96) == "89.96"


def test_published_for_an_architecture_with_two_names():
    same = [n for n, c in ALL_PRESETS.items() if c == ALL_PRESETS["modernbert-base"]]
    assert same == ["modernbert-base", "ettin-encoder-150m"]
    models = {f.model for f in published_for(same)}
    assert {"ModernBERT-base", "Ettin-150m"} <= models


# ----------------------------------------------------------------------------- costs
def test_points_carry_exact_costs_and_one_protocol_by_default():
    rows = points("albert-avg")
    assert {r["protocol"] for r in rows} == {"albert-t2"}
    by_model = {r["model"]: r for r in rows}
    assert by_model["ALBERT-base"]["params"] == MODEL_COUNTS["albert-base"] == 11_683_584
    assert by_model["BERT-large"]["params"] == MODEL_COUNTS["bert-large"]
    # ALBERT-xxlarge against BERT-large: 66 % of the parameters, 7.5x the forward FLOPs per token at 512
    xx, bl = by_model["ALBERT-xxlarge"], by_model["BERT-large"]
    assert round(xx["params"] / bl["params"], 2) == 0.66
    assert round(xx["flops"] / bl["flops"], 1) == 7.5
    # per token at 512: L*(8H^2 + 4*512*H + 4HI) + 2EH (projection) + 2H^2/512 (pooler, once per sequence), by hand
    H, E, L, I = 4096, 128, 12, 16384  # noqa: E741
    assert xx["flops"] == L * (8 * H * H + 4 * 512 * H + 4 * H * I) + 2 * E * H + 2 * H * H / 512
    mixed = points("glue", mix=True)
    assert len({r["protocol"] for r in mixed}) > 3 and len(mixed) > len(points("glue"))
    assert all({"split", "fine_tuned_by", "source", "training"} <= r.keys() for r in mixed)


def test_extra_configs_match_their_published_sizes():
    # quality reference's backbone counts (no pooler, no head): DeBERTa-v3-small 141.3M, ELECTRA-large 334.1M
    from albert_core.counting.params import count_params

    assert round(count_params(EXTRA_CONFIGS["DeBERTa-v3-small"]).total / 1e5) == 1413
    electra = count_params(EXTRA_CONFIGS["ELECTRA-large"].replace(head="model"))
    assert round(electra.total / 1e5) == 3341  # ELECTRA's bare model has no pooler
    [large] = [r for r in points("glue", "electra-dev") if r["model"] == "ELECTRA-large"]
    assert large["params"] > 3.3e8 and large["config"] is not None


def test_pareto_front_and_nearest():
    rows = [{"model": m, "value": v, "params": p} for m, v, p in
            (("a", 80, 10), ("b", 79, 20), ("c", 85, 30), ("d", 85, 40), ("e", 90, 100), ("f", 99, None))]
    assert [r["model"] for r in pareto_front(rows, "params")] == ["a", "c", "e"]
    assert [r["model"] for r in nearest(rows, "params", 33, k=2)] == ["c", "d"]
    # the paper's own table: every ALBERT beats the BERT of more parameters; on FLOPs the BERTs are on the front
    t2 = points("albert-avg", "albert-t2")
    assert [r["model"] for r in pareto_front(t2, "params")] == ["ALBERT-base", "ALBERT-large", "ALBERT-xlarge",
                                                                "ALBERT-xxlarge"]
    assert [r["model"] for r in pareto_front(t2, "flops")] == ["BERT-base", "BERT-large", "ALBERT-xlarge",
                                                               "ALBERT-xxlarge"]


def test_twins_have_a_cost_and_no_score():
    ts = twins(points("glue", "ettin"))
    assert len(ts) == 6 and all(not hasattr(t, "value") for t in ts)
    [t] = [t for t in ts if "Ettin-150m" in t.of]
    assert t.config == albertize(ALL_PRESETS["ettin-encoder-150m"])
    assert t.params < t.original_params
    assert twins(points("albert-avg")) == []  # BERT's ALBERTized form is ALBERT, which has its own scores
    # ModernBERT-base and Ettin-150m are one architecture: one twin named after both
    both = twins(points("mteb-v2-eng", mix=True))
    assert any(set(t.of) == {"Ettin-150m", "ModernBERT-base"} for t in both)


def test_table2_tradeoff_is_complete():
    rows = {(r["model"], r["protocol"]): r for r in table2_tradeoff()}
    assert len(rows) == 8
    for (model, protocol), printed in ALBERT_ROWS.items():
        assert tuple(rows[model, protocol][c] for c in COLUMNS) == printed
    xx, bl = rows["ALBERT-xxlarge", "albert-t2"], rows["BERT-large", "albert-t2"]
    assert (xx["speedup"], bl["speedup"]) == (0.3, 1.0)
    assert xx["params"] == MODEL_COUNTS["albert-xxlarge"] and xx["steps"] == bl["steps"] == 125_000
    assert rows["BERT-large (400k steps)", "albert-t6"]["steps"] == 400_000
    assert rows["BERT-large (400k steps)", "albert-t6"]["hours"] == 34
    for r in rows.values():
        assert r["training_flops"] == r["training_flops_per_step"] * r["steps"]
    # the same step costs the same whatever the table: Table 6's xxlarge is Table 2's
    assert rows["ALBERT-xxlarge (125k steps)", "albert-t6"]["training_flops"] == xx["training_flops"]
    assert xx["training_flops_per_step"] > 7 * bl["training_flops_per_step"]


def test_record_lists_every_field():
    data = record()
    assert len(data["figures"]) == len(FIGURES)
    assert {c["model"] for c in data["training_compute"]} >= {"ModernBERT-base", "NeoBERT (4096)"}
    only = record("glue", ["bert-base"])
    assert {f["value"] for f in only["figures"]} == {84.7, 79.6}
    assert PRESETS["bert-base"] and only["training_compute"] == []
