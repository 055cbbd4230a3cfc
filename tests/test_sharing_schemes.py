"""The sharing schemes designed since ALBERT as axes of every family with ALBERT's ideas (issue 44): the order of the
shared blocks (contiguous groups, cycle), unique first and last layers, an immediate repeat, and a LoRA per executed
position on chosen matrices of a shared block. Counted exactly (the live model's parameters per component, its
FLOPs under FlopCounterMode), built live, refused by name where they cannot form a model."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from albert_core import ModelConfig, count_flops, count_params
from albert_core.configuration.config import LORA_MATRICES
from albert_core.configuration.presets import preset
from albert_core.counting.flops import dense_masked_excess
from albert_core.counting.memory import estimate_memory
from albert_core.live.analysis import saved_activation_bytes
from albert_core.live.count_proof import live_counts
from albert_core.live.model import build_model, paper_blocks
from tests.helpers.family_strategies import albertized_configs
from tests.helpers.strategies import configs

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@st.composite
def scheme_configs(draw, base=None) -> ModelConfig:
    """A small config of any family with ALBERT's ideas, with the sharing-scheme axes drawn where they form a model."""
    cfg = draw(base if base is not None else (configs(family="albert") | albertized_configs()))
    changes = {
        "block_order": draw(st.sampled_from(["groups", "cycle"])),
        "unique_ends": draw(st.booleans()),
        "repeat": draw(st.integers(1, 3)),
        "lora_rank": draw(st.sampled_from([0, 1, 2, 3])),
        "lora_targets": "-".join(sorted(draw(st.sets(st.sampled_from(LORA_MATRICES), min_size=1)),
                                        key=LORA_MATRICES.index)),
    }
    if changes["unique_ends"] and cfg.num_layers >= 3:
        changes["num_hidden_groups"] = draw(st.integers(1, cfg.num_layers - 2))
    try:
        return cfg.replace(**changes)
    except ValueError:
        assume(False)
        raise


def test_albert_base_with_a_rank_8_lora_on_its_six_matrices():
    """The reference file's what-if: ALBERT-base without its pooler, all layers shared, plus a LoRA of rank 8 on
    Q, K, V, the attention output, FFN up and FFN down at each of its 12 positions: 11.09M + 1,327,104 = 12.42M."""
    base = preset("albert-base")
    pooler = 768 * 768 + 768
    assert round((count_params(base).total - pooler) / 1e6, 2) == 11.09
    relaxed = base.replace(lora_rank=8)
    by_hand = 12 * 8 * (4 * (768 + 768) + (768 + 3072) + (3072 + 768))
    assert by_hand == 1_327_104
    assert count_params(relaxed).total - count_params(base).total == by_hand
    assert round((count_params(relaxed).total - pooler) / 1e6, 2) == 12.42
    # the LoRA cannot be merged into the weight twelve positions share: it adds its compute at every token
    tokens = 8 * 128
    assert count_flops(relaxed, 8, 128).forward - count_flops(base, 8, 128).forward == 2 * tokens * by_hand
    # the other ranks of the reference file's row: r 16 -> 13.75M, r 64 -> 21.71M
    for rank, total in ((16, 13.75), (64, 21.71)):
        assert round((count_params(base.replace(lora_rank=rank)).total - pooler) / 1e6, 2) == total


def test_block_orders_and_unique_ends_pick_the_blocks_by_hand():
    cfg = ModelConfig(num_layers=6, num_hidden_groups=2)
    assert [cfg.shared_group_of_layer(i) for i in range(6)] == [0, 0, 0, 1, 1, 1]  # ALBERT: AABB
    assert [cfg.replace(block_order="cycle").shared_group_of_layer(i) for i in range(6)] == [0, 1, 0, 1, 0, 1]
    middle = cfg.replace(unique_ends=True)
    assert [middle.shared_group_of_layer(i) for i in range(6)] == [0, 1, 1, 2, 2, 3]
    assert [middle.replace(block_order="cycle").shared_group_of_layer(i) for i in range(6)] == [0, 1, 2, 1, 2, 3]
    # four blocks held (first, two groups, last), six layers run, each twice with repeat 2
    assert middle.attention_copies == middle.ffn_copies == 4
    assert middle.replace(repeat=2).executed_layers == 12
    # the unique ends carry no LoRA: 4 middle layers x 2 repeats
    assert middle.replace(repeat=2, lora_rank=4).attention_lora_positions == 8


def test_a_repeated_model_runs_each_layer_twice_in_a_row():
    """MobileLLM-LS: every block run twice in a row holds the same parameters and does twice the encoder's work;
    the live model's hidden states show each layer's output fed to the same layer again."""
    cfg = ModelConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_layers=3, num_heads=2,
                      intermediate_size=32, max_position_embeddings=16, sharing="none", num_hidden_groups=1)
    twice = cfg.replace(repeat=2)
    assert count_params(twice).total == count_params(cfg).total
    once, two = count_flops(cfg, 2, 10), count_flops(twice, 2, 10)
    layer_work = sum(c.forward for c in once.components if c.name.startswith("encoder.") and
                     c.name != "encoder.embedding_hidden_mapping_in")
    assert two.forward - once.forward == layer_work
    model = build_model(twice, batch=1, seq_len=10, seed=3)
    ids = torch.arange(10).view(1, 10)
    with torch.no_grad():
        hidden = model(ids, output_hidden_states=True).hidden_states
        assert len(hidden) == 7
        enc = model.encoder
        x = hidden[1]
        again, _ = enc.attention[0][0](x, None, False)
        assert torch.allclose(enc.ffn[0][0](again), hidden[2], atol=1e-5)


