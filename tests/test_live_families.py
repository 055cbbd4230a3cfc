"""The live model of the encoders after BERT (RoBERTa, XLM-R, ELECTRA, DeBERTa-v3, ModernBERT, EuroBERT, NomicBERT)
against transformers' own classes: imported from a random transformers model, every output equals it within 1e-4
in fp32 (hidden states, attention maps, MLM and discriminator logits); exported back, the weights are the same;
built on the meta device, its parameters equal count_params component by component, ALBERTized variants (E and
sharing, which no transformers class has) included; an ALBERTized ModernBERT / EuroBERT runs."""

from __future__ import annotations

import re

import pytest
import torch
import transformers
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from albert_core import ModelConfig, count_flops, count_params
from albert_core.configuration.hf_config import config_from_hf, hf_class_mismatch
from albert_core.counting.flops import dense_masked_excess
from albert_core.live.count_proof import live_counts
from albert_core.live.interop import from_hf, load_pretrained_folder, to_transformers
from albert_core.live.model import build_model, paper_blocks
from tests.helpers.family_strategies import albertized_configs, family_configs
from tests.helpers.hf_models import hf_model

transformers.logging.set_verbosity_error()
pytestmark = pytest.mark.slow  # transformers' models as the oracle
ATOL = 1e-4  # absolute, in fp32 (rtol 0): the "equal within 1e-4"
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SIZE = dict(vocab_size=120, hidden_size=32, num_heads=4, intermediate_size=40, num_layers=3,
            max_position_embeddings=64, sharing="none")
ROBERTA = ModelConfig(family="roberta", embedding_size=32, type_vocab_size=1, position_offset=2, **SIZE)
ELECTRA = ModelConfig(family="electra", embedding_size=16, pooler=False, **SIZE)
DEBERTA = ModelConfig(family="deberta-v2", embedding_size=16, type_vocab_size=0, position="relative",
                      position_buckets=8, pooler=False, layer_norm_eps=1e-7, **SIZE)
MODERNBERT = ModelConfig(family="modernbert", embedding_size=32, type_vocab_size=0, hidden_act="gelu", ffn_kind="glu",
                         position="rotary", norm_bias=False, norm_placement="pre", first_layer_norm=False,
                         attention_bias=False, mlp_bias=False, local_window=8, global_every=2, pooler=False,
                         head_bias=False, rope_theta=160_000.0, local_rope_theta=10_000.0,
                         **(SIZE | dict(num_layers=4)))
EUROBERT = ModelConfig(family="eurobert", embedding_size=32, type_vocab_size=0, hidden_act="silu", ffn_kind="glu",
                       position="rotary", norm="rmsnorm", norm_bias=False, norm_placement="pre", embedding_norm=False,
                       attention_bias=False, mlp_bias=False, num_kv_heads=2, pooler=False, head_transform=False,
                       head_bias=False, decoder_bias=False, tie_word_embeddings=False, layer_norm_eps=1e-5, **SIZE)
NOMIC = ModelConfig(family="nomic_bert", embedding_size=32, hidden_act="silu", ffn_kind="glu", position="rotary",
                    attention_bias=False, mlp_bias=False, pooler=False, rope_theta=1000.0, **SIZE)

CASES = {
    "roberta-model": ROBERTA,
    "roberta-masked-lm-untied": ROBERTA.replace(head="masked-lm", tie_word_embeddings=False, hidden_act="gelu_new"),
    "xlm-roberta-masked-lm": ROBERTA.replace(family="xlm-roberta", head="masked-lm", hidden_act="relu"),
    "electra-model": ELECTRA,
    "electra-masked-lm-untied": ELECTRA.replace(head="masked-lm", tie_word_embeddings=False, hidden_act="relu"),
    "electra-discriminator": ELECTRA.replace(head="discriminator", embedding_size=32),
    "deberta-v3-model": DEBERTA,
    "deberta-v3-masked-lm-types": DEBERTA.replace(head="masked-lm", embedding_size=32, type_vocab_size=2),
    "deberta-v3-masked-lm-untied": DEBERTA.replace(head="masked-lm", tie_word_embeddings=False),
    "modernbert-model": MODERNBERT,
    "modernbert-masked-lm": MODERNBERT.replace(head="masked-lm"),
    "modernbert-masked-lm-biases-untied": MODERNBERT.replace(
        head="masked-lm", norm_bias=True, attention_bias=True, mlp_bias=True, head_bias=True, decoder_bias=False,
        tie_word_embeddings=False, local_window=4, global_every=3, hidden_act="silu"),
    "eurobert-model": EUROBERT,
    "eurobert-masked-lm-gqa": EUROBERT.replace(head="masked-lm"),
    "eurobert-masked-lm-biases-tied-mqa": EUROBERT.replace(
        head="masked-lm", attention_bias=True, mlp_bias=True, decoder_bias=True, tie_word_embeddings=True,
        num_kv_heads=1, rope_theta=500.0),
    "nomic-model": NOMIC,
    "nomic-masked-lm-untied": NOMIC.replace(head="masked-lm", tie_word_embeddings=False, hidden_act="gelu"),
}


