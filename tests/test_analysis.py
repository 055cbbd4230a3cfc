"""Analysis helpers: smoothness computed by hand, attention maps against transformers, saved-for-backward
bytes against a hand count, latency and throughput sanity, pre-training pairs and n-gram masking."""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np
import pytest
import torch
from torch import nn

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import config_to_hf
from albert_core.live import analysis as an
from albert_core.text import pretraining_inputs as pi
from albert_core.text.encoding import encode

TINY = ModelConfig(
    vocab_size=120, embedding_size=8, hidden_size=16, num_layers=3, num_heads=2, intermediate_size=24,
    max_position_embeddings=32,
)


@pytest.fixture(scope="module")
def tiny():
    from albert_core.live.model import build_model

    return build_model(TINY, batch=2, seq_len=32)


# ----------------------------------------------------------------------------- smoothness
def test_smoothness_by_hand():
    x0 = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])  # (B=1, T=2, H=2)
    x1 = torch.tensor([[[0.0, 1.0], [0.0, 3.0]]])
    x2 = torch.tensor([[[0.0, -2.0], [0.0, 3.0]]])
    df = an.layer_smoothness([x0, x1, x2])
    # layer 1: token 0 moves (1,0)->(0,1): distance sqrt 2, cos 0 (90 deg); token 1 (0,2)->(0,3): 1, cos 1 (0 deg)
    # layer 2: token 0 (0,1)->(0,-2): distance 3, cos -1 (180 deg); token 1 unchanged: 0, cos 1
    assert df["layer"].tolist() == [1, 2]
    assert df["l2_distance"].tolist() == pytest.approx([(math.sqrt(2) + 1) / 2, 1.5])
    assert df["cosine_similarity"].tolist() == pytest.approx([0.5, 0.0])
    assert df["angle_degrees"].tolist() == pytest.approx([45.0, 90.0])
    masked = an.layer_smoothness([x0, x1], attention_mask=torch.tensor([[1, 0]]))  # padding left out
    assert masked["l2_distance"].tolist() == pytest.approx([math.sqrt(2)])
    assert masked["angle_degrees"].tolist() == pytest.approx([90.0])


def test_smoothness_on_live_model(tiny):
    enc = encode("Sharing weights makes layers smooth.", TINY, 32)
    out = tiny(**enc.tensors(), output_hidden_states=True)
    df = an.layer_smoothness(out.hidden_states)
    assert len(df) == len(out.hidden_states) - 1 == TINY.executed_layers
    assert (df["l2_distance"] > 0).all() and df["cosine_similarity"].between(-1, 1).all()
    with pytest.raises(ValueError, match="hidden_states"):
        an.layer_smoothness(out.hidden_states[:1])


# ----------------------------------------------------------------------------- attention maps
def test_attention_maps_match_transformers(tiny):
    from albert_core.live.interop import to_transformers

    ids = torch.tensor([[2, 10, 11, 12, 13, 3, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0]])
    ours = tiny(input_ids=ids, attention_mask=mask, output_attentions=True)
    hf = to_transformers(tiny)
    hf.set_attn_implementation("eager")  # sdpa returns no attention weights
    theirs = hf(input_ids=ids, attention_mask=mask, output_attentions=True)
    tokens = ["[CLS]", "a", "a", "b", "c", "[SEP]", "[PAD]", "[PAD]"]
    for layer in range(TINY.executed_layers):
        for head in range(TINY.num_heads):
            w, labels = an.attention_maps(ours, layer, head, tokens)
            assert w.shape == (8, 8)
            np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-5)
            np.testing.assert_allclose(w, theirs.attentions[layer][0, head].detach().numpy(), atol=1e-5)
            assert np.abs(w[:, 6:]).max() < 1e-6  # nobody attends to padding
    assert len(set(labels)) == len(labels) and labels[1] == "1 a"  # repeated tokens stay distinct
    with pytest.raises(ValueError, match="head"):
        an.attention_maps(ours, 0, TINY.num_heads)
    with pytest.raises(ValueError, match="output_attentions"):
        an.attention_maps(tiny(input_ids=ids), 0, 0)


