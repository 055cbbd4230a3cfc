"""Exact parameters and FLOPs of ALBERT's ideas applied post hoc to a trained BERT (the live variants of
`albert_core.live.posthoc`, measured by `albert_core.lab.posthoc_grid`).

A variant of a trained BERT (post-LN, dense FFN, learned positions, with its pooler: MiniLM) is three choices:

- ``embedding_size`` E: the trained V x H word table replaced by its truncated SVD, a V x E table (U_E S_E) and a
  bias-free E -> H projection (V_E^T) applied to the word vector only. The position and token-type tables stay at H
  and are added after the projection, so E = H would give back the trained table exactly. (ALBERT itself puts all
  three tables at E and projects their sum; post hoc, the small tables are left alone: they are 0.9 % of MiniLM.)
- ``shared``: the L layers replaced by one layer whose every tensor (matrices, biases, LayerNorms) is the mean of the
  L layers' (Relaxed Recursive Transformers' "average" initialisation), run L times.
- ``rank`` r (shared only): at each of the L positions, a LoRA of rank r on every matrix of the block (query, key,
  value, attention output, FFN in, FFN out), B A with A (r x d_in) and B (d_out x r), initialised by the truncated
  SVD of that layer's difference from the mean. It adds L r sum(d_in + d_out) parameters: 6 x r x 6,912 for MiniLM.

FLOPs (the ``matmul`` convention of `albert_core.counting.flops`, equal to FlopCounterMode): the original's forward,
plus 2 B S E H for the projection, plus 2 B S L r sum(d_in + d_out) for the LoRA products. A LoRA on a shared weight
cannot be merged into it (the other positions use the same weight), so the relaxed model runs the low-rank products
besides every full matmul: it costs more compute than the original it approximates. Sharing alone changes no FLOP.

Plain arithmetic on the config's numbers; no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from albert_core.checks import check_whole_number
from albert_core.configuration.config import ModelConfig
from albert_core.counting.flops import count_flops
from albert_core.counting.params import count_params

GRID_E = (32, 64, 128, 256)
GRID_RANKS = (4, 8, 16, 32, 64)
MATRICES = ("query", "key", "value", "dense", "ffn", "ffn_output")  # the six matrices of a BERT block


@dataclass(frozen=True, order=True)
class Variant:
    """One post-hoc variant: E of the factorized word table (None: the trained V x H table), the L layers shared by
    their mean, and the rank of the per-layer LoRA on the shared layer (0: none)."""

    embedding_size: int | None = None
    shared: bool = False
    rank: int = 0

    def __post_init__(self) -> None:
        if self.embedding_size is not None:
            check_whole_number("embedding_size", self.embedding_size, 1)
        if not isinstance(self.shared, bool):
            raise ValueError(f"shared must be True or False, got {self.shared!r}")
        check_whole_number("rank", self.rank, 0)
        if self.rank and not self.shared:
            raise ValueError("rank needs shared: the per-layer LoRA relaxes the one shared layer")

    @property
    def is_original(self) -> bool:
        return self.embedding_size is None and not self.shared

    @property
    def key(self) -> str:
        """'original', 'E128', 'shared', 'shared-r8', 'E128-shared-r8': the grid file's key and the CLI's name."""
        parts = [] if self.embedding_size is None else [f"E{self.embedding_size}"]
        if self.shared:
            parts.append("shared" if not self.rank else f"shared-r{self.rank}")
        return "-".join(parts) or "original"

    @property
    def label(self) -> str:
        """'original', 'E = 128', 'shared', 'shared + LoRA r 8', 'E = 128, shared + LoRA r 8'."""
        parts = [] if self.embedding_size is None else [f"E = {self.embedding_size}"]
        if self.shared:
            parts.append("shared" + (f" + LoRA r {self.rank}" if self.rank else ""))
        return ", ".join(parts) or "original"

    @classmethod
    def from_key(cls, key: str) -> Variant:
        """The inverse of `key`; ValueError naming the form otherwise."""
        rule = "a variant key is 'original' or E<n>, shared, shared-r<n> joined by '-', e.g. 'E128-shared-r8'"
        if key == "original":
            return cls()
        e, shared, rank = None, False, 0
        parts = key.split("-")
        if parts and parts[0].startswith("E") and parts[0][1:].isdigit():
            e = int(parts.pop(0)[1:])
        if parts and parts[0] == "shared":
            shared = True
            parts.pop(0)
            if parts and parts[0].startswith("r") and parts[0][1:].isdigit():
                rank = int(parts.pop(0)[1:])
        if parts or (e is None and not shared):
            raise ValueError(f"{rule}, got {key[:40]!r}")
        return cls(e, shared, rank)


def check_variant(cfg: ModelConfig, v: Variant) -> None:
    """ValueError naming the field when ``v`` cannot be made of ``cfg``: a model of BERT's layout (what the live
    variants are built from), E below H, r at most the smallest matrix dimension (H)."""
    if cfg.family != "bert" or cfg.is_factorized or cfg.sharing != "none" or cfg.inner_group_num != 1 \
            or cfg.ffn_kind != "dense" or cfg.norm_placement != "post" or not cfg.has_pooler:
        raise ValueError(f"post-hoc variants are made of a trained BERT with its pooler (not factorized, not shared, "
                         f"dense FFN, post-LN), got {cfg.label}")
    H = cfg.hidden_size
    if v.embedding_size is not None and not v.embedding_size < H:
        raise ValueError(f"embedding_size must be below H = {H} (E = H is the trained table itself), "
                         f"got {v.embedding_size}")
    if v.rank > H:
        raise ValueError(f"rank must be at most H = {H} (the smallest side of the block's matrices), got {v.rank}")


def lora_width(cfg: ModelConfig) -> int:
    """sum(d_in + d_out) over the six matrices of a block: 4 x 2H + 2 (H + I) (6,912 for MiniLM)."""
    H, inner = cfg.hidden_size, cfg.intermediate_size
    return 4 * 2 * H + 2 * (H + inner)


def layer_params(cfg: ModelConfig) -> int:
    """One BERT layer: 4H^2 + 2HI + 9H + I."""
    H, inner = cfg.hidden_size, cfg.intermediate_size
    return 4 * H * H + 2 * H * inner + 9 * H + inner


def posthoc_params(cfg: ModelConfig, v: Variant) -> dict[str, int]:
    """Parameters of variant ``v`` of ``cfg`` per component (the live variant's module names, indices dropped:
    `albert_core.counting.params.component_of`), exact; the values sum to `posthoc_total`."""
    check_variant(cfg, v)
    V, H, P, T, L = (cfg.vocab_size, cfg.hidden_size, cfg.max_position_embeddings, cfg.type_vocab_size,
                     cfg.num_layers)
    inner = cfg.intermediate_size
    E = v.embedding_size
    copies = 1 if v.shared else L
    out = {"embeddings.word_embeddings": V * (H if E is None else E)}
    if E is not None:
        out["embeddings.embedding_hidden_mapping_in"] = E * H
    out.update({
        "embeddings.position_embeddings": P * H,
        "embeddings.token_type_embeddings": T * H,
        "embeddings.LayerNorm": 2 * H,
        "encoder.layer.attention.query": copies * (H * H + H),
        "encoder.layer.attention.key": copies * (H * H + H),
        "encoder.layer.attention.value": copies * (H * H + H),
        "encoder.layer.attention.dense": copies * (H * H + H),
        "encoder.layer.attention.LayerNorm": copies * 2 * H,
        "encoder.layer.ffn": copies * (H * inner + inner),
        "encoder.layer.ffn_output": copies * (inner * H + H),
        "encoder.layer.output_LayerNorm": copies * 2 * H,
    })
    if v.rank:
        dims = matrix_dims(cfg)
        for m in MATRICES:
            d_in, d_out = dims[m]
            out[f"encoder.lora.{m}.A"] = L * v.rank * d_in
            out[f"encoder.lora.{m}.B"] = L * v.rank * d_out
    out["pooler"] = H * H + H
    return out


def matrix_dims(cfg: ModelConfig) -> dict[str, tuple[int, int]]:
    """(d_in, d_out) of each of the block's six matrices."""
    H, inner = cfg.hidden_size, cfg.intermediate_size
    return {"query": (H, H), "key": (H, H), "value": (H, H), "dense": (H, H), "ffn": (H, inner),
            "ffn_output": (inner, H)}