@torch.no_grad()
def perturb(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Random values in every parameter (biases and norms too), so each one matters."""
    gen = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.eval()


def inputs(cfg: ModelConfig, batch: int, T: int, seed: int) -> dict[str, torch.Tensor]:
    """Random ids (RoBERTa's padding id among them: its positions skip it), a padding mask (a half-padded row, a
    row of one token) and token types where the family has a table of more than one row."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg.vocab_size, (batch, T), generator=gen)
    if cfg.position_offset:
        ids[0, T // 3] = ids[-1, -2:] = cfg.position_offset - 1
    mask = torch.ones(batch, T, dtype=torch.long)
    if batch > 1:
        mask[1, T // 2:] = 0
    if batch > 2:
        mask[2, 1:] = 0
    out = dict(input_ids=ids, attention_mask=mask)
    if cfg.type_vocab_size > 1:
        out["token_type_ids"] = torch.randint(0, cfg.type_vocab_size, (batch, T), generator=gen)
    return out


def main_logits(cfg: ModelConfig, out) -> torch.Tensor | None:
    if cfg.head == "masked-lm":
        return out.prediction_logits
    if cfg.head == "discriminator":
        return out.discriminator_logits
    return None


@torch.no_grad()
def compare(cfg: ModelConfig, hf, ours, batch: int, T: int, seed: int) -> float:
    """Assert every output of ours equals transformers' (eager attention) within ATOL; the largest difference."""
    x = inputs(cfg, batch, T, seed)
    ref = hf(**x, output_hidden_states=True, output_attentions=True)
    full = ours(**x, output_hidden_states=True, output_attentions=True)  # explicit attention maps
    fast = ours(**x)  # scaled_dot_product_attention where the family allows it
    base = hf if cfg.head == "model" else getattr(hf, hf.base_model_prefix)
    want = {"last_hidden_state": base(**x).last_hidden_state, "logits": getattr(ref, "logits", None),
            "pooler_output": getattr(ref, "pooler_output", None)}
    got = {"last_hidden_state": full.last_hidden_state, "logits": main_logits(cfg, full),
           "pooler_output": full.pooler_output}
    worst = 0.0

    def close(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
        nonlocal worst
        assert a.shape == b.shape, what
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0, msg=lambda m: f"{cfg.label} {what}: {m}")
        worst = max(worst, (a - b).abs().max().item())

    for key, b in want.items():
        if b is None:
            assert got[key] is None, key
            continue
        close(got[key], b, key)
    close(fast.last_hidden_state, want["last_hidden_state"], "last_hidden_state (fast path)")
    if want["logits"] is not None:
        close(main_logits(cfg, fast), want["logits"], "logits (fast path)")
    assert len(full.hidden_states) == len(ref.hidden_states) == cfg.executed_layers + 1
    for i, (a, b) in enumerate(zip(full.hidden_states, ref.hidden_states, strict=True)):
        close(a, b, f"hidden_states[{i}]")
    assert len(full.attentions) == len(ref.attentions) == cfg.executed_layers
    for i, (a, b) in enumerate(zip(full.attentions, ref.attentions, strict=True)):
        close(a, b, f"attentions[{i}]")
    return worst


@pytest.mark.parametrize("name", list(CASES))
def test_imported_family_model_equals_transformers(name: str) -> None:
    cfg = CASES[name]
    assert hf_class_mismatch(cfg) is None
    hf = perturb(hf_model(cfg), seed=len(name))
    ours = from_hf(hf)
    assert ours.config == config_from_hf(hf.config, head=cfg.head) == cfg
    # the transformers model's parameters, ours and the analytic count: the same number
    n = sum(p.numel() for p in ours.parameters())
    assert n == sum(p.numel() for p in hf.parameters()) == count_params(cfg).total
    assert live_counts(ours) == count_params(cfg).by_name()
    T = 40 if cfg.local_window else 24  # ModernBERT: well beyond the window, so that it matters
    compare(cfg, hf, ours, batch=3, T=T, seed=1)
    compare(cfg, hf, ours, batch=1, T=7, seed=2)  # no padding, a short row (the window covers it)
    # exported back: a transformers model of the same class holding the very same weights
    back = to_transformers(ours)
    assert type(back) is type(hf)
    mine, theirs = hf.state_dict(), back.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)


@pytest.mark.parametrize("name", ["roberta-masked-lm-untied", "modernbert-masked-lm", "eurobert-masked-lm-gqa",
                                  "nomic-masked-lm-untied"])
@torch.no_grad()
def test_equal_to_transformers_sdpa_at_every_real_token(name: str) -> None:
    """transformers' SDPA attention gives a query whose keys are all masked (a padding token outside any real
    token's window) a different output than its eager attention; ours follows eager. Every real token agrees."""
    cfg = CASES[name]
    hf = perturb(hf_model(cfg, attn="sdpa"), seed=5)
    ours = from_hf(hf)
    x = inputs(cfg, 3, 40, seed=3)
    real = x["attention_mask"].bool()
    torch.testing.assert_close(ours(**x).prediction_logits[real], hf(**x).logits[real], atol=ATOL, rtol=0)


@settings(max_examples=12, **_SETTINGS)
@given(cfg=family_configs(), seed=st.integers(0, 2**16), data=st.data())
@torch.no_grad()
def test_random_family_models_equal_transformers(cfg: ModelConfig, seed: int, data) -> None:
    hf = perturb(hf_model(cfg), seed)
    ours = from_hf(hf)
    T = data.draw(st.integers(1, min(40, cfg.max_seq_len)))
    compare(cfg, hf, ours, batch=data.draw(st.integers(1, 3)), T=T, seed=seed)


# ----------------------------------------------------------------------------- counts (meta device)
@settings(max_examples=150, **_SETTINGS)
@given(cfg=family_configs() | albertized_configs())
def test_meta_counts_equal_count_params_per_component(cfg: ModelConfig) -> None:
    model = build_model(cfg, device="meta")
    assert all(p.is_meta for p in model.parameters())
    breakdown = count_params(cfg)
    assert live_counts(model) == breakdown.by_name()
    assert sum(p.numel() for p in model.parameters()) == breakdown.total


AXIS_FAMILIES = st.sampled_from(["deberta-v2", "modernbert", "eurobert", "nomic_bert"])


@settings(max_examples=20, **_SETTINGS)
@given(cfg=AXIS_FAMILIES.flatmap(lambda f: family_configs(f) | albertized_configs(f)), batch=st.integers(1, 3),
       seq=st.integers(1, 40), explicit=st.booleans())
def test_meta_forward_flops_equal_count_flops(cfg: ModelConfig, batch: int, seq: int, explicit: bool) -> None:
    """The live model computes what count_flops counts (FlopCounterMode on the meta device; local layers scored
    densely and masked, `dense_masked_excess`), explicit attention or SDPA. The paper's blocks (BERT's layout) are
    left out: they add the residual inside an in-place addmm_, which FlopCounterMode does not count."""
    assume(not paper_blocks(cfg))
    seq = min(seq, cfg.max_seq_len)
    model = build_model(cfg, device="meta")
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.zeros(batch, seq, dtype=torch.long, device="meta"), output_attentions=explicit)
    want = count_flops(cfg, batch, seq, mlm_fraction=1.0).forward + dense_masked_excess(cfg, batch, seq)
    assert counter.get_total_flops() == want


# ----------------------------------------------------------------------------- ALBERTized: no transformers class
ALBERTIZED = {
    "modernbert-E16-all-G2-K2": MODERNBERT.replace(head="masked-lm", embedding_size=16, sharing="all",
                                                  num_hidden_groups=2, inner_group_num=2),
    "modernbert-attention-G4": MODERNBERT.replace(sharing="attention", num_hidden_groups=4, embedding_size=24),
    "eurobert-E8-ffn-G1-K2": EUROBERT.replace(head="masked-lm", embedding_size=8, sharing="ffn", inner_group_num=2),
    "eurobert-all-G3": EUROBERT.replace(sharing="all", num_hidden_groups=3, embedding_size=16),
    "deberta-v3-all": DEBERTA.replace(head="masked-lm", sharing="all", inner_group_num=2),
    "electra-attention": ELECTRA.replace(head="discriminator", sharing="attention", num_hidden_groups=1),
}


@pytest.mark.parametrize("name", list(ALBERTIZED))
@torch.no_grad()
def test_albertized_variant_runs(name: str) -> None:
    cfg = ALBERTIZED[name]
    problem = hf_class_mismatch(cfg)
    assert problem is not None  # no transformers class builds it
    model = build_model(cfg, batch=3, seq_len=40, seed=4)
    assert live_counts(model) == count_params(cfg).by_name()
    assert sum(p.numel() for p in model.parameters()) == count_params(cfg).total
    perturb(model, 6)
    x = inputs(cfg, 3, 40, seed=7)
    out = model(**x, output_hidden_states=True, output_attentions=True)
    assert len(out.hidden_states) == cfg.executed_layers + 1 and len(out.attentions) == cfg.executed_layers
    assert out.last_hidden_state.shape == (3, 40, cfg.hidden_size) and out.last_hidden_state.isfinite().all()
    logits = main_logits(cfg, out)
    if logits is not None:
        assert logits.isfinite().all()
        torch.testing.assert_close(main_logits(cfg, model(**x)), logits, atol=ATOL, rtol=0)  # SDPA path too
    with pytest.raises(ValueError, match="no setting for"):
        to_transformers(model)


@torch.no_grad()
def unshared_copy(model: torch.nn.Module) -> torch.nn.Module:
    """The same network with one attention and one FFN copy per executed block (L*K layers, sharing 'none'):
    every block gets the weights of the copy it runs in ``model``. A transformers class can hold this one."""
    cfg = model.config
    K = cfg.inner_group_num
    flat = build_model(cfg.replace(sharing="none", num_hidden_groups=1, inner_group_num=1,
                                   num_layers=cfg.num_layers * K), device="meta").to_empty(device="cpu")
    src = dict(model.named_parameters())

    def source(name: str) -> str:
        m = re.match(r"encoder\.(attention|ffn)\.(\d+)\.0\.(.*)", name)
        if not m:
            return name
        i, k = divmod(int(m[2]), K)
        shared = cfg.attention_shared if m[1] == "attention" else cfg.ffn_shared
        return f"encoder.{m[1]}.{cfg.block_index(i, shared)}.{k}.{m[3]}"

    for name, p in flat.named_parameters():
        p.copy_(src[source(name)])
    return flat.eval()


@settings(max_examples=10, **_SETTINGS)
@given(cfg=albertized_configs(), seed=st.integers(0, 2**16), data=st.data())
@torch.no_grad()
def test_shared_variant_equals_transformers_running_its_blocks_repeated(cfg: ModelConfig, seed: int, data) -> None:
    """An ALBERTized encoder (sharing, G, K) is the same function as transformers' model of its family with every
    executed block's weights written out (E kept where the family's class has one): sharing changes what is held,
    never what is computed."""
    if cfg.family not in ("electra", "deberta-v2"):
        cfg = cfg.replace(embedding_size=cfg.hidden_size)
    if cfg.local_window and cfg.inner_group_num > 1:  # L*K layers would take another local/global pattern
        cfg = cfg.replace(inner_group_num=1)
    ours = perturb(build_model(cfg, batch=3, seq_len=cfg.max_seq_len, seed=seed), seed)
    flat = unshared_copy(ours)
    assume(hf_class_mismatch(flat.config) is None)
    hf = to_transformers(flat)
    hf.set_attn_implementation("eager")
    assert sum(p.numel() for p in ours.parameters()) == count_params(cfg).total
    T = data.draw(st.integers(1, min(32, cfg.max_seq_len)))
    x = inputs(cfg, 3, T, seed)
    ref, got = hf(**x, output_hidden_states=True), ours(**x, output_hidden_states=True)
    assert len(got.hidden_states) == len(ref.hidden_states) == cfg.executed_layers + 1
    for a, b in zip(got.hidden_states, ref.hidden_states, strict=True):
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)
    if getattr(ref, "logits", None) is not None:
        torch.testing.assert_close(main_logits(cfg, got), ref.logits, atol=ATOL, rtol=0)


