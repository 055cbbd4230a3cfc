"""ALBERT's ideas applied post hoc to a trained BERT, built as live PyTorch models (the variants
`albert_core.counting.posthoc` counts): the word table factorized by truncated SVD, the layers shared by their
mean, the shared layer relaxed by a per-layer LoRA initialised from the SVD of each layer's difference from the
mean (Relaxed Recursive Transformers, ICLR 2025). No training: every weight comes from the trained model.

`PosthocEncoder` mirrors the trained BERT's modules, with the query, key and value as separate matrices (each has
its own LoRA) and ``encoder.layer`` holding L blocks or the one shared block; `component_of` of each parameter name
is a component of `posthoc_params`. Its forward uses only `F.linear`, explicit or SDPA attention and element-wise
work, so FlopCounterMode counts exactly what `posthoc_flops` counts. The variant with nothing changed
(`Variant()`) reproduces the trained model (tests/test_posthoc.py).

`PosthocWeights` holds the trained tensors and their decompositions once (the word table's SVD is shared by every
E), so a grid of variants costs one SVD of the table and one per layer and matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from albert_core.configuration.config import ModelConfig
from albert_core.counting.posthoc import MATRICES, Variant, check_variant, matrix_dims, posthoc_total
from albert_core.live import budget
from albert_core.live.budget import MemoryBudgetError
from albert_core.live.model import ACTIVATIONS, EncoderModel, EncoderOutput


class LoRA(nn.Module):
    """x -> B(A(x)): A (r x d_in) then B (d_out x r), both without bias."""

    def __init__(self, d_in: int, d_out: int, rank: int):
        super().__init__()
        self.A = nn.Linear(d_in, rank, bias=False, device="meta")
        self.B = nn.Linear(rank, d_out, bias=False, device="meta")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(F.linear(x, self.A.weight), self.B.weight)


class BlockAttention(nn.Module):
    def __init__(self, H: int, eps: float):
        super().__init__()
        for name in ("query", "key", "value", "dense"):
            setattr(self, name, nn.Linear(H, H, device="meta"))
        self.LayerNorm = nn.LayerNorm(H, eps=eps, device="meta")


class Block(nn.Module):
    """One post-LN BERT layer's weights (the forward is `PosthocEncoder._layer`, which adds the position's LoRA)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, inner = cfg.hidden_size, cfg.intermediate_size
        self.attention = BlockAttention(H, cfg.layer_norm_eps)
        self.ffn = nn.Linear(H, inner, device="meta")
        self.ffn_output = nn.Linear(inner, H, device="meta")
        self.output_LayerNorm = nn.LayerNorm(H, eps=cfg.layer_norm_eps, device="meta")


class PosthocEmbeddings(nn.Module):
    def __init__(self, cfg: ModelConfig, E: int | None):
        super().__init__()
        H = cfg.hidden_size
        self.word_embeddings = nn.Embedding(cfg.vocab_size, H if E is None else E, device="meta")
        if E is not None:
            self.embedding_hidden_mapping_in = nn.Linear(E, H, bias=False, device="meta")
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, H, device="meta")
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, H, device="meta")
        self.LayerNorm = nn.LayerNorm(H, eps=cfg.layer_norm_eps, device="meta")

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None) -> torch.Tensor:
        T = input_ids.shape[1]
        x = self.word_embeddings(input_ids)  # (B, T, E)
        if hasattr(self, "embedding_hidden_mapping_in"):
            x = F.linear(x, self.embedding_hidden_mapping_in.weight)  # (B, T, E) -> (B, T, H)
        types = self.token_type_embeddings.weight[0] if token_type_ids is None else \
            self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x + types + self.position_embeddings.weight[:T])


