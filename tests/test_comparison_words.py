"""Sentences that compare two configs follow the numbers beside them (issue #34): every "down", "up" or "nearly
equal" agrees with the sign and size of the change it describes, one threshold for every page
(`albert_core.format.NEARLY_EQUAL`), and a pair of configs that are each other's twin gets one answer whichever of
the two the sidebar holds. Expected directions come from the counts (the metric's own value / base - 1), never
from the sentence builders."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from albert_core import PRESETS, Workload
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.hf_config import config_from_json_bytes
from albert_core.configuration.presets import ALL_PRESETS, config_name
from albert_core.counting.flops import count_flops
from albert_core.counting.report import analyze
from albert_core.format import NEARLY_EQUAL, change_words, escape_markdown
from albert_core.hardware.albertized import compare_albertized
from tests.helpers.facts import official
from tests.helpers.strategies import configs
from ui.compare import figures as compare_figures
from ui.explorer import figures as figures_explorer
from ui.hardware.figures import speed_answer
from ui.hardware.questions import compare_speed

WORDS = r"(down|up|nearly equal)"
ALBERT_BASE_V2 = config_from_json_bytes(json.dumps(official("v2", "base")).encode())  # as the sidebar uploads it


def _agrees(word: str, value: float, base: float) -> bool:
    """Whether a comparing word is true of value against base: 'down' below, 'up' above, 'nearly equal' within
    NEARLY_EQUAL of it (and a change of NEARLY_EQUAL or more is never called nearly equal)."""
    change = value / base - 1
    return {"down": change <= -NEARLY_EQUAL, "up": change >= NEARLY_EQUAL,
            "nearly equal": abs(change) < NEARLY_EQUAL}[word]


@pytest.mark.parametrize("value, base", [(1, 1), (0.5, 1), (2, 1), (1.019, 1), (0.981, 1), (1.02, 1), (0.98, 1),
                                         (23.38, 28.40), (1e-9, 1), (7, 1e-9)])
def test_change_words_follow_the_change(value, base):
    (word,) = re.match(WORDS, change_words(value, base)).groups()
    assert _agrees(word, value, base)


@settings(max_examples=120, deadline=None)
@given(cfg=configs(family="albert"), batch=st.integers(1, 4))
def test_every_bullet_of_the_explorer_comparison_agrees_with_its_metric(cfg, batch):
    """Each bullet's word agrees with the change the metric beside it shows, and the closing sentence claims
    'smaller' and 'not faster' only when the parameter and FLOP bullets say so."""
    result = analyze(cfg, Workload(batch=batch, seq_len=min(16, cfg.max_seq_len)))
    text = figures_explorer.twin_summary(result)
    said = {}
    for name, value, base, _ in figures_explorer.twin_metrics(result):
        (word,) = re.search(rf"\*\*{name}: {WORDS}", text).groups()
        assert _agrees(word, value, base), (name, word, value, base)
        said[name] = word
    if "a *smaller* model" in text:
        assert said["Parameters"] == "down"
    if "not a *faster* one" in text:
        assert said["Forward FLOPs"] == "nearly equal"
    if "*slower*" in text:
        assert said["Forward FLOPs"] == "up"


def test_the_uploaded_albert_base_v2_summary_names_the_e_wide_decoder():
    """albert-base-v2 (AlbertForMaskedLM): its MLM decoder is E x V, BERT's H x V, so 2·S·V·(H - E) FLOPs fewer
    per sequence: the summary says the FLOPs are down, names the decoder, and never calls the pair nearly equal."""
    result = analyze(ALBERT_BASE_V2, Workload())
    text = figures_explorer.twin_summary(result)
    S, V, H, E = 128, 30_000, 768, 128
    decoder = 2 * S * V * (E - H)
    assert "**Forward FLOPs: down" in text and f"MLM decoder {decoder / 1e9:.1f} GFLOP" in text
    assert "not a *faster* one" not in text and "nearly equal (this page" not in text


# ----------------------------------------------------------------------------- one pair, one answer
PAIR_PRESETS = [*PRESETS, "roberta-base", "electra-base-discriminator", "modernbert-base", "deberta-v3-xsmall"]
WORKLOADS = [Workload(dtype="fp32"), Workload(dtype="bf16", precision="mixed"),
             Workload(dtype="fp16", precision="mixed", checkpointing=True)]


@pytest.mark.parametrize("hardware", ["h100", "a100"])
@pytest.mark.parametrize("wl", WORKLOADS, ids=["fp32", "bf16-mixed", "fp16-mixed-ckpt"])
@pytest.mark.parametrize("name", PAIR_PRESETS)
def test_a_pair_gets_one_speed_answer_from_either_side(name, wl, hardware):
    """A preset and the config it is compared with: asked from the partner, the same pair, the same ratios
    and the same sentence when the partner's partner is the preset; otherwise the two answers name different
    configs (a name shows every field that differs: V, the activation, the head)."""
    cfg = ALL_PRESETS[name]
    mine = compare_speed(cfg, wl, hardware)
    assert mine is not None  # every preset has a pair (a BERT with GELU has its ALBERT counterpart)
    assert cfg in (mine.albert, mine.bert) and mine.albert != mine.bert
    partner = mine.bert if cfg == mine.albert else mine.albert
    theirs = compare_speed(partner, wl, hardware)
    if cfg in (theirs.albert, theirs.bert):
        assert (theirs.albert, theirs.bert) == (mine.albert, mine.bert)
        assert theirs.ratios == mine.ratios and speed_answer(theirs) == speed_answer(mine)
    else:  # e.g. ELECTRA-base (E = H): its ALBERTized twin's original keeps ELECTRA's own E = 128
        names = {config_name(c) for c in (mine.albert, mine.bert, theirs.albert, theirs.bert)}
        assert len(names) == 3 and escape_markdown(config_name(cfg)) in speed_answer(mine)


@pytest.mark.parametrize("name", ["albert-base", "albert-large", "albert-xlarge", "albert-xxlarge"])
def test_the_explorer_gives_an_albert_and_its_bert_twin_one_comparison(name):
    """The Explorer compares an ALBERT with its BERT twin, and a BERT with its ALBERT counterpart: for the twin of
    a paper ALBERT that counterpart is the ALBERT itself (ALBERT's own activation), so both pages show one
    comparison."""
    from albert_core.counting.report import albert_counterpart

    albert = PRESETS[name]
    twin = bert_twin(albert)
    assert albert_counterpart(twin) == albert
    assert figures_explorer.twin_summary(analyze(albert, Workload())) == figures_explorer.twin_summary(
        analyze(albert_counterpart(twin), Workload()))


def test_two_different_pairs_never_share_their_names():
    """albert-large (V = 30,000) against its BERT and bert-large (V = 30,522) against its ALBERT are two pairs:
    their answers name different configs, so different numbers never sit beside the same labels."""
    answers = {}
    for name in PRESETS:
        cmp = compare_speed(PRESETS[name], Workload(dtype="bf16", precision="mixed"), "h100")
        named = re.search(r"\): (.+) runs inference at .+ the speed of (.+?)\. ", speed_answer(cmp)).groups()
        answers.setdefault(named, set()).add(tuple(cmp.ratios.values()))
    assert all(len(ratios) == 1 for ratios in answers.values()), answers


@pytest.mark.parametrize("name", ["albert-large", "bert-large", "roberta-base"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_the_speed_verdict_follows_the_ratios_it_shows(name, dtype):
    cmp = compare_speed(ALL_PRESETS[name], Workload(dtype=dtype), "h100")
    text = speed_answer(cmp)
    shown = [float(r) for r in re.findall(r"([0-9.]+)x \(batch \d+\)", text)]
    assert len(shown) == len(cmp.ratios)
    verdict = re.search(r"\*\*Inference: (.+?)\*\*", text).group(1)
    if all(r < 1 - NEARLY_EQUAL for r in cmp.ratios.values()):
        assert "slower" in verdict
    elif all(r > 1 + NEARLY_EQUAL for r in cmp.ratios.values()):
        assert verdict == "yes, faster"
    elif all(abs(r - 1) < NEARLY_EQUAL for r in cmp.ratios.values()):
        assert "about the same" in verdict


def test_the_speed_answer_names_the_part_and_the_activation_that_differ():
    cmp = compare_speed(PRESETS["albert-large"], Workload(dtype="bf16", precision="mixed"), "h100")
    albert_s, bert_s = cmp.parts["elementwise"]
    assert albert_s > bert_s * (1 + NEARLY_EQUAL)  # gelu_new's element-wise work against GELU's
    assert "element-wise work" in speed_answer(cmp) and "gelu_new against gelu" in speed_answer(cmp)


# ----------------------------------------------------------------------------- Compare and the ALBERTized twin
@settings(max_examples=80, deadline=None)
@given(flops=st.lists(st.floats(1, 1e12), min_size=2, max_size=4), params=st.lists(st.integers(1, 10**9),
                                                                                   min_size=4, max_size=4))
def test_the_compare_takeaway_calls_flops_nearly_equal_only_within_the_threshold(flops, params):
    rows = [{"name": f"pin{i}", "params": p, "forward_flops": f, "training_memory": 1}
            for i, (p, f) in enumerate(zip(params, flops, strict=False))]
    df = compare_figures.compare_frame(rows)
    text = compare_figures.compare_takeaway(df)
    i = int(df["params"].idxmin())
    if i == 0:
        return
    change = df["forward_flops"].iloc[i] / df["forward_flops"].iloc[0] - 1
    if "nearly equal" in text:
        assert abs(change) < NEARLY_EQUAL
    elif "fewer forward FLOPs" in text:
        assert change <= -NEARLY_EQUAL
    else:
        assert change >= NEARLY_EQUAL


@pytest.mark.parametrize("name", ["roberta-base", "electra-small-discriminator", "modernbert-base"])
def test_the_albertized_sentence_names_what_makes_the_flops_differ(name):
    """An encoder with no MLM head: the twin's only extra matmul is the E->H projection (2·S·E·H per sequence);
    the sentence names it, and names no head."""
    cfg = ALL_PRESETS[name]
    twin = analyze(cfg, Workload()).twin.config
    pair = compare_albertized(cfg, twin, Workload())
    text = " ".join(pair.sentences())
    fo, ft = (count_flops(c, 1, 128).forward for c in (cfg, twin))
    E, H = twin.embedding_size, twin.hidden_size
    projection = 2 * 128 * E * H * (1 if cfg.embedding_size == H else 0)
    assert ft - fo == projection
    if projection:
        assert f"Embedding projection E→H +{projection / 1e6:.1f} MFLOP" in text
    assert "head" not in text.lower()
