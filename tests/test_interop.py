"""Import from transformers models and saved folders, export back, and the folder-loading guards."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from torch import nn

from albert_core.configuration.config import ModelConfig
from albert_core.configuration.hf_config import config_from_hf, config_to_hf
from albert_core.configuration.presets import PRESETS
from albert_core.live.budget import MemoryBudgetError
from albert_core.live.interop import from_hf, load_pretrained_folder, to_transformers
from albert_core.live.model import build_model
from tests.helpers.hf_models import hf_model

pytestmark = pytest.mark.slow  # saved transformers checkpoints loaded and run: the oracle, slow

TINY = dict(vocab_size=40, hidden_size=12, num_heads=3, intermediate_size=20, num_layers=3, max_position_embeddings=16)
TINY_ALBERT = ModelConfig(family="albert", embedding_size=6, num_hidden_groups=2, inner_group_num=2, **TINY)
TINY_BERT = ModelConfig(family="bert", hidden_act="gelu", sharing="none", **TINY)


@torch.no_grad()
def perturb(model: nn.Module, seed: int = 0) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.eval()


def batch(cfg: ModelConfig) -> dict:
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (3, 10), generator=gen)
    mask = torch.ones(3, 10, dtype=torch.long)
    mask[1, 6:] = 0
    types = torch.randint(0, cfg.type_vocab_size, (3, 10), generator=gen)
    return dict(input_ids=ids, attention_mask=mask, token_type_ids=types)


def main_output(out) -> torch.Tensor:
    """The head's main tensor of a transformers output or ours."""
    for key in ("prediction_logits", "logits", "last_hidden_state"):
        if getattr(out, key, None) is not None:
            return getattr(out, key)
    raise AssertionError("no output")


@pytest.mark.parametrize(
    "cfg",
    [TINY_ALBERT.replace(head="pretraining"), TINY_BERT.replace(head="masked-lm", tie_word_embeddings=False),
     TINY_BERT.replace(head="model")],
    ids=["albert-pretraining", "bert-masked-lm-untied", "bert-model"],
)
def test_saved_folder_loads_with_equal_outputs(tmp_path, cfg: ModelConfig) -> None:
    hf = perturb(hf_model(cfg))
    folder = tmp_path / "ckpt"
    hf.save_pretrained(folder)
    assert list(folder.glob("*.safetensors"))
    inputs = batch(cfg)
    with torch.no_grad():
        want = hf(**inputs, output_hidden_states=True)
        for ours in (from_hf(folder), load_pretrained_folder(folder, allowed_roots=[tmp_path], batch=3)):
            assert ours.config == config_from_hf(hf.config, head=cfg.head)
            got = ours(**inputs, output_hidden_states=True)
            torch.testing.assert_close(main_output(got), main_output(want), atol=1e-4, rtol=1e-4)
            for a, b in zip(got.hidden_states, want.hidden_states, strict=True):
                torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_folder_outside_allowed_roots_is_refused(tmp_path) -> None:
    inside, outside = tmp_path / "models", tmp_path / "elsewhere"
    inside.mkdir()
    perturb(hf_model(TINY_BERT)).save_pretrained(outside / "ckpt")
    with pytest.raises(ValueError, match="outside the allowed folders"):
        load_pretrained_folder(outside / "ckpt", allowed_roots=[inside])
    (inside / "link").symlink_to(outside / "ckpt")  # a link out of the root is still outside
    with pytest.raises(ValueError, match="outside the allowed folders"):
        load_pretrained_folder(inside / "link", allowed_roots=[inside])
    with pytest.raises(ValueError, match="outside the allowed folders"):
        load_pretrained_folder(inside / ".." / "elsewhere" / "ckpt", allowed_roots=[inside])
    with pytest.raises(ValueError, match="does not exist"):
        load_pretrained_folder(inside / "missing", allowed_roots=[inside])


def write_config(folder, cfg: ModelConfig) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config_to_hf(cfg)))


def test_pickle_only_folder_is_refused(tmp_path) -> None:
    folder = tmp_path / "ckpt"
    write_config(folder, TINY_BERT)
    (folder / "pytorch_model.bin").write_bytes(b"not read: pickle is never loaded")
    with pytest.raises(ValueError, match="only safetensors"):
        load_pretrained_folder(folder, allowed_roots=[tmp_path])
    with pytest.raises(ValueError, match="only safetensors"):
        from_hf(folder)


