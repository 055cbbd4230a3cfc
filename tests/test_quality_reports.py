"""The published figures where a config's architecture has them: the Explorer's JSON report and Compare's pins
(additive: the report's schema keys and round trip are unchanged, tests/test_exports.py)."""

from __future__ import annotations

import json

from albert_core import Workload
from albert_core.configuration.presets import ALL_PRESETS, PRESETS
from albert_core.counting.report import analyze, result_from_dict
from albert_core.quality_cost import presets_of, published_quality
from ui.explorer.exports import report_json


def test_json_report_carries_the_published_figures_of_the_architecture():
    result = analyze(PRESETS["albert-xxlarge"].replace(head="pretraining"), Workload())
    data = json.loads(report_json(result))
    published = data["published_quality"]
    assert published["presets"] == ["albert-xxlarge"]
    avg = {(f["model"], f["protocol"]): f["value"] for f in published["figures"] if f["metric"] == "albert-avg"}
    assert avg[("ALBERT-xxlarge", "albert-t2")] == 88.7 and avg[("ALBERT-xxlarge v2", "albert-readme")] == 90.9
    assert all(f["source"] and f["split"] in ("dev", "test") for f in published["figures"])
    assert [c["model"] for c in published["training_compute"]] == ["ALBERT-xxlarge (125k steps)"]
    # everything else is the typed result's export, and it still round-trips
    assert {k: v for k, v in data.items() if k != "published_quality"} == result.to_dict()
    assert result_from_dict(data) == result


def test_json_report_of_an_unpublished_config_has_no_score():
    result = analyze(PRESETS["albert-base"].replace(num_layers=6), Workload())
    assert presets_of(result.config) == ()
    assert "published_quality" not in json.loads(report_json(result))
    assert published_quality(ALL_PRESETS["eurobert-2.1b"]) is None  # a preset with nothing published


def test_compare_pins_show_their_published_figures(app):
    at = app(query={"pin": "bert-large,albert-xxlarge,H.512~L.4"}, page="ui/compare/page.py")
    assert not at.exception
    [table] = [d.value for d in at.dataframe if "fine-tuned by" in d.value.columns]
    assert set(table["pin"]) == {"bert-large", "albert-xxlarge"}  # the custom pin has none
    t2 = table[(table["metric"] == "albert-avg") & (table["protocol"] == "ALBERT Table 2 (125k steps)")]
    assert list(zip(t2["pin"], t2["value"], strict=True)) == [("bert-large", "85.2"), ("albert-xxlarge", "88.7")]
    assert any("Published quality of the pinned architectures" in e.label for e in at.expander)