# ----------------------------------------------------------------------------- saved bytes
def test_saved_bytes_by_hand():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    x = torch.randn(2, 4)

    class Wrap(nn.Module):  # the helper calls model(input_ids=...)
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, input_ids):
            return self.net(input_ids)

    model = Wrap().eval()
    # Linear 1 saves its input x (2x4 fp32 = 32 B; its weight is a parameter, not counted); ReLU saves
    # its output (2x8 = 64 B), which Linear 2 saves again as its input: one storage, counted once.
    assert an.saved_activation_bytes(model, {"input_ids": x}) == 2 * 4 * 4 + 2 * 8 * 4
    assert not model.training  # mode restored

    class Views(nn.Module):  # two ops saving views of one tensor: one storage
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))

        def forward(self, input_ids):
            h = input_ids.exp()  # saves its output (6 floats = 24 B)
            return (h[0] * self.w).sum() + (h[1] * self.w).sum()  # each saves a view of h

    assert an.saved_activation_bytes(Views(), {"input_ids": torch.randn(2, 3)}) == 24


def test_saved_bytes_live_model(tiny):
    from albert_core.counting.memory import estimate_memory

    ids = torch.randint(5, TINY.vocab_size, (2, 32))
    for p in tiny.parameters():
        p.requires_grad_(False)
    measured = an.saved_activation_bytes(tiny, ids)
    assert not any(p.requires_grad for p in tiny.parameters()) and not tiny.training  # restored
    for p in tiny.parameters():
        p.requires_grad_(True)
    est = estimate_memory(TINY, 2, 32, training=True, device="cpu").activations
    # The estimate models transformers' eager model (explicit attention probabilities, unfused
    # gelu_new); ours uses fused kernels, so it saves less, but the same order of magnitude.
    assert 0.2 * est < measured < 1.5 * est


# ----------------------------------------------------------------------------- speed
def test_latency_result_sanity():
    calls = []

    class Sleepy(nn.Module):
        def forward(self, input_ids):
            calls.append(torch.is_inference_mode_enabled())
            time.sleep(0.002)
            return input_ids

    res = an.measure_latency(Sleepy(), torch.zeros(1, 4, dtype=torch.long), n=5, warmup=2)
    assert len(calls) == 7 and all(calls)
    assert len(res.runs) == 5 and min(res.runs) >= 0.002
    assert res.p10 <= res.median_s <= res.p90
    assert res.median_s == pytest.approx(float(np.median(res.runs)))
    with pytest.raises(ValueError, match="n must"):
        an.measure_latency(Sleepy(), torch.zeros(1, 4, dtype=torch.long), n=0)


def test_achieved_gflops_uses_counted_flops():
    import transformers
    from torch.utils.flop_counter import FlopCounterMode

    hf = transformers.AlbertConfig(**{k: v for k, v in config_to_hf(TINY).items() if k != "model_type"},
                                   attn_implementation="eager")
    with torch.device("meta"):
        model = transformers.AlbertModel(hf)
    with FlopCounterMode(display=False) as counter:
        model(input_ids=torch.zeros(3, 20, dtype=torch.long, device="meta"))
    assert an.achieved_gflops(TINY, 3, 20, 0.5) == pytest.approx(counter.get_total_flops() / 0.5 / 1e9)
    with pytest.raises(ValueError, match="seconds"):
        an.achieved_gflops(TINY, 3, 20, 0)


def test_matmul_probe_is_cached():
    peak = an.matmul_peak_gflops(budget_s=0.05)
    assert 0.1 < peak < 1e5
    t0 = time.perf_counter()
    assert an.matmul_peak_gflops(budget_s=0.05) == peak
    assert time.perf_counter() - t0 < 0.01  # cached, not re-measured
    assert an.peak_fraction(peak / 2, budget_s=0.05) == pytest.approx(0.5)


# ----------------------------------------------------------------------------- pre-training inputs
DOCS = "One starts. Two follows! Three ends?\n\nFour is elsewhere. Five too."


def _run_of_sentences(segment: str, docs: list[list[str]]) -> int | None:
    """The document in which ``segment`` is a run of whole consecutive sentences, else None."""
    for d, doc in enumerate(docs):
        for i in range(len(doc)):
            for j in range(i + 1, len(doc) + 1):
                if " ".join(doc[i:j]) == segment:
                    return d
    return None


