"""Published quality: scores printed elsewhere, each with what makes it comparable or not (never measured here).

Every `Figure` is one number as its source prints it (or, marked ``computed``, arithmetic on the source's own
per-task numbers) with its model (a preset name where one exists), metric, split, aggregation, who fine-tuned,
training length and exact source. A `Protocol` is one source table and the evaluation behind it: figures of one
protocol were produced under one setup and may share an axis; figures of two protocols may not without saying so
(docs/quality.md lists the traps: test against dev, ALBERT's five-task average against GLUE, another paper's
re-run, another training length, another fine-tuning recipe). `COMPUTE` holds the published training compute.

Pure data and look-ups, like `albert_core.paper` (the base layer): the costs beside these figures are the
library's exact counts (`albert_core.quality_cost`). No score is ever made up for a configuration nobody trained.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

SPLITS = ("dev", "test")
RELEASED = "the released model"  # a figure's training length when it is the published checkpoint's own


@dataclass(frozen=True)
class Metric:
    """What a figure measures: ``label`` for an axis, ``aggregation`` the default description of how it is made."""

    key: str
    label: str
    aggregation: str


_GLUE_8 = ("mean of 8 GLUE tasks (no WNLI): CoLA Matthews correlation, STS-B Spearman, MRPC and QQP accuracy or F1 "
           "as the source prints them, the rest accuracy")
_ALBERT_AVG = ("ALBERT's 'Avg': mean of SQuAD1.1, SQuAD2.0 (F1 and EM averaged first), MNLI, SST-2 and RACE "
               "(not GLUE)")
METRICS: Mapping[str, Metric] = MappingProxyType({m.key: m for m in (
    Metric("glue", "GLUE average", _GLUE_8),
    Metric("albert-avg", "ALBERT five-task average", _ALBERT_AVG),
    Metric("mnli", "MNLI-m accuracy", "MNLI matched accuracy"),
    Metric("sst2", "SST-2 accuracy", "SST-2 accuracy"),
    Metric("race", "RACE accuracy", "RACE accuracy (middle and high school together)"),
    Metric("squad1-f1", "SQuAD1.1 F1", "SQuAD1.1 F1"),
    Metric("squad1-em", "SQuAD1.1 EM", "SQuAD1.1 exact match"),
    Metric("squad2-f1", "SQuAD2.0 F1", "SQuAD2.0 F1"),
    Metric("squad2-em", "SQuAD2.0 EM", "SQuAD2.0 exact match"),
    Metric("xtreme", "XTREME average", "XTREME average over its tasks and languages, as the source's figure prints it"),
    Metric("xnli", "XNLI accuracy", "XNLI accuracy averaged over its languages"),
    Metric("mteb-v2-eng", "MTEB v2 English", "MTEB v2 English average after the source's own embedding fine-tune"),
    Metric("mteb-v1-eng", "MTEB v1 English", "MTEB (English, v1) average after the source's own embedding fine-tune"),
)})


@dataclass(frozen=True)
class Protocol:
    """One source table and the evaluation behind it: the defaults its figures take."""

    key: str
    label: str  # short, for a menu and a legend
    split: str
    fine_tuned_by: str
    source: str
    about: str  # what the table is and where it is not comparable


@dataclass(frozen=True)
class Figure:
    """One published score with its provenance (every field filled)."""

    model: str  # as the source names it, e.g. "ALBERT-xxlarge v2"
    preset: str | None  # the preset of the same architecture (albert_core.configuration.presets), None if none
    metric: str  # a key of METRICS
    value: float  # in points (percent), as printed
    split: str  # "dev" or "test"
    aggregation: str  # which tasks, which metric per task
    fine_tuned_by: str  # the model's authors, or who else
    training: str  # the pretraining length behind this figure (RELEASED for the published checkpoint)
    source: str  # paper and table, or model card / README
    protocol: str  # a key of PROTOCOLS
    computed: bool  # True: arithmetic on the source's own per-task numbers (shown as "computed")
    note: str  # a trap of this figure, or ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Compute:
    """Published pretraining compute of one model: wall-clock hours on ``devices`` accelerators."""

    model: str
    preset: str | None
    wall_hours: float
    devices: int | None  # None: the source does not print the count
    device: str  # "H100", "A100", "TPU v3"
    approximate: bool  # the source says "about" / "approximately" / "~"
    how: str  # the source's own figures and the arithmetic
    source: str

    @property
    def device_hours(self) -> float | None:
        """Accelerator-hours (wall hours x devices), or None when the device count is not published."""
        return None if self.devices is None else self.wall_hours * self.devices

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "device_hours": self.device_hours}


# ----------------------------------------------------------------------------- the protocols
_ALBERT = "Lan et al. 2020, ALBERT (ICLR 2020, arXiv 1909.11942v6)"
_ALBERT_README = "ALBERT README (google-research/albert)"
_MODERNBERT = "Warner et al. 2024, ModernBERT (arXiv 2412.13663)"
_ETTIN = ("Weller et al. 2025, Ettin: the encoder results table (assets/encoder_results.jpg in "
          "JHU-CLSP/ettin-encoder-vs-decoder)")
_MMBERT = "Marone et al. 2025, mmBERT README (JHU-CLSP/mmBERT)"
_ELECTRA = "ELECTRA README (google-research/electra)"
_NEOBERT = "Le Breton et al. 2025, NeoBERT (arXiv 2502.19587)"
_DEBERTA_CARD = "model card microsoft/deberta-v3-{size} (commits 94bd5bd, 5c3e29e)"

PROTOCOLS: Mapping[str, Protocol] = MappingProxyType({p.key: p for p in (
    Protocol("albert-t2", "ALBERT Table 2 (125k steps)", "dev", "ALBERT's authors", f"{_ALBERT}, Table 2",
             "Every model, the BERTs too, pretrained by ALBERT's authors for 125k steps at batch 4,096 on BookCorpus "
             "and Wikipedia, then fine-tuned by them: one setup for all six rows."),
    Protocol("albert-t6", "ALBERT Table 6 (same time)", "dev", "ALBERT's authors", f"{_ALBERT}, Table 6",
             "BERT-large trained 400k steps (34 h) against ALBERT-xxlarge 125k steps (32 h) on the same TPUs: the "
             "same training time, not the same steps."),
    Protocol("albert-readme", "ALBERT README (V1 / V2 models)", "dev", "ALBERT's authors",
             f"{_ALBERT_README}, the V1 / V2 comparison table",
             "The released models: V2 trained longer (base 10M steps, the others 3M) with more data and no dropout; "
             "the V1 xxlarge row is the 1.5M-step model, not Table 2's 125k-step one (its other V1 rows repeat "
             "Table 2 and are recorded there)."),
    Protocol("albert-t9", "ALBERT Table 9 (GLUE dev)", "dev", "ALBERT's authors",
             f"{_ALBERT}, Table 9 (= the README's GLUE table)",
             "Single-task single models on GLUE dev; RTE, STS-B and MRPC fine-tuned from an MNLI checkpoint. The "
             "averages are ours, over the eight printed per-task scores."),
    Protocol("modernbert", "ModernBERT Tables 1 and 5", "dev", "per model, as cited by ModernBERT",
             f"{_MODERNBERT}, Tables 1 and 5",
             "One table of GLUE dev averages collected from each model's best published run (per-task sweeps; "
             "ModernBERT transfers from MNLI for RTE, MRPC and STS-B): one split and aggregation, several "
             "fine-tuners. Its BERT rows are MosaicBERT's dev re-run (84.7 / 85.2), not BERT's test figures."),
    Protocol("ettin", "Ettin encoder table", "dev", "Ettin's authors", _ETTIN,
             "Ettin's authors fine-tuned every model of the table with one recipe; its MTEB column is after their "
             "own MS MARCO embedding fine-tune."),
    Protocol("mmbert", "mmBERT's runs", "dev", "mmBERT's authors", _MMBERT,
             "mmBERT's authors fine-tuned every model of the figure themselves: ModernBERT-base gets 87.4 GLUE here "
             "against 88.4 in its own paper. MTEB after mmBERT's own embedding fine-tune."),
    Protocol("electra-dev", "ELECTRA README (dev medians)", "dev", "ELECTRA's authors",
             f"{_ELECTRA}, 'Expected Results'",
             "Per-task dev medians over many fine-tuning seeds (MRPC and QQP in accuracy): a median is not a best "
             "run. The GLUE averages are ours, over the printed per-task medians."),
    Protocol("electra-test", "ELECTRA README (GLUE test)", "test", "ELECTRA's authors",
             f"{_ELECTRA}, 'Released Models'", "GLUE test-server scores: several points below dev averages."),
    Protocol("bert-test", "BERT Table 1 (GLUE test)", "test", "BERT's authors (Devlin et al. 2019)",
             "Devlin et al. 2019, BERT, Table 1, as printed in NeoBERT's Table 3",
             "GLUE test-server scores (QQP as test F1). NeoBERT's Table 3 prints them under a 'development set' "
             "caption: they are test figures, 5 points below BERT's dev re-run."),
    Protocol("neobert", "NeoBERT's runs", "dev", "NeoBERT's authors", f"{_NEOBERT}, Table 3",
             "NeoBERT's own hyper-parameter sweep on GLUE dev, with transfer from MNLI for RTE, MRPC and STS-B."),
    Protocol("neobert-mteb", "NeoBERT's MTEB recipe", "test", "NeoBERT's authors (one recipe for all)",
             f"{_NEOBERT}, MTEB English results (Tables 3-5)",
             "Every model fine-tuned for 2,000 contrastive steps with one recipe, then MTEB (English, v1): under it "
             "DeBERTa-v3 collapses to 27 and ModernBERT-base scores 45.0 (54.0 under Ettin's recipe)."),
    Protocol("deberta-cards", "DeBERTa-v3 model cards", "dev", "DeBERTa's authors",
             _DEBERTA_CARD.format(size="*"),
             "The authors' own fine-tuning, as the model cards print it; the cards changed across commits (small's "
             "MNLI-m went 88.2 -> 88.1 -> 88.3)."),
)})


# ----------------------------------------------------------------------------- the figures
def _figures(protocol: str, rows: Iterable[tuple], *, training: str = RELEASED, computed: bool = False,
             **fields: Any) -> list[Figure]:
    """Figures of one protocol from (model, preset, metric, value) rows; ``fields`` override the protocol's
    defaults (split, fine_tuned_by, source) or add a note. A row may end with a dict of its own overrides."""
    p = PROTOCOLS[protocol]
    out = []
    for row in rows:
        model, preset, metric, value, *own = row
        f = {"split": p.split, "fine_tuned_by": p.fine_tuned_by, "source": p.source, "note": "",
             "training": training, "computed": computed, "aggregation": METRICS[metric].aggregation,
             **fields, **(own[0] if own else {})}
        out.append(Figure(model=model, preset=preset, metric=metric, value=float(value), protocol=protocol, **f))
    return out


_ALBERT_COLUMNS = ("squad1-f1", "squad1-em", "squad2-f1", "squad2-em", "mnli", "sst2", "race", "albert-avg")


def _albert_table(model: str, preset: str, squad1: str, squad2: str, mnli: float, sst2: float, race: float,
                  avg: float) -> list[tuple]:
    """One row of ALBERT's downstream tables (SQuAD as printed, 'F1/EM') as (model, preset, metric, value) rows."""
    f1_1, em_1 = (float(x) for x in squad1.split("/"))
    f1_2, em_2 = (float(x) for x in squad2.split("/"))
    values = (f1_1, em_1, f1_2, em_2, mnli, sst2, race, avg)
    return [(model, preset, metric, value) for metric, value in zip(_ALBERT_COLUMNS, values, strict=True)]