def test_budget_is_checked_from_config_before_any_weight_is_read(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ALBERT_EXPLORER_MEMORY_BUDGET", raising=False)
    folder = tmp_path / "big"
    write_config(folder, PRESETS["bert-large"])
    (folder / "model.safetensors").write_bytes(b"garbage that would fail to parse")
    with pytest.raises(MemoryBudgetError, match=r"\d GB"):
        load_pretrained_folder(folder, allowed_roots=[tmp_path])
    # the same garbage under a config that fits does get read (and fails there): the check came first
    small = tmp_path / "small"
    write_config(small, TINY_BERT)
    (small / "model.safetensors").write_bytes(b"garbage that would fail to parse")
    with pytest.raises(ValueError, match="could not load the weights") as err:
        load_pretrained_folder(small, allowed_roots=[tmp_path])
    assert not isinstance(err.value, MemoryBudgetError)


def test_weights_file_without_tensors_is_refused(tmp_path) -> None:
    from safetensors.torch import save_file

    folder = tmp_path / "ckpt"
    perturb(hf_model(TINY_BERT)).save_pretrained(folder)
    save_file({}, folder / "model.safetensors")  # a valid file that holds nothing: every weight would be random
    for load in (lambda: load_pretrained_folder(folder, allowed_roots=[tmp_path]), lambda: from_hf(folder)):
        with pytest.raises(ValueError, match=r"model\.safetensors holds no tensors"):
            load()


def test_weights_file_missing_a_tensor_is_refused(tmp_path) -> None:
    from safetensors.torch import load_file, save_file

    folder = tmp_path / "ckpt"
    perturb(hf_model(TINY_BERT)).save_pretrained(folder)
    tensors = load_file(folder / "model.safetensors")
    del tensors["pooler.dense.bias"]
    save_file(tensors, folder / "model.safetensors")
    with pytest.raises(ValueError, match=r"lack 1 tensor\(s\).*pooler\.dense\.bias.*randomly initialised"):
        load_pretrained_folder(folder, allowed_roots=[tmp_path])


def test_loaded_folder_refuses_inputs_beyond_its_check(tmp_path) -> None:
    perturb(hf_model(TINY_BERT)).save_pretrained(tmp_path / "ckpt")
    model = load_pretrained_folder(tmp_path / "ckpt", allowed_roots=[tmp_path], batch=1, seq_len=8)
    with torch.no_grad():
        model(torch.zeros(1, 8, dtype=torch.long))
        with pytest.raises(MemoryBudgetError):
            model(torch.zeros(2, 8, dtype=torch.long))


@pytest.mark.parametrize(
    "cfg",
    [TINY_ALBERT.replace(head="pretraining"), TINY_ALBERT.replace(sharing="none", head="masked-lm"),
     TINY_BERT.replace(head="pretraining", tie_word_embeddings=False), TINY_ALBERT.replace(hidden_act="relu")],
    ids=["albert-all-G2-K2", "albert-none", "bert-untied", "albert-model-relu"],
)
def test_export_round_trip(cfg: ModelConfig) -> None:
    ours = perturb(build_model(cfg, batch=3, seq_len=10))
    hf = to_transformers(ours)
    assert type(hf).__name__ == config_to_hf(cfg)["architectures"][0]
    inputs = batch(cfg)
    with torch.no_grad():
        torch.testing.assert_close(main_output(ours(**inputs)), main_output(hf(**inputs)), atol=1e-4, rtol=1e-4)
    back = from_hf(hf)
    mine, theirs = ours.state_dict(), back.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)


@pytest.mark.parametrize("sharing", ["attention", "ffn"])
def test_partial_sharing_export_is_a_clear_error(sharing: str) -> None:
    model = build_model(TINY_ALBERT.replace(sharing=sharing))
    with pytest.raises(ValueError, match=f"sharing='{sharing}' cannot be expressed in transformers"):
        to_transformers(model)
    with pytest.raises(ValueError, match="meta"):
        to_transformers(build_model(TINY_ALBERT, device="meta"))


def test_export_needs_room_for_a_second_copy() -> None:
    model = build_model(TINY_BERT)
    weights = sum(p.numel() for p in model.parameters()) * 4
    with pytest.raises(MemoryBudgetError, match="second copy"):
        to_transformers(model, budget_bytes=2 * weights - 1)
    exported = to_transformers(model, budget_bytes=2 * weights)
    assert sum(p.numel() for p in exported.parameters()) * 4 == weights


def test_head_comes_from_the_class_and_other_sources_are_refused() -> None:
    hf_cfg = transformers.AlbertConfig(**config_to_hf(TINY_ALBERT))
    assert from_hf(transformers.AlbertForMaskedLM(hf_cfg)).config.head == "masked-lm"
    assert from_hf(transformers.AlbertModel(hf_cfg)).config.head == "model"
    with pytest.raises(ValueError, match="source must be one of"):
        from_hf(transformers.AlbertForSequenceClassification(hf_cfg))
    with pytest.raises(ValueError, match="source must be one of"):
        from_hf(42)
    with pytest.raises(ValueError, match="is_decoder"):
        from_hf(transformers.BertModel(transformers.BertConfig(**config_to_hf(TINY_BERT), is_decoder=True)))
    with pytest.raises(ValueError, match="add_pooling_layer=False"):
        from_hf(transformers.AlbertModel(hf_cfg, add_pooling_layer=False))


def test_every_source_parameter_must_be_used() -> None:
    hf = transformers.BertModel(transformers.BertConfig(**config_to_hf(TINY_BERT)))
    hf.register_parameter("stray", nn.Parameter(torch.zeros(3)))
    with pytest.raises(AssertionError, match="stray"):
        from_hf(hf)
