"""estimate_memory against bytes measured on real transformers models (CPU tensors).

- weights: sum(p.numel() * p.element_size()) of the model cast to the dtype (meta device);
- gradients and optimizer states: bytes of p.grad and of torch.optim state after one real step;
- training activations: unique storages saved for backward (torch.autograd.graph.saved_tensors_hooks);
- inference activations: peak bytes of simultaneously live tensors of a forward pass, tracked with a
  TorchDispatchMode; the estimate must be an upper bound (the live model's memory guard relies on it).
"""

from __future__ import annotations

import subprocess
import sys
import weakref
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from albert_core import PRESETS, ModelConfig, estimate_memory
from albert_core.configuration.coerce import bert_twin
from albert_core.configuration.config import family_of
from albert_core.configuration.hf_config import config_to_hf
from albert_core.counting.memory import activation_bytes_terms
from tests.helpers.checkpointing import checkpoint_layers
from tests.helpers.facts import EXACT_COUNTS
from tests.helpers.hf_models import hf_model

transformers.logging.set_verbosity_error()
TORCH_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
SMALL = dict(vocab_size=500, embedding_size=16, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64)


def forward_kwargs(cfg: ModelConfig, batch: int, seq_len: int) -> dict[str, torch.Tensor]:
    """Inputs of one training step: token ids plus the labels that make transformers compute the loss."""
    g = torch.Generator().manual_seed(0)
    kw = {"input_ids": torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=g)}
    if cfg.has_mlm_head:
        kw["labels"] = torch.randint(0, cfg.vocab_size, (batch, seq_len), generator=g)
    if cfg.has_order_head:
        key = "sentence_order_label" if cfg.family == "albert" else "next_sentence_label"
        kw[key] = torch.randint(0, 2, (batch,), generator=g)
    return kw


def saved_for_backward(model, kwargs) -> int:
    """Bytes of the unique storages autograd saves in one forward pass, weights and buffers excluded."""
    skip = {t.untyped_storage().data_ptr() for t in (*model.parameters(), *model.buffers())}
    saved: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in skip:
            saved[storage.data_ptr()] = storage.nbytes()  # views of one storage count once
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(**kwargs)  # keep the graph (and so every saved tensor) alive while counting
    total = sum(saved.values())
    del out  # only now may the saved tensors (and their storages) go
    return total


def measured_training_activations(cfg, batch, seq_len, dtype="fp32", dropout=None) -> tuple[int, int]:
    p = family_of(cfg.family).dropout if dropout is None else dropout
    model = hf_model(cfg, dropout=p).to(TORCH_DTYPES[dtype])
    got = saved_for_backward(model, forward_kwargs(cfg, batch, seq_len))
    est = estimate_memory(cfg, batch, seq_len, dtype, dropout=p, device="cpu").activations
    return got, est


NAMED = [
    # (config changes, batch, seq_len, dtype, dropout)
    (dict(family="albert", head="model"), 2, 16, "fp32", None),
    (dict(family="albert", head="pretraining", num_hidden_groups=2, inner_group_num=2), 2, 24, "fp32", 0.1),
    (dict(family="albert", head="masked-lm", hidden_act="gelu", sharing="none"), 3, 32, "bf16", None),
    (dict(family="bert", head="model", sharing="none", hidden_act="relu"), 4, 64, "fp32", None),
    (dict(family="bert", head="pretraining", sharing="none"), 2, 16, "fp32", None),
    (dict(family="bert", head="masked-lm", sharing="none"), 1, 128, "bf16", 0.0),
]


@pytest.mark.slow  # bytes torch really saves / allocates
@pytest.mark.parametrize(("changes", "batch", "seq_len", "dtype", "dropout"), NAMED)
def test_training_activations_match_saved_tensors(changes, batch, seq_len, dtype, dropout):
    cfg = ModelConfig(**{**SMALL, **changes})
    got, est = measured_training_activations(cfg, batch, seq_len, dtype, dropout)
    assert abs(est - got) <= 0.10 * got, (cfg.label, got, est)