def posthoc_total(cfg: ModelConfig, v: Variant) -> int:
    """Total parameters of variant ``v``: the original's count (`count_params`), minus what the variant removes,
    plus what it adds (equal to the sum of `posthoc_params`)."""
    check_variant(cfg, v)
    V, H, L = cfg.vocab_size, cfg.hidden_size, cfg.num_layers
    total = count_params(cfg).total
    if v.embedding_size is not None:
        total += -V * H + V * v.embedding_size + v.embedding_size * H
    if v.shared:
        total -= (L - 1) * layer_params(cfg)
    return total + L * v.rank * lora_width(cfg)


@dataclass(frozen=True)
class PosthocFlops:
    """Forward matmul FLOPs of a variant at (batch, seq_len): the original's and what the variant adds."""

    original: int  # count_flops(cfg, batch, seq_len).forward
    projection: int  # 2 B S E H (the factorized table's E -> H map; 0 without)
    lora: int  # 2 B S L r sum(d_in + d_out) (0 without)

    @property
    def total(self) -> int:
        return self.original + self.projection + self.lora

    @property
    def extra_share(self) -> float:
        """What the variant adds, as a share of the original's forward."""
        return (self.projection + self.lora) / self.original


def posthoc_flops(cfg: ModelConfig, v: Variant, batch: int = 1, seq_len: int = 128) -> PosthocFlops:
    """Forward matmul FLOPs (``matmul`` convention: equal to FlopCounterMode on the live variant) of variant ``v``
    at ``batch`` x ``seq_len``. Sharing changes none; the projection and the LoRA products add theirs."""
    check_variant(cfg, v)
    original = count_flops(cfg, batch, seq_len).forward
    tokens = batch * seq_len
    H = cfg.hidden_size
    projection = 0 if v.embedding_size is None else 2 * tokens * v.embedding_size * H
    lora = 2 * tokens * cfg.num_layers * v.rank * lora_width(cfg)
    return PosthocFlops(original, projection, lora)


def grid_variants() -> tuple[Variant, ...]:
    """The shipped grid: the original; E in GRID_E; shared; shared + LoRA at GRID_RANKS; and every E with shared
    and with shared + LoRA at every rank."""
    out = [Variant()]
    out += [Variant(e) for e in GRID_E]
    for e in (None, *GRID_E):
        out.append(Variant(e, True))
        out += [Variant(e, True, r) for r in GRID_RANKS]
    return tuple(out)