def test_albertized_sharing_runs_the_shared_blocks() -> None:
    """Every executed block of an all-shared ModernBERT (G=2, K=2 over 4 layers) runs its group's copies: the
    first executed block skips its attention norm (ModernBERT's identity), the shared copy keeps one for the
    blocks after it."""
    cfg = ALBERTIZED["modernbert-E16-all-G2-K2"]
    model = build_model(cfg, batch=1, seq_len=12, seed=1)
    calls: list[tuple[int, int]] = []
    for c, sets in enumerate(model.encoder.attention):
        for k, block in enumerate(sets):
            block.register_forward_hook(lambda *_, c=c, k=k: calls.append((c, k)))
    assert all(hasattr(b, "LayerNorm") for sets in model.encoder.attention for b in sets)  # G < L: all held
    with torch.no_grad():
        model(torch.zeros(1, 12, dtype=torch.long))
    assert calls == [(0, 0), (0, 1)] * 2 + [(1, 0), (1, 1)] * 2
    plain = build_model(cfg.replace(sharing="none", num_hidden_groups=1, inner_group_num=1), device="meta")
    assert not hasattr(plain.encoder.attention[0][0], "LayerNorm")  # run only first: no norm held


# ----------------------------------------------------------------------------- folders, export refusals
def test_saved_modernbert_folder_loads_with_equal_logits(tmp_path) -> None:
    cfg = CASES["modernbert-masked-lm"]
    hf = perturb(hf_model(cfg), 8)
    hf.save_pretrained(tmp_path / "ckpt")
    x = inputs(cfg, 2, 30, seed=9)
    with torch.no_grad():
        want = hf(**x).logits
        for ours in (from_hf(tmp_path / "ckpt"), load_pretrained_folder(tmp_path / "ckpt", allowed_roots=[tmp_path],
                                                                        batch=2, seq_len=30)):
            assert ours.config == cfg
            torch.testing.assert_close(ours(**x).prediction_logits, want, atol=ATOL, rtol=0)