@st.composite
def training_cases(draw):
    family = draw(st.sampled_from(["albert", "bert"]))
    heads = draw(st.sampled_from([1, 2, 4]))
    L = draw(st.integers(1, 3))
    cfg = ModelConfig(
        family=family,
        vocab_size=draw(st.integers(50, 800)),
        embedding_size=draw(st.integers(4, 48)),
        hidden_size=heads * draw(st.integers(2, 12)),
        num_layers=L,
        num_heads=heads,
        intermediate_size=draw(st.integers(4, 96)),
        hidden_act=draw(st.sampled_from(["gelu", "gelu_new", "relu"])),
        sharing="all" if family == "albert" else "none",
        num_hidden_groups=draw(st.integers(1, L)) if family == "albert" else 1,
        inner_group_num=draw(st.integers(1, 2)) if family == "albert" else 1,
        head=draw(st.sampled_from(["model", "pretraining", "masked-lm"])),
        tie_word_embeddings=draw(st.booleans()),
    )
    return (
        cfg,
        draw(st.integers(1, 4)),
        draw(st.integers(1, 48)),
        draw(st.sampled_from(["fp32", "bf16"])),
        draw(st.sampled_from([None, 0.0, 0.1])),
    )


@pytest.mark.slow  # bytes torch really saves / allocates
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(training_cases())
def test_training_activations_match_saved_tensors_drawn(case):
    cfg, batch, seq_len, dtype, dropout = case
    got, est = measured_training_activations(cfg, batch, seq_len, dtype, dropout)
    assert abs(est - got) <= 0.10 * got, (cfg, batch, seq_len, dtype, dropout, got, est)


def test_paper_bert_twin_activations_use_gelu_and_bert_dropout():
    """The paper's BERT beside an ALBERT: gelu (not ALBERT's gelu_new) and BERT's dropout 0.1 (transformers'
    BertConfig default, the oracle here), which estimate_memory takes from the family when ``dropout`` is not
    given."""
    albert = ModelConfig(**SMALL, family="albert", head="pretraining")
    twin = bert_twin(albert).replace(hidden_act="gelu")
    assert config_to_hf(twin)["hidden_dropout_prob"] == family_of("bert").dropout == transformers.BertConfig().hidden_dropout_prob
    measured = {}
    for name, cfg in (("albert", albert), ("twin", twin)):
        got, est = measured_training_activations(cfg, 2, 32)
        assert abs(est - got) <= 0.10 * got, (name, got, est)
        measured[name] = got
    ratio = estimate_memory(albert, 2, 32, device="cpu").activations / estimate_memory(twin, 2, 32, device="cpu").activations
    assert abs(ratio / (measured["albert"] / measured["twin"]) - 1) <= 0.10


def test_cuda_masks_are_bool_and_dropout_zero_saves_no_mask():
    cfg = ModelConfig(**SMALL, family="bert", sharing="none")
    cpu = estimate_memory(cfg, 2, 16, dropout=0.1, device="cpu").activations
    cuda = estimate_memory(cfg, 2, 16, dropout=0.1, device="cuda").activations
    none = estimate_memory(cfg, 2, 16, dropout=0.0).activations
    assert none < cuda < cpu
    # torch saves nothing for dropout with p == 0, on either device
    assert estimate_memory(cfg, 2, 16, dropout=0.0, device="cpu").activations == none