DOC_SENTENCES = [["One starts.", "Two follows!", "Three ends?"], ["Four is elsewhere.", "Five too."]]


def test_sop_pairs_are_the_labs_segments_in_order_or_swapped():
    pairs = pi.make_pairs(DOCS, "sop", seed=0, max_words=50)  # no pair long enough to be trimmed
    assert pairs == pi.make_pairs(DOCS, "sop", seed=0, max_words=50)
    assert {p.label for p in pairs} == {0, 1} and len(set(pairs)) == len(pairs)
    for p in pairs:
        first, second = (p.a, p.b) if p.label == 0 else (p.b, p.a)
        assert p.kind == ("in order" if p.label == 0 else "swapped")
        # A and B are whole sentences of one document, and in order they are consecutive: never across documents
        d = _run_of_sentences(f"{first} {second}", DOC_SENTENCES)
        assert d is not None and _run_of_sentences(first, DOC_SENTENCES) == d
    assert pi.make_pairs("Only one sentence.", "sop") == []  # no boundary to cut at


def test_nsp_pairs_take_a_negative_b_from_another_document():
    pairs = pi.make_pairs(DOCS, "nsp", seed=1, max_words=50)
    assert pairs == pi.make_pairs(DOCS, "nsp", seed=1, max_words=50)
    assert {p.label for p in pairs} == {0, 1}
    for p in pairs:
        da, db = _run_of_sentences(p.a, DOC_SENTENCES), _run_of_sentences(p.b, DOC_SENTENCES)
        assert da is not None and db is not None
        if p.label == 0:
            assert p.kind == "is next" and _run_of_sentences(f"{p.a} {p.b}", DOC_SENTENCES) == da
        else:
            assert p.kind == "random next" and db != da
    # one document: nowhere else to take B from, every pair is a positive
    assert {p.label for p in pi.make_pairs("A one. B two. C three. D four.", "nsp", seed=2)} == {0}


def test_pairs_respect_the_length_and_check_their_arguments():
    text = " ".join(f"Sentence number {i} is here." for i in range(30))
    for task in ("sop", "nsp"):
        assert all(len(p.a.split()) + len(p.b.split()) <= 12 for p in pi.make_pairs(text, task, max_words=12))
    with pytest.raises(ValueError, match="task"):
        pi.make_pairs(DOCS, "mlm")
    with pytest.raises(ValueError, match="max_words"):
        pi.make_pairs(DOCS, "sop", max_words=1)


def test_ngram_mask_rules():
    enc = encode("Albert masks whole words of unbelievably long spans in the quixotic text " * 4, ModelConfig(), 128)
    tokens = enc.tokens
    res = pi.ngram_mask(tokens, seed=3)
    assert res == pi.ngram_mask(tokens, seed=3)
    assert res.positions != pi.ngram_mask(tokens, seed=4).positions
    maskable = len(tokens) - 2
    assert len(res.positions) == round(0.15 * maskable)
    assert tokens[0] == res.tokens[0] == "[CLS]" and res.tokens[-1] == "[SEP]"
    assert [res.tokens[i] for i in res.positions] == ["[MASK]"] * len(res.positions)
    assert res.labels == [tokens[i] for i in res.positions]
    for i in res.positions:  # whole words: a masked "##" piece has its word start masked too
        if tokens[i].startswith("##"):
            assert i - 1 in res.positions
        if i + 1 < len(tokens) and tokens[i + 1].startswith("##"):
            assert i + 1 in res.positions
    assert pi.ngram_mask(["[CLS]", "[SEP]"], seed=0).positions == []


def test_ngram_lengths_follow_one_over_n():
    assert pi.ngram_length_probs(3) == pytest.approx([6 / 11, 3 / 11, 2 / 11])
    words = [f"w{i}" for i in range(400)]
    counts = Counter(n for seed in range(30) for _, n in pi.ngram_mask(words, seed=seed).spans)
    total = sum(counts.values())
    for n, p in zip((1, 2, 3), pi.ngram_length_probs(3), strict=True):
        assert counts[n] / total == pytest.approx(p, abs=0.05)