def test_heads_without_a_transformers_class_are_a_clear_error() -> None:
    model = build_model(MODERNBERT.replace(head="discriminator"), batch=1, seq_len=8)
    with pytest.raises(ValueError, match="discriminator|ForPreTraining"):
        to_transformers(model)
    hf = hf_model(NOMIC)
    hf.pooler = transformers.models.nomic_bert.modeling_nomic_bert.NomicBertPooler(hf.config)
    with pytest.raises(ValueError, match="pooler is not modelled"):
        from_hf(hf)


@torch.no_grad()
def test_deberta_with_the_newer_head_is_counted_and_loaded_as_transformers_builds_it() -> None:
    """`legacy: false` (transformers' newer DeBERTa MLM head: dense, act, LayerNorm, then the word embeddings and a
    bias) ties the decoder whatever tie_word_embeddings says: counted as DebertaV2ForMaskedLM holds it, imported with
    equal outputs. The legacy head untied would hold V x H + V more (a decoder and its bias)."""
    from albert_core.configuration.hf_config import config_to_hf

    legacy = DEBERTA.replace(head="masked-lm", embedding_size=32, tie_word_embeddings=False)
    data = config_to_hf(legacy) | {"legacy": False}
    conf = transformers.AutoConfig.for_model(**data)
    with torch.device("meta"):
        meta = transformers.DebertaV2ForMaskedLM(conf)
    theirs = sum(p.numel() for p in meta.parameters())
    cfg = config_from_hf(data)
    assert cfg.tie_word_embeddings and count_params(cfg).total == theirs
    V, H = legacy.vocab_size, legacy.hidden_size
    assert count_params(legacy).total - theirs == V * H + V  # what the untied legacy head adds
    torch.manual_seed(0)
    hf = perturb(transformers.DebertaV2ForMaskedLM._from_config(conf, attn_implementation="eager"), 4)
    ours = from_hf(hf)
    assert ours.config == cfg
    compare(cfg, hf, ours, 3, 12, 5)


def test_deberta_with_another_relative_span_is_refused() -> None:
    """transformers log-buckets DeBERTa's relative positions up to max_relative_positions (-1: the position range,
    as DeBERTa-v3's configs say); the live model only over the position range: any other span is refused."""
    hf = hf_model(DEBERTA)
    hf.config.max_relative_positions = 16
    with pytest.raises(ValueError, match="max_relative_positions must be -1"):
        from_hf(hf)


def test_inputs_the_family_has_no_table_for_are_refused() -> None:
    model = build_model(EUROBERT, batch=1, seq_len=8)
    ids = torch.zeros(1, 8, dtype=torch.long)
    with pytest.raises(ValueError, match="token_type_ids must be None.*type_vocab_size 0"):
        model(ids, token_type_ids=torch.zeros(1, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="must be even with rotary positions"):  # head size 5: refused by the config
        NOMIC.replace(hidden_size=20, num_heads=4)