_T2_TRAINING = "125k steps at batch 4,096 on BookCorpus and Wikipedia (the paper's setting)"
_README_V2 = "3M steps with additional data and no dropout (the released V2)"
_GLUE_T9 = ("mean of the 8 GLUE dev scores printed per task (MNLI, QNLI, QQP, RTE, SST-2, MRPC, CoLA, STS-B), "
            "computed here")
_ELECTRA_GLUE = ("mean of the 8 GLUE dev medians printed per task (CoLA MCC, STS-B Spearman, MRPC and QQP accuracy, "
                 "the rest accuracy), computed here")

_ETTIN_ROWS = (("17m", 79.2, 79.5), ("32m", 83.5, 83.4), ("68m", 87.2, 87.0), ("150m", 88.9, 89.2),
               ("400m", 90.8, 91.3), ("1b", 91.6, 91.8))  # (size, GLUE, MNLI)
_ETTIN_MTEB = (("17m", 48.9), ("32m", 50.9), ("68m", 52.6), ("150m", 54.0), ("400m", 55.5), ("1b", 56.0))

FIGURES: tuple[Figure, ...] = tuple([
    # ALBERT paper, Table 2: every column, BERT rows pretrained by ALBERT's authors.
    *_figures("albert-t2", [
        *_albert_table("BERT-base", "bert-base", "90.4/83.2", "80.4/77.6", 84.5, 92.8, 68.2, 82.3),
        *_albert_table("BERT-large", "bert-large", "92.2/85.5", "85.0/82.2", 86.6, 93.0, 73.9, 85.2),
        *_albert_table("ALBERT-base", "albert-base", "89.3/82.3", "80.0/77.1", 81.6, 90.3, 64.0, 80.1),
        *_albert_table("ALBERT-large", "albert-large", "90.6/83.9", "82.3/79.4", 83.5, 91.7, 68.5, 82.4),
        *_albert_table("ALBERT-xlarge", "albert-xlarge", "92.5/86.1", "86.1/83.1", 86.4, 92.4, 74.8, 85.5),
        *_albert_table("ALBERT-xxlarge", "albert-xxlarge", "94.1/88.3", "88.1/85.1", 88.0, 95.2, 82.3, 88.7),
    ], training=_T2_TRAINING, note="The README's V1 rows print the same figures for base, large and xlarge."),
    # ALBERT paper, Table 6: the same training time.
    *_figures("albert-t6", _albert_table("BERT-large (400k steps)", "bert-large", "93.5/87.4", "86.9/84.3", 87.8,
                                         94.6, 77.3, 87.2),
              training="400k steps at batch 4,096 (34 h)"),
    *_figures("albert-t6", _albert_table("ALBERT-xxlarge (125k steps)", "albert-xxlarge", "94.0/88.1", "88.3/85.3",
                                         87.8, 95.4, 82.5, 88.7),
              training="125k steps at batch 4,096 (32 h)"),
    # ALBERT README, V2 models and the 1.5M-step V1 xxlarge.
    *_figures("albert-readme", _albert_table("ALBERT-base v2", "albert-base", "90.2/83.2", "82.1/79.3", 84.6, 92.9,
                                             66.8, 82.3),
              training="10M steps with additional data and no dropout (the released V2)"),
    *_figures("albert-readme", [
        *_albert_table("ALBERT-large v2", "albert-large", "91.8/85.2", "84.9/81.8", 86.5, 94.9, 75.2, 85.7),
        *_albert_table("ALBERT-xlarge v2", "albert-xlarge", "92.9/86.4", "87.9/84.1", 87.9, 95.4, 80.7, 87.9),
        *_albert_table("ALBERT-xxlarge v2", "albert-xxlarge", "94.6/89.1", "89.8/86.9", 90.6, 96.8, 86.8, 90.9),
    ], training=_README_V2),
    *_figures("albert-readme", _albert_table("ALBERT-xxlarge v1 (1.5M steps)", "albert-xxlarge", "94.8/89.3",
                                             "90.2/87.4", 90.8, 96.9, 86.5, 91.0),
              training="1.5M steps with additional data and no dropout (the released V1 xxlarge)",
              note="Not the paper's Table 2 xxlarge (125k steps, Avg 88.7)."),
    # ALBERT paper Table 9 / README GLUE table: averages of the printed per-task dev scores.
    *_figures("albert-t9", [
        ("ALBERT-xxlarge v1 (1.5M steps)", "albert-xxlarge", "glue", 89.96,
         {"training": "1.5M steps with additional data and no dropout"}),
        ("ALBERT-xxlarge (1M steps)", "albert-xxlarge", "glue", 89.26,
         {"training": "1M steps with additional data and no dropout"}),
        ("BERT-large", "bert-large", "glue", 84.05,
         {"fine_tuned_by": "not stated (printed by ALBERT's authors from earlier work)"}),
        ("RoBERTa-large", "roberta-large", "glue", 88.93,
         {"fine_tuned_by": "RoBERTa's authors (Liu et al. 2019), as printed by ALBERT's authors"}),
    ], computed=True, aggregation=_GLUE_T9),
    # ModernBERT's GLUE table (dev), collected from each model's own paper or re-run.
    *_figures("modernbert", [
        ("BERT-base", "bert-base", "glue", 84.7,
         {"fine_tuned_by": "MosaicBERT's authors (Portes et al. 2023, Table S3), a re-run",
          "note": "BERT's own test figure is 79.6 (protocol bert-test)."}),
        ("BERT-large", "bert-large", "glue", 85.2,
         {"fine_tuned_by": "MosaicBERT's authors (Portes et al. 2023, Table S3), a re-run"}),
        ("RoBERTa-base", "roberta-base", "glue", 86.4,
         {"fine_tuned_by": "RoBERTa's authors (Liu et al. 2019, Table 8)"}),
        ("RoBERTa-large", "roberta-large", "glue", 88.9,
         {"fine_tuned_by": "RoBERTa's authors (Liu et al. 2019, Table 8)"}),
        ("DeBERTa-v3-base", "deberta-v3-base", "glue", 88.1,
         {"fine_tuned_by": "as cited by ModernBERT (Qiang et al. 2024; He et al. 2023)",
          "source": f"{_MODERNBERT}, Table 1", "note": "Its Table 5 per-task rows average 88.26."}),
        ("DeBERTa-v3-large", "deberta-v3-large", "glue", 91.4,
         {"fine_tuned_by": "as cited by ModernBERT (Qiang et al. 2024; He et al. 2023)",
          "source": f"{_MODERNBERT}, Table 1"}),
        ("ModernBERT-base", "modernbert-base", "glue", 88.4,
         {"fine_tuned_by": "ModernBERT's authors", "note": "88.5 in NeoBERT's copy; 87.4 in mmBERT's re-run."}),
        ("ModernBERT-large", "modernbert-large", "glue", 90.4, {"fine_tuned_by": "ModernBERT's authors"}),
        ("NomicBERT (2048)", "nomic-bert-2048", "glue", 84.0,
         {"fine_tuned_by": "NomicBERT's authors (Nussbaum et al. 2024, Table 2)"}),
        ("MosaicBERT-128", None, "glue", 85.4,
         {"fine_tuned_by": "MosaicBERT's authors (Portes et al. 2023)", "source": f"{_MODERNBERT}, Table 5",
          "computed": True, "aggregation": "mean of the 8 per-task dev scores of ModernBERT's Table 5, computed here"}),
    ]),
    # Ettin's encoder table: GLUE, MNLI and MTEB v2 (after Ettin's MS MARCO fine-tune).
    *_figures("ettin", [
        (f"Ettin-{size}", f"ettin-encoder-{size}", metric, value)
        for size, glue, mnli in _ETTIN_ROWS for metric, value in (("glue", glue), ("mnli", mnli))
    ]),
    *_figures("ettin", [
        *((f"Ettin-{size}", f"ettin-encoder-{size}", "mteb-v2-eng", mteb) for size, mteb in _ETTIN_MTEB),
        ("ModernBERT-base", "modernbert-base", "mteb-v2-eng", 54.0,
         {"note": "53.8 under mmBERT's recipe, 45.0 under NeoBERT's."}),
    ], split="test"),
    # mmBERT's figures: its own runs of every model.
    *_figures("mmbert", [
        ("XLM-R base", "xlm-roberta-base", "glue", 83.3), ("mmBERT-small", "mmbert-small", "glue", 84.7),
        ("mmBERT-base", "mmbert-base", "glue", 86.3), ("EuroBERT-210m", "eurobert-210m", "glue", 81.2),
        ("ModernBERT-base", "modernbert-base", "glue", 87.4, {"note": "88.4 in ModernBERT's own paper."}),
    ], aggregation="English GLUE average as mmBERT's figure prints it (8 tasks)"),
    *_figures("mmbert", [
        ("XLM-R base", "xlm-roberta-base", "xtreme", 70.4), ("mmBERT-small", "mmbert-small", "xtreme", 68.6),
        ("mmBERT-base", "mmbert-base", "xtreme", 72.8),
        ("XLM-R base", "xlm-roberta-base", "xnli", 74.6), ("mmBERT-small", "mmbert-small", "xnli", 73.6),
        ("mmBERT-base", "mmbert-base", "xnli", 77.1),
    ], split="test", note="XTREME's test sets (the benchmark's split; the figure does not print it)."),
    *_figures("mmbert", [
        ("mmBERT-small", "mmbert-small", "mteb-v2-eng", 52.1), ("mmBERT-base", "mmbert-base", "mteb-v2-eng", 53.9),
        ("EuroBERT-210m", "eurobert-210m", "mteb-v2-eng", 51.9),
        ("ModernBERT-base", "modernbert-base", "mteb-v2-eng", 53.8),
    ], split="test", note="MTEB's evaluation splits; only same-recipe MTEB numbers may share an axis."),
    # ELECTRA README: dev medians (our averages) and test scores.
    *_figures("electra-dev", [
        ("ELECTRA-small", "electra-small-discriminator", "glue", 81.1),
        ("ELECTRA-base", "electra-base-discriminator", "glue", 87.5), ("ELECTRA-large", None, "glue", 89.5),
    ], computed=True, aggregation=_ELECTRA_GLUE),
    *_figures("electra-dev", [
        ("ELECTRA-small", "electra-small-discriminator", "squad2-em", 70.1),
        ("ELECTRA-base", "electra-base-discriminator", "squad2-em", 80.5), ("ELECTRA-large", None, "squad2-em", 88.1),
        ("ELECTRA-small", "electra-small-discriminator", "squad1-em", 75.8),
        ("ELECTRA-base", "electra-base-discriminator", "squad1-em", 86.8), ("ELECTRA-large", None, "squad1-em", 89.7),
    ]),
    *_figures("electra-test", [
        ("ELECTRA-small", "electra-small-discriminator", "glue", 77.4),
        ("ELECTRA-base", "electra-base-discriminator", "glue", 82.7), ("ELECTRA-large", None, "glue", 85.2),
    ], aggregation="GLUE test-server score as the README prints it"),
    # BERT's own test figures.
    *_figures("bert-test", [("BERT-base", "bert-base", "glue", 79.6), ("BERT-large", "bert-large", "glue", 82.1)],
              aggregation="mean of 8 GLUE test-server scores (no WNLI), BERT's Table 1 'Average'"),
    # NeoBERT: its GLUE sweep and its one MTEB recipe for every model.
    *_figures("neobert", [("NeoBERT (4096)", None, "glue", 89.0)]),
    *_figures("neobert-mteb", [
        ("NeoBERT (4096)", None, "mteb-v1-eng", 51.3), ("ModernBERT-base", "modernbert-base", "mteb-v1-eng", 45.0),
        ("ModernBERT-large", "modernbert-large", "mteb-v1-eng", 46.9),
        ("BERT-large", "bert-large", "mteb-v1-eng", 49.1), ("RoBERTa-large", "roberta-large", "mteb-v1-eng", 48.9),
        ("DeBERTa-v3-large", "deberta-v3-large", "mteb-v1-eng", 27.1),
    ], aggregation="MTEB (English, v1) average after NeoBERT's 2,000-step contrastive fine-tune, one recipe for all"),
    # DeBERTa-v3 model cards: MNLI-m and SQuAD2.0.
    *_figures("deberta-cards", [
        (f"DeBERTa-v3-{size}", preset, metric, value,
         {"source": _DEBERTA_CARD.format(size=size),
          "note": "The card's MNLI-m changed across commits: 88.2 -> 88.1 -> 88.3 (9f15d06, 6f8dde6)."
          if size == "small" and metric == "mnli" else ""})
        for size, preset, mnli, f1, em in (("xsmall", "deberta-v3-xsmall", 88.1, 84.8, 82.0),
                                           ("small", None, 88.3, 82.8, 80.4),
                                           ("base", "deberta-v3-base", 90.6, 88.4, 85.4),
                                           ("large", "deberta-v3-large", 91.8, 91.5, 89.0))
        for metric, value in (("mnli", mnli), ("squad2-f1", f1), ("squad2-em", em))
    ]),
])