def checkpointed_saved(model, kwargs) -> tuple[int, int]:
    """Activation bytes of a training step with every encoder layer checkpointed: the unique storages
    saved for backward outside the checkpointed layers, the layers' inputs (kept by the checkpoints)
    and what one layer saves when the backward recomputes it (its forward run again as recorded).
    Returns (bytes, checkpointed layer calls)."""
    skip = {t.untyped_storage().data_ptr() for t in (*model.parameters(), *model.buffers())}
    saved: dict[int, int] = {}

    def note(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in skip:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    calls: list = []
    checkpoint_layers(model, calls)
    with torch.autograd.graph.saved_tensors_hooks(note, lambda t: t):
        out = model(**kwargs)  # inside a checkpointed layer torch's own hooks replace these
    for _, args, kw in calls:
        for t in (*args, *kw.values()):
            if torch.is_tensor(t):
                note(t)
    fn, args, kw = calls[-1]
    with torch.autograd.graph.saved_tensors_hooks(note, lambda t: t):
        again = fn(*args, **kw)  # what the backward's recompute of the last layer saves
    total = sum(saved.values())
    del out, again  # the graphs kept every saved storage alive (and distinct) while counting
    return total, len(calls)


@pytest.mark.parametrize(
    ("changes", "batch", "seq_len", "dtype", "dropout"),
    [
        (dict(family="bert", head="pretraining", sharing="none"), 2, 16, "fp32", None),
        (dict(family="bert", head="masked-lm", sharing="none", num_layers=4), 2, 32, "bf16", 0.0),
        (dict(family="bert", head="model", sharing="none", hidden_act="relu", num_layers=3), 4, 16, "fp32", 0.1),
        (dict(family="albert", head="pretraining", inner_group_num=2), 2, 16, "fp32", None),
        (dict(family="albert", head="masked-lm", num_layers=4, num_hidden_groups=2), 1, 48, "bf16", 0.1),
    ],
)
def test_checkpointing_activations_match_saved_tensors(changes, batch, seq_len, dtype, dropout):
    cfg = ModelConfig(**{**SMALL, **changes})
    p = family_of(cfg.family).dropout if dropout is None else dropout
    model = hf_model(cfg, dropout=p).to(TORCH_DTYPES[dtype])
    got, calls = checkpointed_saved(model, forward_kwargs(cfg, batch, seq_len))
    assert calls == cfg.executed_layers  # every executed layer (L*K) is checkpointed
    est = estimate_memory(cfg, batch, seq_len, dtype, dropout=p, device="cpu", checkpointing=True)
    assert abs(est.activations - got) <= 0.10 * got, (cfg.label, got, est.activations)
    plain = estimate_memory(cfg, batch, seq_len, dtype, dropout=p, device="cpu")
    assert est.activations < plain.activations
    assert est.activation_groups["heads"] == plain.activation_groups["heads"]  # heads are not checkpointed
    assert "checkpointing" in est.note and "estimate" in est.note
    assert (est.weights, est.gradients, est.optimizer) == (plain.weights, plain.gradients, plain.optimizer)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(training_cases())
def test_checkpointing_activations_match_saved_tensors_drawn(case):
    cfg, batch, seq_len, dtype, dropout = case
    p = family_of(cfg.family).dropout if dropout is None else dropout
    got, _ = checkpointed_saved(hf_model(cfg, dropout=p).to(TORCH_DTYPES[dtype]), forward_kwargs(cfg, batch, seq_len))
    est = estimate_memory(cfg, batch, seq_len, dtype, dropout=p, device="cpu", checkpointing=True).activations
    assert abs(est - got) <= 0.10 * got, (cfg, batch, seq_len, dtype, dropout, got, est)


def test_checkpointing_keeps_one_layer_and_the_layer_inputs():
    """Saved activations of the encoder grow by one B*S*H input per layer instead of a whole layer."""
    cfg = PRESETS["bert-base"]
    B, S, b = 8, 128, 2
    one, two = (
        estimate_memory(cfg.replace(num_layers=n), B, S, "bf16", checkpointing=True).activation_groups["encoder"]
        for n in (1, 2)
    )
    assert two - one == B * S * 768 * b
    full_one = estimate_memory(cfg.replace(num_layers=1), B, S, "bf16").activation_groups["encoder"]
    assert one == full_one


# ----------------------------------------------------------------------------- exact figures
@pytest.mark.parametrize("name", ["albert-base", "albert-xxlarge", "bert-base"])
@pytest.mark.parametrize("head", ["model", "pretraining", "masked-lm"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_weights_equal_model_bytes(name, head, dtype):
    cfg = PRESETS[name].replace(head=head, tie_word_embeddings=head != "masked-lm")
    model = hf_model(cfg, device="meta").to(TORCH_DTYPES[dtype])
    want = sum(p.numel() * p.element_size() for p in model.parameters())
    est = estimate_memory(cfg, 1, 8, dtype, optimizer="none", training=False)
    assert est.weights == want
    assert (est.gradients, est.optimizer) == (0, 0)
    assert estimate_memory(cfg, 1, 8, "int8", training=False).weights == want // TORCH_DTYPES[dtype].itemsize


def _state_bytes(opt: torch.optim.Optimizer) -> int:
    return sum(
        v.numel() * v.element_size()
        for state in opt.state.values()
        for key, v in state.items()
        if key != "step" and isinstance(v, torch.Tensor)
    )


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-3),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-3),
}