class PosthocEncoder(nn.Module):
    """A post-hoc variant of a trained BERT (`Variant`): same interface and outputs as `EncoderModel` with head
    "model" (``last_hidden_state``, ``pooler_output``, ``hidden_states``, ``attentions``). Created by
    `build_variant` (constructed directly it has shapes only, on the meta device)."""

    def __init__(self, cfg: ModelConfig, variant: Variant):
        super().__init__()
        check_variant(cfg, variant)
        self.config, self.variant = cfg, variant
        self.n_head, self.act = cfg.num_heads, ACTIVATIONS[cfg.hidden_act]
        self.embeddings = PosthocEmbeddings(cfg, variant.embedding_size)
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(Block(cfg) for _ in range(1 if variant.shared else cfg.num_layers))
        if variant.rank:
            dims = matrix_dims(cfg)
            self.encoder.lora = nn.ModuleList(
                nn.ModuleDict({m: LoRA(*dims[m], variant.rank) for m in MATRICES}) for _ in range(cfg.num_layers))
        self.pooler = nn.Linear(cfg.hidden_size, cfg.hidden_size, device="meta")

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                token_type_ids: torch.Tensor | None = None, output_hidden_states: bool = False,
                output_attentions: bool = False) -> EncoderOutput:
        x = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        mask = None
        if attention_mask is not None and (x.device.type == "meta" or not bool(attention_mask.all())):
            keep = attention_mask[:, None, None, :].to(x.dtype)  # (B, 1, 1, T)
            mask = (1.0 - keep) * torch.finfo(x.dtype).min
        hidden, attns = [x], []
        for i in range(self.config.num_layers):
            x, att = self._layer(x, i, mask, output_attentions)
            hidden.append(x)
            if att is not None:
                attns.append(att)
        out = EncoderOutput(last_hidden_state=x,
                            pooler_output=torch.tanh(F.linear(x[:, 0], self.pooler.weight, self.pooler.bias)))
        if output_hidden_states:
            out.hidden_states = tuple(hidden)
        if output_attentions:
            out.attentions = tuple(attns)
        return out

    def _layer(self, x: torch.Tensor, i: int, mask: torch.Tensor | None, need_weights: bool
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        block = self.encoder.layer[0 if self.variant.shared else i]
        lora = self.encoder.lora[i] if self.variant.rank else None
        a = block.attention

        def lin(m: nn.Linear, name: str, h: torch.Tensor) -> torch.Tensor:
            y = F.linear(h, m.weight, m.bias)
            return y if lora is None else y + lora[name](h)  # the shared weight stays unmerged

        B, T, H = x.shape
        nh = self.n_head
        hs = H // nh
        q, k, v = (lin(getattr(a, n), n, x).view(B, T, nh, hs).transpose(1, 2) for n in ("query", "key", "value"))
        att = None
        if need_weights:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, T)
            if mask is not None:
                att = att + mask
            att = att.softmax(dim=-1)
            y = att @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, H)
        x = a.LayerNorm(x + lin(a.dense, "dense", y))
        h = self.act(lin(block.ffn, "ffn", x))  # (B, T, I)
        return block.output_LayerNorm(x + lin(block.ffn_output, "ffn_output", h)), att