def test_rules_name_the_field():
    cases = {
        "block_order 'cycle' orders shared blocks": dict(sharing="none", block_order="cycle"),
        "unique_ends needs at least 3 layers": dict(num_layers=2, unique_ends=True),
        "num_hidden_groups must be at most num_layers - 2 (10)": dict(num_hidden_groups=11, unique_ends=True),
        "lora_targets 'in' is on the FFN block": dict(sharing="attention", lora_rank=4, lora_targets="q-in"),
        "lora_rank must be at most 768 on 'q'": dict(lora_rank=769, lora_targets="q"),
        "repeat must be a whole number between 1 and 16": dict(repeat=0),
        "lora_targets must be one or more of q, k, v, o, in, out joined by '-' in that order": dict(lora_targets="q-x"),
    }
    for message, changes in cases.items():
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ModelConfig(**changes)
    with pytest.raises(ValueError, match="repeat must be 1 for family 'bert'"):
        preset("bert-base").replace(repeat=2)
    # no LoRA: one way of writing it, so equal configs are equal
    assert ModelConfig(lora_targets="q") == ModelConfig()


@settings(max_examples=60, **_SETTINGS)
@given(cfg=scheme_configs())
def test_live_counts_equal_count_params_per_component(cfg: ModelConfig) -> None:
    model = build_model(cfg, device="meta")
    breakdown = count_params(cfg)
    assert live_counts(model) == breakdown.by_name()
    assert sum(p.numel() for p in model.parameters()) == breakdown.total


@settings(max_examples=30, **_SETTINGS)
@given(cfg=scheme_configs(), batch=st.integers(1, 3), seq=st.integers(1, 24))
def test_live_forward_flops_equal_count_flops(cfg: ModelConfig, batch: int, seq: int) -> None:
    """FlopCounterMode on the live model (meta device) counts what count_flops counts, LoRA included. Blocks of
    BERT's layout without a LoRA run the fused kernels (residual inside an addmm_ FlopCounterMode does not see)."""
    assume(not paper_blocks(cfg))
    seq = min(seq, cfg.max_seq_len)
    model = build_model(cfg, device="meta")
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.zeros(batch, seq, dtype=torch.long, device="meta"))
    want = count_flops(cfg, batch, seq, mlm_fraction=1.0).forward + dense_masked_excess(cfg, batch, seq)
    assert counter.get_total_flops() == want


@settings(max_examples=10, **_SETTINGS)
@given(cfg=scheme_configs(), seed=st.integers(0, 5))
def test_schemes_run_and_train(cfg: ModelConfig, seed: int) -> None:
    """Every scheme builds for real, runs, and every parameter (each LoRA's A and B included) gets a gradient."""
    T = min(6, cfg.max_seq_len)
    model = build_model(cfg, batch=2, seq_len=T, seed=seed)
    if cfg.lora_rank:  # a new LoRA starts at zero (B = 0); move it so its A gets a gradient too
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith(".B"):
                    p.normal_(0, 0.02)
    model.train()
    ids = torch.randint(0, cfg.vocab_size, (2, T))
    out = model(ids)
    out.last_hidden_state.square().mean().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None and "encoder" in n and "lora" in n]
    assert not missing


def test_lora_activation_estimate_matches_what_autograd_saves():
    """The activations a LoRA adds in training (its r-wide x A^T, kept for B's gradient; its input is its matrix's,
    kept already) as measured on the live model with and without the LoRA, against the estimate's difference: the
    same bytes. (A LoRA on V makes V a tensor of its own, which changes what SDPA's CPU kernel keeps: measured 63 KB
    less at this size; the estimate does not model that, and says it is an estimate.)"""
    base = preset("modernbert-base").replace(hidden_size=64, num_heads=4, intermediate_size=96, num_layers=4,
                                              vocab_size=100, embedding_size=32, sharing="all", head="model",
                                              local_window=0, global_every=1)
    relaxed = base.replace(lora_rank=4, lora_targets="q-k-o-in-out")
    B, T = 2, 16
    ids = {"input_ids": torch.randint(0, 100, (B, T))}
    measured = [saved_activation_bytes(build_model(c, batch=B, seq_len=T, seed=1), ids) for c in (base, relaxed)]
    estimate = [estimate_memory(c, B, T, "fp32", training=True, dropout=0.0).activations for c in (base, relaxed)]
    by_hand = 4 * 5 * B * T * 4 * 4  # 4 positions x 5 targets x B*T tokens x r 4 x 4 bytes
    assert estimate[1] - estimate[0] == by_hand
    assert measured[1] - measured[0] == by_hand