# ----------------------------------------------------------------------------- training compute
COMPUTE: tuple[Compute, ...] = (
    Compute("ModernBERT-base", "modernbert-base", 245.6, 8, "H100", False,
            "194.2 + 39.9 + 11.5 = 245.6 h on 8 H100s (the table's three training phases)",
            f"{_MODERNBERT}, Table 3, 'Total Time (hours)'"),
    Compute("ModernBERT-large", "modernbert-large", 527.7, 8, "H100", False,
            "425.3 + 80.7 + 21.7 = 527.7 h on 8 H100s (the table's three training phases)",
            f"{_MODERNBERT}, Table 3, 'Total Time (hours)'"),
    Compute("mmBERT-small", "mmbert-small", 240.0, 8, "H100", True, "approximately 10 days on 8 H100s",
            "mmBERT README (JHU-CLSP/mmBERT)"),
    Compute("mmBERT-base", "mmbert-base", 960.0, 8, "H100", True, "approximately 40 days on 8 H100s",
            "mmBERT README (JHU-CLSP/mmBERT)"),
    Compute("NeoBERT (4096)", None, 750.0, 8, "H100", True, "about 6,000 H100-hours on 8 GPUs (1.05M steps)",
            f"{_NEOBERT}, Appendix A"),
    Compute("MosaicBERT-base", None, 1.13, 8, "A100", False, "1.13 h on 8 A100s, to 79.6 GLUE",
            "Portes et al. 2023, MosaicBERT (arXiv 2312.17482)"),
    Compute("BERT-large (400k steps)", "bert-large", 34.0, None, "TPU v3", False,
            "34 h for 400k steps on the same TPUs as ALBERT-xxlarge (the count is not printed: 64 to 512 chips "
            "across the paper's runs)", f"{_ALBERT}, Table 6"),
    Compute("ALBERT-xxlarge (125k steps)", "albert-xxlarge", 32.0, None, "TPU v3", False,
            "32 h for 125k steps on the same TPUs as BERT-large's 400k", f"{_ALBERT}, Table 6"),
)
COMPUTE_DEVICE = "H100"  # the one accelerator enough published figures share for a "per GPU-hour" axis


