"""The config doctor on the official ALBERT v1 and v2 configs (tests/helpers/facts.py, from their published
values) and on hand-made configs with one trap each: every applicable trap flagged, none that does not
apply."""

from __future__ import annotations

import json

import pytest

from albert_core.cli.main import main
from albert_core.review.doctor import diagnose
from tests.helpers.facts import OFFICIAL_SIZES, official

ALWAYS = {"groups-all-shared", "inputs-embeds-width", "vocab-table-peak", "params-vs-compute"}


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("size", list(OFFICIAL_SIZES))
def test_official_configs(version, size):
    result = diagnose(official(version, size))
    zero_dropout = version == "v2" or size == "xxlarge"
    assert result.codes() == ALWAYS | ({"dropout-zero"} if zero_dropout else set())
    assert all(f.severity == "info" for f in result.findings)  # the released configs carry no warning


def test_official_numbers():
    """albert-base-v2 (MaskedLM head): 11,221,680 parameters hand-counted; its BERT twin's MLM head is V x H."""
    findings = {f.code: f for f in diagnose(official("v2", "base")).findings}
    shared = findings["groups-all-shared"]
    assert "11.22M parameters" in shared.number
    # 11 more layers of 7,087,872 parameters each when unshared
    assert "+77.97M" in shared.effect
    table = findings["vocab-table-peak"]
    assert "92.2 MB" in table.number and "15.4 MB" in table.number  # 4 x 30,000 x 768 and 4 x 30,000 x 128


BASE = official("v2", "base")
TRAPS = [
    ({"num_hidden_groups": 5}, {"groups-uneven"}, {"groups-all-shared"}),
    ({"num_hidden_groups": 4}, {"groups-partial"}, {"groups-all-shared"}),
    ({"num_hidden_groups": 12}, {"groups-unshared"}, {"groups-all-shared"}),
    ({"inner_group_num": 2}, {"inner-groups"}, set()),
    ({"embedding_size": 1024}, {"embedding-wider"}, {"vocab-table-peak"}),
    ({"embedding_size": 768}, set(), {"vocab-table-peak", "inputs-embeds-width"}),
    ({"num_attention_heads": 10}, {"heads-not-dividing"}, set()),
    ({"intermediate_size": 2048}, {"ffn-not-4h"}, set()),
    ({"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}, set(), {"dropout-zero"}),
    ({"vocab_size": 500_000}, {"vocab-table-peak"}, set()),
]


@pytest.mark.parametrize(("changes", "added", "removed"), TRAPS,
                         ids=lambda v: str(sorted(v)) if isinstance(v, set) else str(v))  # sets: one order everywhere
def test_each_trap_alone(changes, added, removed):
    expected = (ALWAYS | {"dropout-zero"} | added) - removed
    assert diagnose({**BASE, **changes}).codes() == expected


def test_uneven_groups_say_which_layers_share():
    finding = next(
        f for f in diagnose({**BASE, "num_hidden_groups": 5}).findings if f.code == "groups-uneven"
    )
    # int(i / 2.4): layers 0-2 -> 0, 3-4 -> 1, 5-7 -> 2, 8-9 -> 3, 10-11 -> 4
    assert (
        "group 0: layers 0-2; group 1: layers 3-4; group 2: layers 5-7; group 3: layers 8-9" in finding.what
    )
    assert finding.severity == "warning" and "num_hidden_groups = 4" in finding.fix


def test_large_vocabulary_is_a_warning():
    finding = next(
        f for f in diagnose({**BASE, "vocab_size": 500_000}).findings if f.code == "vocab-table-peak"
    )
    assert finding.severity == "warning" and "1.5 GB" in finding.number  # 4 x 500,000 x 768


def test_sequence_longer_than_positions():
    result = diagnose(BASE, seq_len=1024)
    finding = next(f for f in result.findings if f.code == "positions-short")
    assert finding.severity == "error" and result.findings[0] is finding
    assert "+65.54k" in finding.effect  # 512 more rows of E = 128
    assert "positions-short" not in diagnose(BASE, seq_len=512).codes()


def test_heads_not_dividing_is_fixed_for_the_rest():
    result = diagnose({**BASE, "num_attention_heads": 10})
    assert (
        result.config is not None and result.config.num_heads == 12
    )  # 768's divisor with head size nearest 64


def test_invalid_config_is_an_error_finding():
    result = diagnose({**BASE, "num_hidden_groups": 13})
    assert result.config is None and [f.code for f in result.findings] == ["invalid"]
    assert "num_hidden_groups" in result.findings[0].what


def test_absent_dropout_takes_transformers_default():
    data = {k: v for k, v in BASE.items() if "dropout" not in k}
    finding = next(f for f in diagnose(data).findings if f.code == "dropout-zero")
    assert "absent" in finding.source


def test_not_a_config():
    with pytest.raises(ValueError, match="model_type must be one of 'albert', 'bert', .*got 'gpt2'"):
        diagnose({"model_type": "gpt2"})
    with pytest.raises(ValueError, match="not valid JSON"):
        diagnose(b"{not json")


def test_cli(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**BASE, "num_hidden_groups": 5}))
    assert main(["doctor", str(path), "--json"]) == 0
    codes = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert "groups-uneven" in codes
    assert main(["doctor", str(tmp_path), "--seq-len", "1024"]) == 0
    out = capsys.readouterr().out
    assert "[error] positions-short" in out and "[warning] groups-uneven" in out
    with pytest.raises(SystemExit) as exc:
        main(["doctor", str(tmp_path / "missing.json")])
    assert exc.value.code == 2 and "config path must be a config.json file" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the encoders after BERT
