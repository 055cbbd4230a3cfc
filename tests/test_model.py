"""The live model against transformers' models (outputs, parameter counts: independent oracles), its
meta-device counts against count_params (agreement with the counter, not an oracle), and the memory guard's
rules."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from albert_core.configuration.config import ACTIVATIONS, HEADS, SHARING_MODES, ModelConfig
from albert_core.configuration.hf_config import config_to_hf
from albert_core.configuration.presets import PRESETS
from albert_core.counting.params import count_params
from albert_core.format import fmt_bytes
from albert_core.live import fastpath
from albert_core.live.budget import MemoryBudgetError, check_budget, memory_budget
from albert_core.live.interop import from_hf, to_transformers
from albert_core.live.model import build_model
from albert_core.settings import MEMORY_BUDGET
from tests.helpers.hf_models import hf_model
from tests.helpers.strategies import configs


@torch.no_grad()
def perturb(model: torch.nn.Module, seed: int) -> None:
    """Random values in every parameter (biases and LayerNorms too), so each one matters."""
    gen = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * 0.3)


@torch.no_grad()
def unshared_copy(model) -> torch.nn.Module:
    """The same network with one attention and one FFN copy set per layer (sharing 'none'): every
    layer gets the weights of the copy set it uses in ``model``. transformers can hold this one."""
    cfg = model.config
    flat = build_model(cfg.replace(sharing="none"), device="meta").to_empty(device="cpu")
    src = dict(model.named_parameters())

    def source(name: str) -> str:
        m = re.match(r"encoder\.(attention|ffn)\.(\d+)\.(.*)", name)
        if not m:
            return name
        shared = cfg.attention_shared if m[1] == "attention" else cfg.ffn_shared
        return f"encoder.{m[1]}.{cfg.block_index(int(m[2]), shared)}.{m[3]}"

    for name, p in flat.named_parameters():
        p.copy_(src[source(name)])
    return flat.eval()


def transformers_outputs(hf, cfg: ModelConfig, **inputs) -> dict:
    """Our output fields, read from the transformers model (the base model for pooler / states)."""
    base = hf if cfg.head == "model" else getattr(hf, cfg.family)
    out = base(**inputs, output_hidden_states=True, output_attentions=True)
    ref = {
        "last_hidden_state": out.last_hidden_state,
        "pooler_output": out.pooler_output,
        "hidden_states": out.hidden_states,
        "attentions": out.attentions,
    }
    if cfg.head != "model":
        full = hf(**inputs)
        ref["prediction_logits"] = full.logits if cfg.head == "masked-lm" else full.prediction_logits
        if cfg.head == "pretraining":
            ref["order_logits"] = full.sop_logits if cfg.family == "albert" else full.seq_relationship_logits
    return ref


@pytest.mark.slow  # transformers' models as the oracle
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(max_width=6), seed=st.integers(0, 2**16), data=st.data())
@torch.no_grad()
def test_outputs_equal_transformers(cfg: ModelConfig, seed: int, data) -> None:
    if cfg.family == "bert" or cfg.sharing == "all":
        # transformers' model is the source: ours is imported from it
        hf = hf_model(cfg)
        perturb(hf, seed)
        ours = from_hf(hf.eval())
    else:
        # ours is the source; transformers runs the same network with the shared weights repeated
        ours = build_model(cfg, seed=seed, batch=3, seq_len=cfg.max_position_embeddings)
        perturb(ours, seed)
        hf = to_transformers(unshared_copy(ours))
        hf.set_attn_implementation("eager")
    batch = data.draw(st.integers(1, 3))
    T = data.draw(st.integers(1, cfg.max_position_embeddings))
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, cfg.vocab_size, (batch, T), generator=gen)
    types = torch.randint(0, cfg.type_vocab_size, (batch, T), generator=gen)
    lengths = data.draw(st.lists(st.integers(0, T), min_size=batch, max_size=batch))  # 0: fully masked
    mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
    inputs = dict(input_ids=ids, attention_mask=mask, token_type_ids=types)

    ref = transformers_outputs(hf, cfg, **inputs)
    full = ours(**inputs, output_hidden_states=True, output_attentions=True)  # explicit attention
    fast = ours(**inputs)  # scaled_dot_product_attention
    close = dict(atol=1e-4, rtol=1e-4)
    assert len(full.hidden_states) == len(ref["hidden_states"]) == cfg.executed_layers + 1
    assert len(full.attentions) == len(ref["attentions"]) == cfg.executed_layers
    for key, want in ref.items():
        for got in (full, fast):
            have = getattr(got, key)
            if key in ("hidden_states", "attentions"):
                if got is fast:
                    assert have is None
                    continue
                for a, b in zip(have, want, strict=True):
                    torch.testing.assert_close(a, b, **close)
            else:
                torch.testing.assert_close(have, want, **close)
    for key in ("pooler_output", "prediction_logits", "order_logits"):
        if key not in ref or ref[key] is None:
            assert getattr(full, key) is None


def test_no_token_types_and_no_mask_match_transformers() -> None:
    cfg = PRESETS["albert-base"].replace(
        vocab_size=50, embedding_size=8, hidden_size=16, num_heads=2, intermediate_size=32, num_layers=2
    )
    hf = transformers.AlbertModel(transformers.AlbertConfig(**config_to_hf(cfg))).eval()
    perturb(hf, 1)
    ours = from_hf(hf)
    ids = torch.randint(0, 50, (2, 9))
    with torch.no_grad():
        torch.testing.assert_close(ours(ids).last_hidden_state, hf(input_ids=ids).last_hidden_state)


@pytest.mark.parametrize("tie", [True, False])
def test_mlm_mask_scores_only_the_masked_positions_with_the_same_logits_and_gradients(tie: bool) -> None:
    cfg = PRESETS["albert-base"].replace(vocab_size=50, embedding_size=8, hidden_size=16, num_heads=2,
                                         intermediate_size=32, num_layers=2, head="pretraining",
                                         tie_word_embeddings=tie)
    full = build_model(cfg, batch=3, seq_len=7, seed=3)
    part = build_model(cfg, batch=3, seq_len=7, seed=3)
    ids = torch.randint(0, 50, (3, 7), generator=torch.Generator().manual_seed(0))
    mask = torch.zeros(3, 7, dtype=torch.bool)
    mask[0, 1] = mask[0, 5] = mask[2, 0] = True  # an unmasked row in the middle
    targets = torch.tensor([4, 9, 11])
    a = full(ids).prediction_logits[mask]
    b = part(ids, mlm_mask=mask).prediction_logits
    assert b.shape == (3, 50)
    torch.testing.assert_close(b, a)
    torch.nn.functional.cross_entropy(a, targets).backward()
    torch.nn.functional.cross_entropy(b, targets).backward()
    for (name, p), q in zip(full.named_parameters(), part.parameters(), strict=True):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            torch.testing.assert_close(q.grad, p.grad, msg=name)
    with pytest.raises(ValueError, match="mlm_mask must be a bool tensor"):
        part(ids, mlm_mask=mask.long())
    with pytest.raises(ValueError, match="mlm_mask must be a bool tensor"):
        part(ids, mlm_mask=mask[:, :3])


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("family", ["albert", "bert"])
def test_inference_kernels_equal_the_autograd_path(family: str, act: str) -> None:
    """Without autograd the encoder's linears run oneDNN's fused kernels (bias, residual, activation
    inside the GEMM); with autograd eager ops run. Both must give the same outputs."""
    cfg = PRESETS[f"{family}-base"].replace(
        vocab_size=64, embedding_size=32 if family == "albert" else 48, hidden_size=48, num_heads=4,
        intermediate_size=96, num_layers=2, hidden_act=act,
    )
    model = build_model(cfg, batch=3, seq_len=20, seed=1)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # weights large enough that activations reach GELU's curved range
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    ids = torch.randint(0, 64, (3, 20), generator=gen)
    mask = torch.ones(3, 20, dtype=torch.long)
    mask[1, 12:] = 0
    eager = model(ids, attention_mask=mask).last_hidden_state
    assert eager.requires_grad  # the autograd path ran
    with fastpath.forced("1"), torch.inference_mode():  # oneDNN wherever possible, whatever the probe says
        fast = model(ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(fast, eager.detach(), atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------- parameter counts
@settings(max_examples=60, deadline=None)
@given(
    cfg=st.builds(
        ModelConfig,
        family=st.just("albert"),
        vocab_size=st.integers(1, 100_000),
        embedding_size=st.integers(1, 1024),
        hidden_size=st.sampled_from([64, 768, 4096]),
        num_heads=st.sampled_from([1, 4, 64]),
        num_layers=st.just(12),
        intermediate_size=st.integers(1, 20_000),
        sharing=st.sampled_from(SHARING_MODES),
        num_hidden_groups=st.sampled_from([1, 2, 3, 5, 12]),
        inner_group_num=st.integers(1, 3),
        head=st.sampled_from(HEADS),
        tie_word_embeddings=st.booleans(),
    )
    | configs(max_width=6)
)
def test_meta_count_equals_count_params_per_component(cfg: ModelConfig) -> None:
    model = build_model(cfg, device="meta")
    assert all(p.is_meta for p in model.parameters())
    live = Counter()
    for name, p in model.named_parameters():  # tied weights once
        live[re.sub(r"\.\d+", "", name).rsplit(".", 1)[0]] += p.numel()
    breakdown = count_params(cfg)
    assert dict(live) == breakdown.by_name()
    assert sum(p.numel() for p in model.parameters()) == breakdown.total


@pytest.mark.parametrize("sharing", SHARING_MODES)
def test_meta_counts_for_presets_and_transformers(sharing: str) -> None:
    for name in ("albert-base", "albert-xxlarge"):
        cfg = PRESETS[name].replace(sharing=sharing, head="pretraining")
        n = sum(p.numel() for p in build_model(cfg, device="meta").parameters())
        assert n == count_params(cfg).total
        if sharing in ("none", "all"):  # transformers' own count as the oracle
            with torch.device("meta"):
                hf = transformers.AlbertForPreTraining(transformers.AlbertConfig(**config_to_hf(cfg)))
            assert n == sum(p.numel() for p in hf.parameters())


def test_layers_use_the_copy_sets_of_their_group() -> None:
    cfg = PRESETS["albert-base"].replace(
        num_layers=6, num_hidden_groups=3, inner_group_num=2, sharing="attention",
        vocab_size=20, hidden_size=8, num_heads=2, intermediate_size=8, embedding_size=4,
    )
    model = build_model(cfg)
    calls: list[int] = []
    for c, sets in enumerate(model.encoder.attention):
        for block in sets:
            block.register_forward_hook(lambda *_, c=c: calls.append(c))
    with torch.no_grad():
        model(torch.zeros(1, 4, dtype=torch.long))
    assert calls == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]  # L*K executions, 2 layers per group
    assert len(model.encoder.ffn) == 6


# ----------------------------------------------------------------------------- init
def test_init_is_deterministic_and_like_transformers() -> None:
    cfg = PRESETS["bert-base"].replace(vocab_size=100, num_layers=2, head="pretraining")
    a, b = build_model(cfg, seed=3), build_model(cfg, seed=3)
    c = build_model(cfg, seed=4)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not torch.equal(sa["encoder.ffn.0.0.ffn.weight"], sc["encoder.ffn.0.0.ffn.weight"])
    w = sa["encoder.ffn.0.0.ffn.weight"]
    assert abs(w.std().item() - 0.02) < 0.001 and abs(w.mean().item()) < 0.001
    assert torch.equal(sa["encoder.attention.1.0.LayerNorm.weight"], torch.ones(768))
    assert not sa["encoder.attention.1.0.qkv.bias"].any() and not sa["predictions.bias"].any()
    assert not a.training


def test_half_precision_build() -> None:
    cfg = PRESETS["albert-base"].replace(vocab_size=100, num_layers=2)
    m = build_model(cfg, dtype=torch.bfloat16)
    assert {p.dtype for p in m.parameters()} == {torch.bfloat16}
    with torch.no_grad():
        out = m(torch.ones(1, 5, dtype=torch.long), attention_mask=torch.tensor([[1, 1, 1, 0, 0]]))
    assert out.last_hidden_state.dtype == torch.bfloat16 and out.last_hidden_state.isfinite().all()


# ----------------------------------------------------------------------------- memory guard
@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1073741824", 2**30), ("512MiB", 512 * 2**20), ("2GiB", 2 * 2**30), ("1GB", 10**9), ("1.5 GiB", 3 * 2**29),
     ("64kb", 64_000), ("  300MB ", 300 * 10**6)],
)
def test_budget_env_parsing(monkeypatch, raw: str, expected: int) -> None:
    monkeypatch.setenv(MEMORY_BUDGET, raw)
    assert memory_budget() == expected
    assert memory_budget(1234) == 1234  # the argument wins


@pytest.mark.parametrize("raw", ["abc", "-5", "0", "1.5", "0.0001KiB", "1.5XB", "12 34", "1e9", "GiB", "nan", "5 G iB"])
def test_bad_budget_env_is_a_clear_error(monkeypatch, raw: str) -> None:
    monkeypatch.setenv(MEMORY_BUDGET, raw)
    with pytest.raises(ValueError, match=MEMORY_BUDGET):
        memory_budget()
    with pytest.raises(ValueError, match=MEMORY_BUDGET):
        build_model(PRESETS["albert-base"].replace(num_layers=1))


def test_default_budget_is_one_gib(monkeypatch) -> None:
    """Change detector: the default docs/deploy.md states (1 GiB) is pinned, not derived."""
    monkeypatch.delenv(MEMORY_BUDGET, raising=False)
    assert memory_budget() == 2**30


def test_refuses_above_budget_with_estimate_and_budget(monkeypatch) -> None:
    monkeypatch.delenv(MEMORY_BUDGET, raising=False)
    cfg = PRESETS["bert-large"]  # 336M fp32 weights alone exceed 1 GiB
    weights = sum(p.numel() for p in build_model(cfg, device="meta").parameters()) * 4
    check = check_budget(cfg, 1, 128, torch.float32)
    assert not check.ok and check.budget == 2**30 and check.estimate > weights
    with pytest.raises(MemoryBudgetError) as err:
        build_model(cfg)
    assert isinstance(err.value, ValueError)
    assert fmt_bytes(check.estimate) in str(err.value)
    assert "1.1 GB" in str(err.value)  # 2**30 bytes, in the app's one unit
    # fp16 halves the weights: bert-large fits then; a tiny budget from the env refuses albert-base
    assert check_budget(cfg, 1, 128, torch.float16).ok
    monkeypatch.setenv(MEMORY_BUDGET, "10MiB")
    with pytest.raises(MemoryBudgetError, match="10.5 MB"):
        build_model(PRESETS["albert-base"])


def test_meta_is_always_allowed(monkeypatch) -> None:
    monkeypatch.setenv(MEMORY_BUDGET, "1")
    big = PRESETS["albert-xxlarge"].replace(sharing="none", vocab_size=1_000_000, head="pretraining")
    model = build_model(big, device="meta")
    assert sum(p.numel() for p in model.parameters()) == count_params(big).total > 10**9


def test_forward_refuses_what_the_check_did_not_cover() -> None:
    cfg = PRESETS["albert-base"].replace(vocab_size=50, num_layers=2, max_position_embeddings=64)
    model = build_model(cfg, batch=2, seq_len=16)
    ok = torch.zeros(2, 16, dtype=torch.long)
    with torch.no_grad():
        model(ok)
        model(torch.zeros(4, 8, dtype=torch.long))  # same number of tokens, shorter rows
        with pytest.raises(MemoryBudgetError, match="batch 3 x seq 16"):
            model(torch.zeros(3, 16, dtype=torch.long))
        with pytest.raises(MemoryBudgetError):
            model(torch.zeros(1, 17, dtype=torch.long))
        with pytest.raises(ValueError, match="max_position_embeddings"):
            model(torch.zeros(1, 65, dtype=torch.long))
        with pytest.raises(ValueError, match=r"input_ids must lie in 0\.\.49"):
            model(torch.full((1, 4), 50))
        with pytest.raises(ValueError, match="input_ids"):
            model(torch.full((1, 4), -1))
        with pytest.raises(ValueError, match="token_type_ids"):
            model(ok, token_type_ids=torch.full((2, 16), 2))
        with pytest.raises(ValueError, match="attention_mask"):
            model(ok, attention_mask=torch.ones(2, 15))
        with pytest.raises(ValueError, match="input_ids"):
            model(torch.zeros(16))


def test_kept_outputs_and_autograd_count_against_the_budget() -> None:
    cfg = PRESETS["albert-base"].replace(vocab_size=50, num_layers=2)
    exact = check_budget(cfg, 1, 32, torch.float32).estimate
    model = build_model(cfg, batch=1, seq_len=32, budget_bytes=exact)  # nothing to spare
    ids = torch.zeros(1, 32, dtype=torch.long)
    with torch.no_grad():
        model(ids)
        with pytest.raises(MemoryBudgetError):
            model(ids, output_attentions=True)
    with pytest.raises(MemoryBudgetError):
        model(ids)  # grad mode keeps every layer's activations
    roomy = build_model(cfg, batch=1, seq_len=32)
    out = roomy(ids, output_hidden_states=True, output_attentions=True)
    out.last_hidden_state.sum().backward()  # inference model, but gradients still flow


def test_check_budget_validates_its_inputs() -> None:
    cfg = PRESETS["albert-base"]
    with pytest.raises(ValueError, match="seq_len"):
        check_budget(cfg, 1, 513, torch.float32)
    with pytest.raises(ValueError, match="batch"):
        check_budget(cfg, 0, 8, torch.float32)
    with pytest.raises(ValueError, match="dtype"):
        check_budget(cfg, 1, 8, torch.int64)
    with pytest.raises(ValueError, match="device"):
        build_model(cfg, device="nowhere")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available"):
            build_model(cfg.replace(num_layers=1), device="cuda")
    with pytest.raises(ValueError, match="cfg"):
        build_model({"family": "albert"})