# ----------------------------------------------------------------------------- look-ups
def fmt_value(value: float) -> str:
    """A score as printed: one decimal (88.0), two where the figure has them (a computed 89.96)."""
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.2f}"


def figures(metric: str | None = None, protocol: str | None = None, preset: str | None = None,
            model: str | None = None) -> list[Figure]:
    """The figures matching every given key, in the record's order."""
    return [f for f in FIGURES if (metric is None or f.metric == metric) and (protocol is None or f.protocol ==
            protocol) and (preset is None or f.preset == preset) and (model is None or f.model == model)]


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {str(metric)[:40]!r}")
    return metric


def check_protocol(protocol: str) -> str:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {str(protocol)[:40]!r}")
    return protocol


def protocols_of(metric: str) -> list[str]:
    """The protocols with figures of ``metric``, the one with the most models first (then the record's order)."""
    check_metric(metric)
    counts: dict[str, int] = {}
    for f in figures(metric):
        counts[f.protocol] = counts.get(f.protocol, 0) + 1
    return sorted(counts, key=lambda p: -counts[p])


def default_protocol(metric: str) -> str:
    """The protocol a chart of ``metric`` shows by default: the one with the most models."""
    return protocols_of(metric)[0]


def covered_presets() -> list[str]:
    """Every preset with at least one published figure, in the record's order."""
    return list(dict.fromkeys(f.preset for f in FIGURES if f.preset is not None))


def compute_of(model: str) -> Compute | None:
    """The published training compute of the model named so (as in `Figure.model`), or None."""
    return next((c for c in COMPUTE if c.model == model), None)


def published_for(presets: Iterable[str]) -> list[Figure]:
    """Every figure of these presets (one architecture may have several: ALBERT v1 and v2, ModernBERT-base and
    Ettin-150m), in the record's order."""
    wanted = set(presets)
    return [f for f in FIGURES if f.preset in wanted]