def _family_json(name: str, **extra):
    from albert_core.configuration.hf_config import config_to_hf
    from albert_core.configuration.presets import ENCODER_PRESETS

    return config_to_hf(ENCODER_PRESETS[name].replace(head="masked-lm")) | extra


def test_modernbert_traps_with_their_numbers():
    found = {f.code: f for f in diagnose(_family_json("modernbert-base", position_embedding_type="absolute"),
                                         1024).findings}
    assert {"intermediate-size-meaning", "local-window", "absolute-without-table"} <= set(found)
    assert "ffn-not-4h" not in found and "sliding-window-mismatch" not in found  # a GLU's I is not a dense FFN's
    # the GLU's three matrices: 3 x 768 x 1152 per layer = 2,654,208
    assert "2.65M" in found["intermediate-size-meaning"].number
    assert "sliding_window is half of it, 64" in found["local-window"].what
    assert "14 of 22 layers are local" in found["local-window"].what  # layers 0, 3, ..., 21 are global: 8
    assert "8,192 x 768" in found["absolute-without-table"].number


def test_a_sliding_window_key_is_read_as_transformers_5_reads_it():
    """transformers 5's ModernBertConfig sets local_attention = 2 x sliding_window when a file writes it (4 ignored
    the key): the window counted is 256 for sliding_window 128 beside local_attention 128, and the doctor says so."""
    transformers = pytest.importorskip("transformers")
    data = _family_json("modernbert-base", sliding_window=128)
    assert data["local_attention"] == 128
    assert transformers.ModernBertConfig(**data).local_attention == 256  # the oracle: transformers 5 itself
    result = diagnose(data, 1024)
    assert result.config.local_window == 256
    found = {f.code: f for f in result.findings}
    assert "sliding_window is half of it, 128" in found["local-window"].what
    mismatch = found["sliding-window-mismatch"]
    assert mismatch.severity == "warning" and "local_attention = 2 x sliding_window = 256" in mismatch.what
    assert "local_attention = 256" in mismatch.fix and "local_attention = 128" in mismatch.fix


