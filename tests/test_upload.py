"""Start from a real model: a transformers config.json uploaded into the sidebar, checked like any input."""

from __future__ import annotations

import json
import re

import pytest

from albert_core import PRESETS
from albert_core.configuration.hf_config import MAX_CONFIG_BYTES, config_from_json_bytes, parse_config_json
from tests.helpers.facts import MODEL_COUNTS

# bert-base-uncased's config.json as published with the checkpoint (written out here, not generated)
BERT_BASE_UNCASED = {
    "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": False,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
    "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
    "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": True, "vocab_size": 30522,
}


def test_parse_rejects_what_is_not_a_config_object():
    with pytest.raises(ValueError, match="too large"):
        parse_config_json(b" " * (MAX_CONFIG_BYTES + 1), "upload")
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_config_json(b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", "upload")
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_config_json(b"[" * 100_000 + b"]" * 100_000, "upload")  # beyond the C parser's recursion
    with pytest.raises(ValueError, match="JSON object"):
        parse_config_json(b"[1, 2]", "upload")
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_config_json(b"{'model_type': 'bert'}", "upload")  # Python, not JSON: never evaluated
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_config_json(b"\xff\xfe{}", "upload")
    with pytest.raises(ValueError, match="model_type"):
        config_from_json_bytes(b'{"model_type": "gpt2"}', "upload")
    with pytest.raises(ValueError, match="hidden_size"):
        config_from_json_bytes(json.dumps({**BERT_BASE_UNCASED, "hidden_size": -5}).encode(), "upload")


LONG = "7" * 5000  # past Python's 4,300-digit limit of int(str)


@pytest.mark.parametrize("text, says", [
    ('{"model_type": "bert", "hidden_size": ' + LONG + "}", "hidden_size must be a whole number between 1 and 65,536"),
    ('{"model_type": "bert", "num_hidden_layers": -' + LONG + "}",
     "num_hidden_layers must be a whole number between 1 and 512"),
    ('{"model_type": "bert", "pad_token_id": ' + LONG + "}",
     "upload holds a number too long to be a setting (at 'pad_token_id')"),
    ('{"model_type": "bert", "id2label": {"0": [' + LONG + "]}}", "upload holds a number too long to be a setting"),
    (LONG, "upload holds a number too long to be a setting"),
], ids=["setting", "negative-setting", "other-key", "nested", "top-level"])
def test_an_integer_too_long_for_python_is_named_with_its_rule(text, says):
    with pytest.raises(ValueError) as err:
        config_from_json_bytes(text.encode(), "upload")
    assert says in str(err.value) and "5,000 digits" in str(err.value)
    assert "set_int_max_str_digits" not in str(err.value)


def test_a_published_config_gives_the_exact_model():
    cfg = config_from_json_bytes(json.dumps(BERT_BASE_UNCASED).encode())
    assert cfg.replace(head="model").to_dict() == PRESETS["bert-base"].to_dict()  # same model, MLM head
    assert cfg.head == "masked-lm"


def _upload(at, payload: bytes, name: str = "config.json"):
    at.file_uploader(key="sb_upload").set_value((name, payload, "application/json")).run()
    return at


def test_sidebar_upload_fills_every_field(app):
    at = _upload(app(), json.dumps({**BERT_BASE_UNCASED, "architectures": ["BertModel"]}).encode())
    assert not at.exception and not at.error
    assert at.query_params["family"] == "bert" and at.query_params["H"] == "768"
    assert at.selectbox(key="cfg_preset").value == "bert-base"
    total = next(m for m in at.metric if m.label == "Total parameters")
    assert f"{MODEL_COUNTS['bert-base']:,}" in total.help
    assert any("Loaded config.json: BERT H=768 L=12" in c.value.replace("\\", "") for c in at.sidebar.caption)
    at.slider(key="cfg_L").set_value(6).run()  # later edits still work; the upload does not re-apply
    assert not at.exception and at.query_params["L"] == "6"


@pytest.mark.parametrize("payload, says", [
    (b"[]", "JSON object"),
    (b"{not json", "not valid JSON"),
    (json.dumps({"model_type": "albert", "hidden_size": 16384, "num_attention_heads": 64,
                 "intermediate_size": 65536}).encode(), "the sidebar allows"),
    (json.dumps({"model_type": "albert", "num_hidden_groups": 13}).encode(), "num_hidden_groups"),
    (b'{"model_type": "albert", "hidden_size": ' + b"9" * 5000 + b"}",
     "hidden_size must be a whole number between 1 and 65,536, got a number of 5,000 digits"),
])
def test_sidebar_upload_refuses_with_a_message_and_keeps_the_view(app, payload, says):
    at = _upload(app(), payload, name="[x](javascript:1).json")
    assert not at.exception
    (err,) = [e for e in at.sidebar.error]
    assert says in err.value.replace("\\", "") and "Not loaded" in err.value
    assert "](" not in err.value  # the file name is shown as plain text, not a link
    assert at.query_params["H"] == "768" and at.query_params["family"] == "albert"  # unchanged


# ----------------------------------------------------------------------------- issue 39, item 4: hostile files
# Each file raised a TypeError on 66927f6 (in the doctor the sidebar runs first, or in the reader), or allocated
# hundreds of MB (a head_dim string multiplied by the head count) before anything was checked.
HOSTILE_FILES = [
    ({"model_type": ["albert"]}, "model_type"),
    ({"model_type": "deberta-v2", "relative_attention": True, "position_biased_input": False, "share_att_key": True,
      "norm_rel_ebd": "layer_norm", "position_buckets": 256, "pos_att_type": [None, None]}, "pos_att_type"),
    ({"model_type": "eurobert", "head_dim": {}}, "head_dim"),
    ({"model_type": "nomic_bert", "head_dim": "x" * 19_000, "hidden_size": 30_000, "num_attention_heads": 30_000},
     "num_attention_heads"),
]


@pytest.mark.parametrize("data, key", HOSTILE_FILES, ids=[k for _, k in HOSTILE_FILES])
def test_sidebar_upload_of_a_hostile_file_names_the_key(app, data, key):
    at = _upload(app(), json.dumps(data).encode())
    assert not at.exception
    (err,) = at.sidebar.error
    assert "Not loaded" in err.value and re.search(rf"{key}(\[\d+\])? must be", err.value.replace("\\", "")), err.value
    assert at.query_params["family"] == "albert" and at.query_params["H"] == "768"  # the view is kept


def _paste(at, text: str):
    at.text_area(key="doctor_paste").input(text).run()
    return at


def _page_text(at) -> str:
    return " ".join(e.value for kind in ("error", "markdown") for e in getattr(at, kind)).replace("\\", "")


@pytest.mark.parametrize("data, key", HOSTILE_FILES, ids=[k for _, k in HOSTILE_FILES])
def test_paste_box_of_a_hostile_file_names_the_key(app, data, key):
    at = _paste(app(), json.dumps(data))
    assert not at.exception
    assert re.search(rf"{key}(\[\d+\])? must be", _page_text(at))
    at.run()  # every rerun while the text stays reads it again: still a message
    assert not at.exception and re.search(rf"{key}(\[\d+\])? must be", _page_text(at))