# ----------------------------------------------------------------------------- the trained weights, decomposed
@dataclass
class PosthocWeights:
    """The trained BERT's tensors by our variant's names (query, key and value split), with the SVD of the word
    table and, per matrix, the layers' mean and the SVD of each layer's difference from it (computed once, in
    float64, on first use)."""

    cfg: ModelConfig
    tensors: dict[str, torch.Tensor]  # "embeddings.*", "layer.{i}.{name}.{weight|bias}", "pooler.*"
    _word_svd: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = field(default=None, repr=False)
    _residual_svd: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(
        default_factory=dict, repr=False)

    @classmethod
    @torch.no_grad()
    def of(cls, model: EncoderModel) -> PosthocWeights:
        """The tensors of a trained live BERT (`EncoderModel`, head "model"; MiniLM from `load_minilm`)."""
        cfg = model.config
        check_variant(cfg, Variant())
        H = cfg.hidden_size
        p = {n: t.detach().to(torch.float32) for n, t in model.named_parameters()}
        out = {f"embeddings.{n}": p[f"embeddings.{n}.weight"]
               for n in ("word_embeddings", "position_embeddings", "token_type_embeddings")}
        out["embeddings.LayerNorm.weight"] = p["embeddings.LayerNorm.weight"]
        out["embeddings.LayerNorm.bias"] = p["embeddings.LayerNorm.bias"]
        for i in range(cfg.num_layers):
            att, ffn = f"encoder.attention.{i}.0", f"encoder.ffn.{i}.0"
            for w in ("weight", "bias"):
                for j, n in enumerate(("query", "key", "value")):
                    out[f"layer.{i}.{n}.{w}"] = p[f"{att}.qkv.{w}"][j * H:(j + 1) * H]
                out[f"layer.{i}.dense.{w}"] = p[f"{att}.dense.{w}"]
                out[f"layer.{i}.attention_LayerNorm.{w}"] = p[f"{att}.LayerNorm.{w}"]
                out[f"layer.{i}.ffn.{w}"] = p[f"{ffn}.ffn.{w}"]
                out[f"layer.{i}.ffn_output.{w}"] = p[f"{ffn}.ffn_output.{w}"]
                out[f"layer.{i}.output_LayerNorm.{w}"] = p[f"{ffn}.LayerNorm.{w}"]
        out["pooler.weight"], out["pooler.bias"] = p["pooler.weight"], p["pooler.bias"]
        return cls(cfg, out)

    def word_svd(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """U (V x H), S (H), Vh (H x H) of the trained word table, in float64."""
        if self._word_svd is None:
            self._word_svd = torch.linalg.svd(self.tensors["embeddings.word_embeddings"].double(),
                                              full_matrices=False)
        return self._word_svd

    def factorized_table(self, E: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(table V x E = U_E S_E, projection weight H x E = V_E, i.e. E -> H maps x to x V_E^T), float32."""
        U, S, Vh = self.word_svd()
        return (U[:, :E] * S[:E]).float(), Vh[:E].T.contiguous().float()

    def mean(self, name: str) -> torch.Tensor:
        """The layers' mean of tensor ``name`` (e.g. 'query.weight')."""
        return torch.stack([self.tensors[f"layer.{i}.{name}"].double()
                            for i in range(self.cfg.num_layers)]).mean(0).float()

    def residual_svd(self, i: int, matrix: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """U, S, Vh of layer i's ``matrix`` weight minus the layers' mean, in float64."""
        key = (i, matrix)
        if key not in self._residual_svd:
            w = f"{matrix}.weight"
            diff = self.tensors[f"layer.{i}.{w}"].double() - self.mean(w).double()
            self._residual_svd[key] = torch.linalg.svd(diff, full_matrices=False)
        return self._residual_svd[key]

    def lora_init(self, i: int, matrix: str, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(A r x d_in, B d_out x r) with B A the rank-r truncated SVD of layer i's difference from the mean:
        B = U_r S_r, A = Vh_r."""
        U, S, Vh = self.residual_svd(i, matrix)
        return Vh[:rank].float().contiguous(), (U[:, :rank] * S[:rank]).float().contiguous()


BLOCK_TENSORS = {  # our block's parameter (under encoder.layer.{c}.) -> the tensor name in PosthocWeights
    "attention.query": "query", "attention.key": "key", "attention.value": "value", "attention.dense": "dense",
    "attention.LayerNorm": "attention_LayerNorm", "ffn": "ffn", "ffn_output": "ffn_output",
    "output_LayerNorm": "output_LayerNorm",
}


def variant_bytes(cfg: ModelConfig, v: Variant) -> int:
    return 4 * posthoc_total(cfg, v)


@torch.no_grad()
def build_variant(weights: PosthocWeights, v: Variant, *, budget_bytes: int | None = None,
                  wait_s: float = 0.0) -> PosthocEncoder:
    """The live variant ``v`` of the trained model (fp32, CPU, eval mode), every weight from ``weights``.

    Its bytes (exact: 4 x `posthoc_total`) are checked against the memory budget before anything is allocated and,
    without ``budget_bytes``, reserved in the process ledger for as long as the model lives."""
    cfg = weights.cfg
    check_variant(cfg, v)
    nbytes = variant_bytes(cfg, v)
    if nbytes > budget.memory_budget(budget_bytes):
        raise MemoryBudgetError(f"the post-hoc variant {v.label} needs {nbytes:,} bytes of weights, over the memory "
                                "budget")
    held = budget.PROCESS_BUDGET.reserve(nbytes, f"building {v.label}", wait_s=wait_s) if budget_bytes is None \
        else None
    try:
        model = PosthocEncoder(cfg, v).to_empty(device="cpu")
        t = weights.tensors
        params = dict(model.named_parameters())
        for n in ("position_embeddings", "token_type_embeddings"):
            params[f"embeddings.{n}.weight"].copy_(t[f"embeddings.{n}"])
        for w in ("weight", "bias"):
            params[f"embeddings.LayerNorm.{w}"].copy_(t[f"embeddings.LayerNorm.{w}"])
            params[f"pooler.{w}"].copy_(t[f"pooler.{w}"])
        if v.embedding_size is None:
            params["embeddings.word_embeddings.weight"].copy_(t["embeddings.word_embeddings"])
        else:
            table, projection = weights.factorized_table(v.embedding_size)
            params["embeddings.word_embeddings.weight"].copy_(table)
            params["embeddings.embedding_hidden_mapping_in.weight"].copy_(projection)
        for c in range(len(model.encoder.layer)):
            for ours, theirs in BLOCK_TENSORS.items():
                for w in ("weight", "bias"):
                    value = weights.mean(f"{theirs}.{w}") if v.shared else t[f"layer.{c}.{theirs}.{w}"]
                    params[f"encoder.layer.{c}.{ours}.{w}"].copy_(value)
        if v.rank:
            for i in range(cfg.num_layers):
                for m in MATRICES:
                    A, B = weights.lora_init(i, m, v.rank)
                    params[f"encoder.lora.{i}.{m}.A.weight"].copy_(A)
                    params[f"encoder.lora.{i}.{m}.B.weight"].copy_(B)
    except BaseException:
        if held:
            held.release()
        raise
    if held:
        held.hold_until_freed(model)
    return model.eval()


def meta_variant(cfg: ModelConfig, v: Variant) -> PosthocEncoder:
    """Shapes only (the meta device): counts and FLOPs without memory."""
    return PosthocEncoder(cfg, v).eval()