def test_schemes_travel_in_links_and_old_links_read_as_before():
    from ui.urls import config_from_query, config_to_query, parse_query

    base = preset("albert-base")
    assert config_to_query(base) == config_to_query(ModelConfig())  # no scheme key in a link of ALBERT's scheme
    assert not {"order", "ends", "rep", "lora", "lorat"} & set(config_to_query(base))
    relaxed = base.replace(num_hidden_groups=2, block_order="cycle", unique_ends=True, repeat=2, lora_rank=8,
                           lora_targets="q-v-in")
    query = config_to_query(relaxed)
    assert {query[k] for k in ("order", "ends", "rep", "lora", "lorat")} == {"cycle", "1", "2", "8", "q-v-in"}
    assert config_from_query(query) == relaxed
    assert parse_query(query, base) == (relaxed, [])
    # a link without the keys is ALBERT's scheme whatever the session held
    assert parse_query(config_to_query(base), relaxed)[0] == base
    bad, problems = parse_query({**query, "lorat": "q,x"}, base)
    assert bad.lora_targets == "q-k-v-o-in-out"
    assert problems == ["URL value lorat='q,x': must be one or more of q, k, v, o, in, out joined by '-' in that "
                        "order (e.g. 'q-v' or 'q-k-v-o-in-out')"]


def test_the_coerce_rule_on_schemes():
    from albert_core.configuration.coerce import bert_twin, coerce, is_albertized, original_of

    relaxed = preset("albert-base").replace(num_hidden_groups=2, block_order="cycle", unique_ends=True,
                                            lora_rank=8, lora_targets="q-v-in")
    # sharing none: the order and the ends go back to ALBERT's, and the LoRA has no shared matrix left
    unshared = coerce({"sharing": "none"}, relaxed).config
    assert (unshared.block_order, unshared.unique_ends, unshared.lora_rank) == ("groups", False, 0)
    # ... unless every layer repeats: each block then runs twice, and the LoRA stays
    repeated = coerce({"sharing": "none"}, relaxed.replace(repeat=2)).config
    assert (repeated.repeat, repeated.lora_rank, repeated.lora_targets) == (2, 8, "q-v-in")
    # attention-only sharing keeps the LoRA on the attention's matrices
    assert coerce({"sharing": "attention"}, relaxed).config.lora_targets == "q-v"
    with pytest.raises(ValueError, match="lora_targets 'in' is on the FFN block"):
        coerce({"sharing": "attention", "lora_targets": "q-v-in"}, relaxed)
    # the BERT twin, a family switch and an ALBERTized encoder's original take ALBERT's own scheme
    for cfg in (bert_twin(relaxed), coerce({"family": "roberta"}, relaxed).config):
        assert (cfg.block_order, cfg.unique_ends, cfg.repeat, cfg.lora_rank) == ("groups", False, 1, 0)
    with pytest.raises(ValueError, match="repeat must be 1"):
        coerce({"family": "bert", "repeat": 2}, relaxed)
    looped = preset("roberta-base").replace(repeat=2)
    assert is_albertized(looped) and original_of(looped).repeat == 1


def test_export_names_the_fields_transformers_cannot_hold():
    from albert_core.configuration.hf_config import config_to_hf, hf_class_mismatch

    relaxed = preset("albert-base").replace(repeat=2, lora_rank=8)
    problem = hf_class_mismatch(relaxed)
    assert "repeat=2" in problem and "lora_rank=8" in problem and "block_order" not in problem
    with pytest.raises(ValueError, match="AlbertModel has no setting for repeat=2, lora_rank=8"):
        config_to_hf(relaxed)
    assert hf_class_mismatch(preset("albert-base")) is None


def test_what_would_fit_keeps_unique_ends_around_their_groups():
    """The Live page's over-budget advice (`budget.alternatives`) on a config with unique first and last layers:
    fewer layers never below G + 2 (the groups between the two ends), each alternative fitting the budget."""
    from albert_core.live.budget import alternatives, check_budget

    cfg = preset("albert-base").replace(num_hidden_groups=2, unique_ends=True, block_order="cycle", repeat=2,
                                        lora_rank=8)
    budget = check_budget(cfg.replace(num_layers=6), 1, 128, "fp32", budget_bytes=10**12).estimate + 2**20
    found = {a.field: a for a in alternatives(cfg, 128, budget_bytes=budget)}
    assert 4 <= found["num_layers"].value < 12
    smaller = cfg.replace(num_layers=found["num_layers"].value)
    assert check_budget(smaller, 1, 128, "fp32", budget_bytes=budget).ok
    assert not check_budget(cfg.replace(num_layers=found["num_layers"].value + 1), 1, 128, "fp32",
                            budget_bytes=budget).ok
    tight = check_budget(cfg.replace(num_layers=4), 1, 8, "fp32", budget_bytes=10**12).estimate - 1
    assert "num_layers" not in {a.field for a in alternatives(cfg, 128, budget_bytes=tight)}
