"""The probe's cheap baselines as measured (albert_core.lab.probe_baselines): naive Bayes against a hand
computation, the random splits, and the shipped figures beside probe.json's."""

from __future__ import annotations

import json
import math

import pytest

from albert_core.lab import probe, probe_baselines
from albert_core.lab.probe import Sentences


def test_naive_bayes_scores_as_computed_by_hand():
    data = Sentences(("good fun", "good", "bad boring", "bad"), (1, 1, 0, 0),
                     ("good", "bad boring", "fun bad"), (1, 0, 1))
    # features of train: bad, bad boring, boring, fun, good, good fun (F = 6); positive sentences hold good twice,
    # fun and "good fun" once (4 in all), negative ones bad twice, boring and "bad boring" once (4)
    # "fun bad": positive 0.5 x (1+1)/(4+6) x (0+1)/(4+6) = 0.01, negative 0.5 x 1/10 x 3/10 = 0.015: negative,
    # wrong; "good" and "bad boring" right
    assert probe_baselines.naive_bayes(data) == pytest.approx(2 / 3)
    # at the regression's cut (seen in two sentences or more) only "good" and "bad" remain: "fun bad" is then
    # negative 0.5 x 3/(2+2) against 0.5 x 1/4 positive, still wrong
    assert probe_baselines.naive_bayes(data, min_count=2) == pytest.approx(2 / 3)


def test_a_random_split_partitions_the_same_sentences_at_the_shipped_dev_size():
    data = probe.sentences()
    one, again, other = (probe_baselines.random_split(data, s) for s in (3, 3, 4))
    assert one == again and one.dev_texts != other.dev_texts
    assert len(one.dev_texts) == len(data.dev_texts) and len(one.train_texts) == len(data.train_texts)
    pairs = sorted(zip(one.train_texts + one.dev_texts, one.train_labels + one.dev_labels, strict=True))
    assert pairs == sorted(zip(data.train_texts + data.dev_texts, data.train_labels + data.dev_labels, strict=True))


def test_the_measured_figures_are_read_only_for_these_sentences(tmp_path):
    doc = {"data": probe.data_fingerprint(), "environment": {"cpu": "a test CPU"}, "cpu_seconds": 12.0,
           "shipped_split": {"bag_of_words": {"accuracy": 0.78}, "naive_bayes": 0.79},
           "random_splits": {"dev_sentences": 1694, "splits": [
               {"seed": 0, "bag_of_words": 0.75, "naive_bayes": 0.77},
               {"seed": 1, "bag_of_words": 0.77, "naive_bayes": 0.78}]}}
    path = tmp_path / "probe_baselines.json"
    path.write_text(json.dumps(doc))
    m = probe.measured_baselines.__wrapped__(path)
    assert m.splits_mean == pytest.approx(0.76) and m.splits_sd == pytest.approx(math.sqrt(2) / 100)
    assert m.nb_splits_mean == pytest.approx(0.775) and m.cpu == "a test CPU"
    path.write_text(json.dumps({**doc, "data": {**doc["data"], "sha256": "0" * 16}}))  # other sentences
    assert probe.measured_baselines.__wrapped__(path) is None


def test_the_shipped_figures_beside_the_shipped_probes():
    m = probe.measured_baselines()
    assert m is not None, "albert_core/lab/reference/probe_baselines.json is shipped with the probes"
    shipped = json.loads(probe.SHIPPED_FILE.read_text(encoding="utf-8"))["baselines"]["bag_of_words"]
    # recomputed on the shipped split when the figures were measured: the very figure probe.json ships
    assert m.bag_of_words == pytest.approx(shipped["accuracy"], abs=1e-9)
    assert m.split_seeds == tuple(range(len(m.split_seeds))) and len(m.split_seeds) >= 20
    assert m.dev_sentences == 1694 and m.cpu and m.cpu_seconds > 0
    assert all(0.70 < x < 0.85 for x in (m.naive_bayes, *m.split_bag_of_words, *m.split_naive_bayes))
    words = probe.baselines_words(shipped["accuracy"], 0.486, 1694)
    assert f"{100 * m.splits_mean:.1f} % +- {100 * m.splits_sd:.1f} over {len(m.split_seeds)} random splits" in words
    assert f"naive Bayes {100 * m.naive_bayes:.1f} %" in words