def train_step(cfg: ModelConfig, dtype: str, optimizer: str, precision: str = "pure"):
    """One real training step; returns (model, fp32 master parameters or None, optimizer).

    pure: torch's optimizer on the model cast to ``dtype``. mixed: the model in ``dtype`` computes
    the loss and its gradients; the optimizer updates an fp32 master copy of every parameter, whose
    gradients are the model's gradients cast to fp32, and the result is copied back into the model.
    """
    model = hf_model(cfg).to(TORCH_DTYPES[dtype])
    master = [p.detach().float().requires_grad_() for p in model.parameters()] if precision == "mixed" else None
    opt = OPTIMIZERS[optimizer](master if master is not None else model.parameters())
    out = model(**forward_kwargs(cfg, 2, 8))
    loss = out.loss if cfg.head != "model" else out.last_hidden_state.sum() + out.pooler_output.sum()
    loss.backward()
    if master is not None:
        for m, p in zip(master, model.parameters(), strict=True):
            m.grad = None if p.grad is None else p.grad.float()
    opt.step()
    if master is not None:
        with torch.no_grad():
            for m, p in zip(master, model.parameters(), strict=True):
                p.copy_(m)
                m.grad = None  # the fp32 gradient view is transient
    return model, master, opt


STEP_CASES = [
    # (family, head, dtype, tie_word_embeddings)
    ("albert", "pretraining", "fp32", True),
    ("bert", "model", "bf16", True),
    ("albert", "masked-lm", "fp32", False),  # untied: predictions.bias gets no gradient
    ("bert", "pretraining", "bf16", False),
]


@pytest.mark.slow  # bytes torch really saves / allocates
@pytest.mark.parametrize("optimizer", ["sgd", "adam", "adamw"])
@pytest.mark.parametrize(("family", "head", "dtype", "tie"), STEP_CASES)
def test_gradients_and_optimizer_states_equal_torch(optimizer, family, head, dtype, tie):
    cfg = ModelConfig(
        **SMALL, family=family, head=head, sharing="all" if family == "albert" else "none", tie_word_embeddings=tie
    )
    model, _, opt = train_step(cfg, dtype, optimizer)
    est = estimate_memory(cfg, 2, 8, dtype, optimizer)
    assert est.weights == _bytes(model.parameters())
    assert est.gradients == _bytes(p.grad for p in model.parameters())
    assert est.optimizer == _state_bytes(opt)
    assert est.master_weights == 0
    unused = [name for name, p in model.named_parameters() if p.grad is None]
    assert unused == ([] if tie else [n for n in dict(model.named_parameters()) if n.endswith("predictions.bias")])
    if not tie:
        assert est.gradients == est.weights - cfg.vocab_size * TORCH_DTYPES[dtype].itemsize


MIXED_CASES = [
    ("bert", "model", "bf16", True),
    ("albert", "masked-lm", "bf16", False),
    ("bert", "pretraining", "bf16", False),
    ("albert", "pretraining", "fp16", True),
]


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
@pytest.mark.parametrize(("family", "head", "dtype", "tie"), MIXED_CASES)
def test_mixed_precision_equals_master_copy_and_fp32_states(optimizer, family, head, dtype, tie):
    """16-bit model + fp32 master copy + torch's optimizer on the master copy, after one step."""
    cfg = ModelConfig(
        **SMALL, family=family, head=head, sharing="all" if family == "albert" else "none", tie_word_embeddings=tie
    )
    model, master, opt = train_step(cfg, dtype, optimizer, precision="mixed")
    assert {p.dtype for p in model.parameters()} == {TORCH_DTYPES[dtype]}
    est = estimate_memory(cfg, 2, 8, dtype, optimizer, precision="mixed")
    assert est.weights == _bytes(model.parameters())
    assert est.gradients == _bytes(p.grad for p in model.parameters())
    assert est.master_weights == _bytes(master)
    assert {v.dtype for s in opt.state.values() for k, v in s.items() if k != "step"} == {torch.float32}
    assert est.optimizer == _bytes(master) + _state_bytes(opt)
    # activations: the model computes in the 16-bit dtype, as the pure precision
    assert est.activations == estimate_memory(cfg, 2, 8, dtype, optimizer).activations