def test_eurobert_untied_and_grouped_query_numbers():
    found = {f.code: f for f in diagnose(_family_json("eurobert-610m")).findings}
    assert "128,256 x 1152" in found["untied-decoder"].what
    assert "(-147.75M)" in found["untied-decoder"].effect  # 128,256 x 1,152 = 147,750,912, no decoder bias
    # K and V at 6 x 64 = 384 instead of 1,152: 2 x 1,152 x 768 x 26 layers = 46,006,272 fewer weights
    assert "(-46.01M)" in found["grouped-query"].effect


def test_sizes_off_the_hardware_multiples_and_embedding_share():
    found = {f.code: f for f in diagnose(_family_json("xlm-roberta-base", intermediate_size=3070)).findings}
    assert "250,002 = 3906 x 64 + 18" in found["vocab-not-multiple"].number
    assert found["ffn-not-multiple"].fix == "intermediate_size = 3,072"
    share = found["embedding-share"]
    assert "69%" in share.what  # 250,002 x 768 + 514 x 768 + 768 + 2 x 768 of 278M


def test_embedding_share_says_which_way_the_flops_go():
    """Issue 42: a 60.7 % FLOP reduction (the E-wide MLM decoder of a masked-LM head) read "FLOPs stay within
    60.7 %"; the finding says the direction and only says "within" for a change that is nearly nothing."""
    from albert_core.configuration.coerce import albertize
    from albert_core.configuration.presets import ENCODER_PRESETS
    from albert_core.counting.flops import count_flops

    cfg = ENCODER_PRESETS["xlm-roberta-base"].replace(head="masked-lm")
    ratio = count_flops(albertize(cfg, sharing=None), 1, 512).forward / count_flops(cfg, 1, 512).forward
    assert ratio < 0.9  # the decoder at E = 128 instead of H = 768
    what = {f.code: f for f in diagnose(_family_json("xlm-roberta-base"), 512).findings}["embedding-share"].what
    assert "stay within" not in what
    assert f"forward FLOPs fall by {1 - ratio:.1%}" in what


def test_sharing_scheme_keys_are_said_to_be_ignored():
    """A config.json with the keys of a sharing scheme since ALBERT: transformers reads none of them, so the model
    it builds (and every number of the diagnosis) has none; the finding says so, with what the scheme would count."""
    from albert_core.configuration.coerce import coerce
    from albert_core.counting.params import count_params
    from albert_core.format import fmt_params

    plain = diagnose(official("v2", "base"))
    result = diagnose({**official("v2", "base"), "lora_rank": 8, "repeat": 2})
    assert result.config == plain.config  # the model transformers builds: no scheme
    assert result.codes() == plain.codes() | {"scheme-keys-ignored"}
    (f,) = [f for f in result.findings if f.code == "scheme-keys-ignored"]
    assert f.severity == "warning" and "repeat = 2, lora_rank = 8" in f.what and f.source == "repeat, lora_rank"
    schemed = coerce({"lora_rank": 8, "repeat": 2}, plain.config).config
    assert count_params(schemed).total == count_params(plain.config).total + 24 * 8 * (4 * 1536 + 2 * 3840)
    assert f"the explorer counts {fmt_params(count_params(schemed).total)} parameters" in f.effect
    assert fmt_params(count_params(plain.config).total) in f.number


@pytest.mark.parametrize(("keys", "effect"), [
    ({"repeat": 99}, "as written they form no model here: repeat must be a whole number between 1 and 16"),
    ({"lora_rank": "8"}, "as written they form no model here: lora_rank must be"),
    ({"lora_rank": 0, "block_order": "groups"}, "the values are ALBERT's own scheme: nothing changes"),
])
def test_scheme_keys_that_form_no_scheme(keys, effect):
    (f,) = [f for f in diagnose({**official("v2", "base"), **keys}).findings if f.code == "scheme-keys-ignored"]
    assert f.effect.startswith(effect), f.effect
