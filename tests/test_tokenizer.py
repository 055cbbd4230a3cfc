"""The shipped subword tokenizer: determinism across processes, ids < V, pair layout and truncation
checked against transformers' own BertTokenizer built from the same vocabulary, checkpoint tokenizers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from albert_core import PRESETS
from albert_core.configuration.config import ModelConfig
from albert_core.text.encoding import SPECIAL_TOKENS, encode, shipped_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TEXT = "ALBERT-xxlarge shares 4096-wide weights across layers; is it faster? Not really!"
PAIR = "The second segment follows the first one."


def _bert_tokenizer(tmp_path: Path, vocab: dict[str, int]):
    """transformers' BertTokenizer over a vocab.txt: an independent BERT pipeline (lower-casing,
    punctuation split, greedy WordPiece, [CLS] A [SEP] B [SEP], longest_first truncation)."""
    from transformers import BertTokenizer

    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(sorted(vocab, key=vocab.get)) + "\n", encoding="utf-8")
    return BertTokenizer(str(path), do_lower_case=True)


def test_same_ids_in_fresh_processes():
    code = (
        "import json; from albert_core.configuration.config import ModelConfig; from albert_core.text.encoding import encode;"
        f"print(json.dumps([encode({TEXT!r}, ModelConfig(vocab_size=v), 64, text_pair={PAIR!r}).ids"
        " for v in (30000, 300)]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                                  cwd=ROOT).stdout)
        for _ in range(2)
    ]
    here = [encode(TEXT, ModelConfig(vocab_size=v), 64, text_pair=PAIR).ids for v in (30000, 300)]
    assert runs[0] == runs[1] == here


@pytest.mark.parametrize("V", [5, 12, 90, 300, 30_000])
def test_ids_below_vocab_size(V):
    cfg = ModelConfig(vocab_size=V)
    enc = encode(TEXT + " " + PAIR, cfg, 128)
    assert max(enc.ids) < V
    assert shipped_tokenizer(V).get_vocab_size() <= V
    assert enc.ids[0] == SPECIAL_TOKENS.index("[CLS]") and enc.ids[-1] == SPECIAL_TOKENS.index("[SEP]")


SHIPPED_CFG = ModelConfig(vocab_size=500)  # below LAB_MIN_VOCAB: the small shipped WordPiece


def test_real_subwords_of_the_shipped_wordpiece():
    vocab = shipped_tokenizer(30_000).get_vocab()
    assert 300 < len(vocab) <= 8_000
    assert [vocab[t] for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    enc = encode("the layers", SHIPPED_CFG, 16)
    assert enc.tokens == ["[CLS]", "the", "layer", "##s", "[SEP]"] and "shipped WordPiece" in enc.source
    assert "[UNK]" not in encode("Digits 0123456789 and #$%&!", SHIPPED_CFG, 64).tokens


@pytest.mark.parametrize(("preset", "kind", "name"), [("albert-base", "unigram", "Unigram"),
                                                      ("bert-base", "wordpiece", "WordPiece")])
def test_full_size_models_read_the_lab_tokenizer_of_their_family(preset, kind, name):
    from albert_core.text.tokenizers import lab_tokenizer

    cfg = PRESETS[preset]  # V 30,000 / 30,522: the largest shipped lab size below V, 8,192
    ref = lab_tokenizer(kind, 8192).encode("the layers", add_special_tokens=False)
    enc = encode("the layers", cfg, 16)
    assert enc.tokens == ["[CLS]", *ref.tokens, "[SEP]"] and enc.ids[1:-1] == ref.ids
    assert enc.ids[0] == SPECIAL_TOKENS.index("[CLS]") and enc.ids[-1] == SPECIAL_TOKENS.index("[SEP]")
    assert f"lab {name} tokenizer (8,192 entries" in enc.source
    assert "[UNK]" not in encode("Digits 0123456789 and #$%&!", cfg, 64).tokens


@pytest.mark.parametrize("max_len", [128, 12, 9])
@pytest.mark.parametrize("lab", [False, True])
def test_pair_matches_transformers_bert_tokenizer(tmp_path, max_len, lab):
    from albert_core.text.tokenizers import lab_tokenizer

    cfg = PRESETS["bert-base"] if lab else SHIPPED_CFG
    vocab = (lab_tokenizer("wordpiece", 8192) if lab else shipped_tokenizer(cfg.vocab_size)).get_vocab()
    bert = _bert_tokenizer(tmp_path, vocab)
    ref = bert(TEXT, PAIR, truncation="longest_first", max_length=max_len)
    enc = encode(TEXT, cfg, max_len, text_pair=PAIR)
    assert enc.ids == ref["input_ids"]
    assert enc.token_type_ids == ref["token_type_ids"]
    assert enc.attention_mask == ref["attention_mask"] == [1] * len(enc)
    assert enc.tokens == bert.convert_ids_to_tokens(ref["input_ids"])
    assert len(enc) <= max_len
    single = encode(TEXT, cfg, max_len)
    assert single.ids == bert(TEXT, truncation=True, max_length=max_len)["input_ids"]
    assert set(single.token_type_ids) == {0}


def test_pair_layout():
    enc = encode("a b", SHIPPED_CFG, 32, text_pair="c d e")
    assert enc.tokens == ["[CLS]", "a", "b", "[SEP]", "c", "d", "e", "[SEP]"]
    assert enc.token_type_ids == [0, 0, 0, 0, 1, 1, 1, 1]
    t = enc.tensors()
    assert t["input_ids"].shape == (1, 8) and t["token_type_ids"].tolist() == [enc.token_type_ids]


def test_checkpoint_tokenizer_is_used(tmp_path):
    from transformers import BertTokenizer

    words = list(SPECIAL_TOKENS) + ["hello", "world", "##s", "again", ",", "!"]
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    BertTokenizer(str(tmp_path / "bare" / "vocab.txt")).save_pretrained(tmp_path / "ckpt")
    ref = BertTokenizer.from_pretrained(tmp_path / "ckpt", local_files_only=True)
    cfg = ModelConfig(vocab_size=len(words))
    enc = encode("Hello worlds, again!", cfg, 16, text_pair="hello", checkpoint=tmp_path / "ckpt")
    assert enc.ids == ref("Hello worlds, again!", "hello")["input_ids"]
    assert enc.tokens[:4] == ["[CLS]", "hello", "world", "##s"]
    assert "checkpoint" in enc.source
    with pytest.raises(ValueError, match="vocab_size"):
        encode("hello", ModelConfig(vocab_size=5), 16, checkpoint=tmp_path / "ckpt")
    # a bare vocab.txt is read as an uncased BERT vocabulary
    assert encode("Hello worlds", cfg, 16, checkpoint=tmp_path / "bare").ids == enc.ids[:4] + [3]
    # a folder without tokenizer files falls back to the shipped tokenizer
    (tmp_path / "none").mkdir()
    assert "shipped" in encode("hello", cfg, 16, checkpoint=tmp_path / "none").source


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_len": 1}, "max_len"),
        ({"max_len": 2, "text_pair": "b"}, "max_len"),
        ({"max_len": 513}, "max_position_embeddings"),
        ({"max_len": True}, "max_len"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        encode("a", ModelConfig(), **kwargs)


def test_vocab_too_small_for_specials():
    with pytest.raises(ValueError, match="vocab_size must be a whole number >= 5"):
        encode("a", ModelConfig(vocab_size=4), 8)