@pytest.mark.parametrize(("name", "params"), [(n, EXACT_COUNTS[n][1]) for n in ("albert-base", "bert-base")])
def test_bytes_per_parameter_per_precision(name, params):
    """AdamW, tied pretraining models (every parameter trained): fp32 16 bytes per parameter, pure
    bf16 8, mixed bf16 16 (2 weights + 2 gradients + 4 master + 8 moments). Counts from transformers."""
    cfg = PRESETS[name].replace(head="pretraining")
    per_param = {}
    for dtype, precision in (("fp32", "pure"), ("bf16", "pure"), ("bf16", "mixed"), ("fp16", "mixed")):
        est = estimate_memory(cfg, 8, 128, dtype, "adamw", precision=precision)
        states = est.weights + est.gradients + est.optimizer
        assert states % params == 0
        per_param[dtype, precision] = states // params
    assert per_param == {("fp32", "pure"): 16, ("bf16", "pure"): 8, ("bf16", "mixed"): 16, ("fp16", "mixed"): 16}
    mixed = estimate_memory(cfg, 8, 128, "bf16", "adamw", precision="mixed")
    assert (mixed.weights, mixed.gradients, mixed.master_weights) == (2 * params, 2 * params, 4 * params)
    assert mixed.optimizer == 12 * params
    assert estimate_memory(cfg, 8, 128, "bf16", "none", precision="mixed").optimizer == 0  # nothing to update
    inference = estimate_memory(cfg, 8, 128, "bf16", "adamw", training=False, precision="mixed")
    assert (inference.weights, inference.gradients, inference.optimizer) == (2 * params, 0, 0)


# ----------------------------------------------------------------------------- inference peak
class LivePeak(TorchDispatchMode):
    """Peak bytes of the tensors a forward pass creates that are alive at the same time."""

    def __init__(self, skip: set[int]):
        super().__init__()
        self.skip, self.live, self.now, self.peak = skip, {}, 0, 0

    def _release(self, ptr: int) -> None:
        entry = self.live[ptr]
        entry[1] -= 1
        if entry[1] == 0:
            self.now -= entry[0]
            del self.live[ptr]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr == 0 or ptr in self.skip:
                continue
            if ptr not in self.live:
                self.live[ptr] = [storage.nbytes(), 0]
                self.now += storage.nbytes()
                self.peak = max(self.peak, self.now)
            self.live[ptr][1] += 1  # one more tensor viewing this storage
            weakref.finalize(t, self._release, ptr)
        return out


@pytest.mark.parametrize(
    ("changes", "batch", "seq_len", "dtype"),
    [
        (dict(family="albert", head="model", num_heads=16, hidden_size=64), 2, 256, "fp32"),
        (dict(family="albert", head="masked-lm", vocab_size=8000), 4, 64, "fp32"),
        (dict(family="bert", head="model", sharing="none", hidden_act="relu", intermediate_size=512), 8, 32, "bf16"),
        (dict(family="bert", head="pretraining", sharing="none"), 4, 128, "fp32"),
        (dict(family="albert", head="pretraining", inner_group_num=2), 1, 1, "fp32"),
    ],
)
def test_inference_estimate_bounds_live_peak(changes, batch, seq_len, dtype):
    """An upper bound; within 4x of the live peak unless one token leaves the weight-repacking
    scratch the estimate allows for the CPU kernels dominating."""
    cfg = ModelConfig(**{**SMALL, **changes})
    model = hf_model(cfg).to(TORCH_DTYPES[dtype]).eval()
    skip = {t.untyped_storage().data_ptr() for t in (*model.parameters(), *model.buffers())}
    mode = LivePeak(skip)
    with torch.inference_mode(), mode:
        model(input_ids=forward_kwargs(cfg, batch, seq_len)["input_ids"])
    est = estimate_memory(cfg, batch, seq_len, dtype, "none", training=False).activations
    assert mode.peak <= est, (mode.peak, est)
    if batch * seq_len > 1:
        assert est <= 4 * mode.peak, (mode.peak, est)


