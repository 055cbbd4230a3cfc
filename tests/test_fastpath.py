"""The live model's kernel choice (`albert_core.live.fastpath`): oneDNN and the eager fallback compute the
same outputs, the probe decides once per shape class, and training never takes the private path."""

from __future__ import annotations

import pytest
import torch

from albert_core import ModelConfig
from albert_core.live import fastpath
from albert_core.live.model import build_model

# Wide enough that every matmul is probed (64 rows x 256 x 256 = PROBE_MIN_MACS), small enough to run at once.
CFG = ModelConfig(vocab_size=300, embedding_size=16, hidden_size=256, num_layers=2, num_heads=4,
                  intermediate_size=512, sharing="ffn", head="pretraining", hidden_act="gelu_new")
needs_onednn = pytest.mark.skipif(not fastpath.AVAILABLE, reason="this torch build has no oneDNN linear")


def _outputs(mode: str | None) -> list[torch.Tensor]:
    torch.manual_seed(1)
    ids = torch.randint(0, CFG.vocab_size, (2, 32))
    mask = torch.ones_like(ids)
    mask[1, 20:] = 0
    model = build_model(CFG, seed=3)
    with fastpath.forced(mode), torch.no_grad():
        out = model(ids, attention_mask=mask)
    return [out.last_hidden_state, out.pooler_output, out.prediction_logits, out.order_logits]


@needs_onednn
def test_onednn_and_eager_give_the_same_outputs():
    for fast, slow in zip(_outputs("1"), _outputs("0"), strict=True):
        torch.testing.assert_close(fast, slow, rtol=1e-5, atol=1e-5)


def test_the_probed_choice_gives_the_eager_outputs_and_is_kept():
    eager = _outputs("0")
    fastpath.reset()
    probed = _outputs(None)
    for got, want in zip(probed, eager, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    if fastpath.AVAILABLE:
        made = fastpath.decisions()
        # qkv (256 -> 768), ffn (256 -> 512, gelu_new), dense and ffn_output as residuals; 64 rows
        assert ("linear", 256, 768, None, 64) in made and ("linear", 256, 512, "gelu_new", 64) in made
        assert ("residual", 256, 256, None, 64) in made and ("residual", 512, 256, None, 64) in made
        _outputs(None)
        assert fastpath.decisions() == made  # decided once per process and shape class


@pytest.mark.parametrize("kind, act", [("linear", None), ("linear", "gelu"), ("linear", "relu"), ("residual", None)])
@needs_onednn
def test_each_kernel_pair_agrees_on_random_shapes(kind, act):
    gen = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(3, 7, 24, generator=gen), torch.randn(40, 24, generator=gen), torch.randn(40, generator=gen)
    with torch.no_grad():
        if kind == "residual":
            res = torch.randn(3, 7, 40, generator=gen)
            got, want = fastpath.onednn_residual(res, w, b, x), fastpath.eager_residual(res, w, b, x)
            torch.testing.assert_close(want, res + x @ w.T + b)  # the eager path against plain arithmetic
        else:
            got, want = fastpath.onednn_linear(x, w, b, act), fastpath.eager_linear(x, w, b, act)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_training_and_other_dtypes_never_take_the_private_path():
    x = torch.randn(4, 8)
    with fastpath.forced("1"):
        assert not fastpath.use_onednn("linear", x, 8, 8)  # grad enabled: no autograd formula
        with torch.no_grad():
            assert not fastpath.use_onednn("linear", x.double(), 8, 8)
            assert fastpath.use_onednn("linear", x, 8, 8) == fastpath.AVAILABLE
    with fastpath.forced("0"), torch.no_grad():
        assert not fastpath.use_onednn("linear", x, 8, 8)
    with torch.no_grad():  # too small to be worth a probe: eager, and nothing is probed
        fastpath.reset()
        assert not fastpath.use_onednn("linear", x, 8, 8) and fastpath.decisions() == {}