# ----------------------------------------------------------------------------- behaviour
def test_sharing_changes_weights_not_activations():
    base = PRESETS["albert-base"]
    shared = estimate_memory(base, 8, 128)
    unshared = estimate_memory(base.replace(sharing="none"), 8, 128)
    grouped = estimate_memory(base.replace(num_hidden_groups=4), 8, 128)
    assert shared.activations == unshared.activations == grouped.activations
    assert shared.weights < grouped.weights < unshared.weights
    deeper = estimate_memory(base.replace(inner_group_num=2), 8, 128)
    assert deeper.activations > shared.activations  # K runs more layers


def test_breakdown_adds_up():
    est = estimate_memory(PRESETS["bert-base"], 4, 64, "bf16", "sgd")
    d = est.as_dict()
    assert d["total"] == est.total == sum(d[k] for k in ("weights", "gradients", "optimizer", "activations"))
    assert est.activations == sum(est.activation_groups.values())
    assert est.exact == {"weights": True, "gradients": True, "optimizer": True, "activations": False}
    assert "estimate" in est.note
    frame = est.to_frame()
    assert list(frame["kind"]) == ["weights", "gradients", "optimizer", "activations"]
    assert frame["bytes"].sum() == est.total
    inference = estimate_memory(PRESETS["bert-base"], 4, 64, "int8", "adamw", training=False)
    assert (inference.gradients, inference.optimizer) == (0, 0)
    assert all(type(v) is int for v in (*d.values(), *est.activation_groups.values()))


def test_vectorised_terms_equal_scalar():
    cfgs = [
        PRESETS["albert-base"],
        PRESETS["albert-base"].replace(embedding_size=256, num_layers=6, inner_group_num=3, num_hidden_groups=2),
        PRESETS["albert-xlarge"],
    ]
    cols = {k: np.array([getattr(c, k) for c in cfgs], dtype=np.int64) for k in SMALL}
    cols["inner_group_num"] = np.array([c.inner_group_num for c in cfgs], dtype=np.int64)
    c = SimpleNamespace(
        **cols,
        family="albert", head="pretraining", hidden_act="gelu_new",
        executed_layers=cols["num_layers"] * cols["inner_group_num"],
        is_factorized=True, has_pooler=True, has_mlm_head=True, has_order_head=True,
        kv_size=cols["hidden_size"], ffn_kind="dense", has_discriminator=False, norm="layernorm",
        embedding_norm=True, head_transform=True, norm_placement="post", position="learned", head_act="gelu_new",
        transform_act="gelu_new", lora_terms=lambda: [],  # ALBERT's own scheme: no LoRA
    )
    batch, seq = np.array([8, 2, 32]), np.array([128, 512, 64])
    for training in (True, False):
        terms = activation_bytes_terms(c, batch, seq, 2, training, 0.1)
        for i, cfg in enumerate(cfgs):
            one = activation_bytes_terms(cfg.replace(head="pretraining"), int(batch[i]), int(seq[i]), 2, training, 0.1)
            assert {k: int(v[i]) for k, v in terms.items()} == one


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(dtype="int8"), ("int8", "inference")),
        (dict(dtype="fp64"), ("dtype",)),
        (dict(optimizer="lion"), ("optimizer",)),
        (dict(batch=0), ("batch",)),
        (dict(batch=2.5), ("batch",)),
        (dict(seq_len=513), ("seq_len", "max_position_embeddings")),
        (dict(dropout=1.0), ("dropout",)),
        (dict(dropout=-0.1), ("dropout",)),
        (dict(dropout=True), ("dropout",)),
        (dict(training="yes"), ("training",)),
        (dict(device="tpu"), ("device",)),
        (dict(precision="amp"), ("precision", "pure", "mixed")),
        (dict(precision="mixed"), ("precision", "fp16", "bf16")),  # fp32 is no mixed precision
        (dict(precision="mixed", dtype="int8", training=False), ("precision", "fp16", "bf16")),
        (dict(checkpointing="yes"), ("checkpointing",)),
        (dict(checkpointing=True, training=False), ("checkpointing", "training")),
    ],
)
def test_bad_input_names_field(kwargs, words):
    with pytest.raises(ValueError) as info:
        estimate_memory(PRESETS["albert-base"], **kwargs)
    for word in words:
        assert word in str(info.value)


def test_rejects_non_config():
    with pytest.raises(ValueError, match="cfg"):
        estimate_memory({"hidden_size": 768})


def test_counting_does_not_import_torch():
    code = "import sys, albert_core.counting.memory; sys.exit('torch' in sys.modules or 'transformers' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


SDPA_CASES = [
    # (config changes, batch, seq_len, dtype, dropout)
    (dict(family="albert", head="model"), 2, 16, "fp32", 0.0),
    (dict(family="albert", head="pretraining", num_hidden_groups=2, inner_group_num=2), 2, 48, "bf16", 0.0),
    (dict(family="bert", head="masked-lm", sharing="none"), 3, 32, "fp32", 0.0),
    (dict(family="albert", head="model"), 2, 64, "fp32", 0.1),  # the CPU's SDPA takes its math path
    (dict(family="bert", head="model", sharing="none"), 2, 32, "fp32", 0.1),
]


@pytest.mark.parametrize(("changes", "batch", "seq_len", "dtype", "dropout"), SDPA_CASES)
def test_sdpa_saves_what_the_estimate_says_instead_of_the_attention_probabilities(changes, batch, seq_len, dtype,
                                                                                  dropout):
    """transformers' default attention (SDPA) against eager, measured on the CPU: what SDPA does not save is
    exactly what the estimate leaves out (the probabilities, kept as one fp32 logsumexp per row), and with
    dropout the CPU's SDPA saves what eager saves."""
    cfg = ModelConfig(**{**SMALL, **changes})
    kwargs = forward_kwargs(cfg, batch, seq_len)
    got = {attn: saved_for_backward(hf_model(cfg, attn=attn, dropout=dropout).to(TORCH_DTYPES[dtype]), kwargs)
           for attn in ("eager", "sdpa")}
    est = {attn: estimate_memory(cfg, batch, seq_len, dtype, dropout=dropout, device="cpu", attention=attn).activations
           for attn in ("eager", "sdpa")}
    assert est["eager"] - est["sdpa"] == got["eager"] - got["sdpa"], (got, est)
    if dropout > 0:
        assert got["sdpa"] == got["eager"]


def test_sdpa_on_cuda_keeps_neither_probabilities_nor_their_dropout():
    # the CUDA kernels (flash, memory-efficient) keep the output and one fp32 logsumexp per row, with dropout
    # too (its mask is regenerated from the RNG state): per executed layer the eager model's B*heads*S*S
    # probabilities, its bool mask and the dropped probabilities go, B*heads*S*4 bytes come
    cfg = PRESETS["bert-base"]
    B, S, X, heads = 8, 128, 12, 12
    eager = estimate_memory(cfg, B, S, "fp16", dropout=0.1, attention="eager")
    sdpa = estimate_memory(cfg, B, S, "fp16", dropout=0.1, attention="sdpa")
    assert eager.activations - sdpa.activations == X * (B * heads * S * S * (2 + 1 + 2) - B * heads * S * 4)
    assert "sdpa model" in sdpa.note and "eager model" in eager.note
    with pytest.raises(ValueError, match="attention"):
        estimate_memory(cfg, attention="flash")


def test_docs_architecture_gives_estimate_memory_s_signature():
    """docs/architecture.md writes the signature out (defaults included): keep it the code's."""
    import inspect
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    params = []
    for p in inspect.signature(estimate_memory).parameters.values():
        if p.kind is p.KEYWORD_ONLY and "*" not in params:
            params.append("*")
        params.append(p.name if p.default is p.empty else f"{p.name}={p.default!r}".replace("'", '"'))
    assert f"`estimate_memory({', '.join(params)}) -> MemoryEstimate`" in doc
