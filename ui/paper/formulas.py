"""Closed forms of the parameter count, component by component, for any encoder the explorer counts: the
architecture axes decide every term (issue 42: BERT's formulas stood beside a ModernBERT's values, which do not
satisfy them: a bias-free attention is 3H², a GLU's up projection 2HI, a rotary encoder has no position table).

Each formula is a small polynomial in the config's symbols (`Poly`) times the number of copies held (n_att, n_ffn,
n_an): the page renders it (`Formula.tex`) and evaluates it (`Formula.value`), so the test that compares the value
with `count_params` checks the formula shown. Pure Python, no streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from albert_core.configuration.config import NUM_ORDER_LABELS, ModelConfig
from albert_core.counting.params import order_head_name

Mono = tuple[str, ...]  # the symbols of one monomial, with repeats (("H", "H") is H²)
ORDER = ("R", "V", "P", "T", "B", "E", "H", "KV", "I")  # the order symbols are written in (R: a LoRA's rank r)
TEX = {"R": "r", "V": "V", "P": "P", "T": "T", "B": "B_r", "E": "E", "H": "H", "KV": "H_{kv}", "I": "I"}
# copies held: attention and FFN blocks, attention norms; and the executed positions that carry a LoRA on an
# attention matrix (n_la) or an FFN matrix (n_lf)
COPIES_TEX = {"n_att": r"n_{att}", "n_an": r"n_{an}", "n_ffn": r"n_{ffn}", "n_la": r"n_{la}", "n_lf": r"n_{lf}"}


class Poly:
    """A polynomial with whole coefficients over the config's symbols."""

    def __init__(self, terms: Mapping[Mono, int] | None = None):
        self.terms = {m: c for m, c in (terms or {}).items() if c}

    @staticmethod
    def of(value: int | str) -> Poly:
        return Poly({(): value}) if isinstance(value, int) else Poly({(value,): 1})

    def __add__(self, other: Poly | int) -> Poly:
        other = other if isinstance(other, Poly) else Poly.of(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    __radd__ = __add__

    def __mul__(self, other: Poly | int) -> Poly:
        other = other if isinstance(other, Poly) else Poly.of(other)
        out: dict[Mono, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = tuple(sorted(m1 + m2, key=ORDER.index))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def value(self, env: Mapping[str, int]) -> int:
        total = 0
        for m, c in self.terms.items():
            term = c
            for s in m:
                term *= env[s]
            total += term
        return total

    def tex(self) -> str:
        def mono(m: Mono, c: int) -> str:
            names = []
            for s in dict.fromkeys(m):
                k = m.count(s)
                names.append(TEX[s] + (f"^{k}" if k > 1 else ""))
            body = r"\,".join(names)
            return str(c) if not body else (body if c == 1 else f"{c}{body}")

        ordered = sorted(self.terms.items(), key=lambda mc: (-len(mc[0]), [ORDER.index(s) for s in mc[0]]))
        return " + ".join(mono(m, c) for m, c in ordered) or "0"

    def __len__(self) -> int:
        return len(self.terms)


R, V, P, T, B, E, H, KV, I = (Poly.of(s) for s in ORDER)  # noqa: E741 (paper notation)


@dataclass(frozen=True)
class Formula:
    component: str  # count_params' component name
    label: str
    poly: Poly  # one copy's parameters
    copies: str | None = None  # "n_att", "n_an", "n_ffn" or None (one)

    def tex(self) -> str:
        if self.copies is None:
            return self.poly.tex()
        inner = self.poly.tex()
        return COPIES_TEX[self.copies] + (rf"\,({inner})" if len(self.poly) > 1 else rf"\cdot {inner}")

    def value(self, cfg: ModelConfig) -> int:
        return copies_of(cfg).get(self.copies, 1) * self.poly.value(symbols(cfg))


def symbols(cfg: ModelConfig) -> dict[str, int]:
    return {"R": cfg.lora_rank, "V": cfg.vocab_size, "P": cfg.max_position_embeddings, "T": cfg.type_vocab_size,
            "B": cfg.position_buckets, "E": cfg.embedding_size, "H": cfg.hidden_size, "KV": cfg.kv_size,
            "I": cfg.intermediate_size}


def copies_of(cfg: ModelConfig) -> dict[str | None, int]:
    return {None: 1, "n_att": cfg.attention_copies, "n_an": cfg.attention_norms, "n_ffn": cfg.ffn_copies,
            "n_la": cfg.attention_lora_positions, "n_lf": cfg.ffn_lora_positions}


def lora_formulas(cfg: ModelConfig) -> list[Formula]:
    """A LoRA's closed form on each matrix that carries one: r x (d_in + d_out) at each executed position of the
    shared block (n_la attention positions, n_lf FFN positions); none without a LoRA."""
    kv = KV if cfg.kv_size != cfg.hidden_size else H
    up = 2 * I if cfg.ffn_kind == "glu" else I
    sides = {"q": H + H, "k": H + kv, "v": H + kv, "o": H + H, "in": H + up, "out": I + H}
    names = {"q": "query", "k": "key", "v": "value", "o": "attention output", "in": "FFN up", "out": "FFN down"}
    return [Formula(f"encoder.lora.{m}", f"LoRA on the {names[m]}", R * sides[m],
                    "n_la" if m in ("q", "k", "v", "o") else "n_lf")
            for m, _, _, _ in cfg.lora_terms() if cfg.lora_rank]


def formulas(cfg: ModelConfig) -> list[Formula]:
    """The closed form of every component ``cfg`` has (the same components as `count_params`), each decided by the
    axes: biases, the FFN kind, the position scheme, the norm kind, key/value heads, the heads on the encoder."""
    n = 2 if cfg.norm == "layernorm" and cfg.norm_bias else 1  # a norm's parameters per unit: scale (+ bias)
    norm = "LayerNorm" if cfg.norm == "layernorm" else "RMSNorm"
    att_b, mlp_b = int(cfg.attention_bias), int(cfg.mlp_bias)
    kv = KV if cfg.kv_size != cfg.hidden_size else H
    up = 2 * I if cfg.ffn_kind == "glu" else I
    out = [Formula("embeddings.word_embeddings", "word embeddings", V * E)]
    if cfg.has_position_table:
        out.append(Formula("embeddings.position_embeddings", "position embeddings", P * E))
    if cfg.type_vocab_size:
        out.append(Formula("embeddings.token_type_embeddings", "token-type embeddings", T * E))
    if cfg.embedding_norm:
        out.append(Formula("embeddings.LayerNorm", f"embedding {norm}", n * (H if cfg.norm_after_projection else E)))
    if cfg.position == "relative":
        out += [Formula("embeddings.relative_embeddings", "relative positions", 2 * B * H),
                Formula("embeddings.relative_LayerNorm", "relative-position LayerNorm", 2 * H)]
    if cfg.is_factorized:
        out.append(Formula("encoder.embedding_hidden_mapping_in", "projection E to H",
                           E * H + int(cfg.projection_bias) * H))
    width = H + 2 * kv
    out += [
        Formula("encoder.attention.qkv", "attention Q/K/V", H * width + att_b * width, "n_att"),
        Formula("encoder.attention.dense", "attention output", H * H + att_b * H, "n_att"),
        Formula("encoder.attention.LayerNorm", f"attention {norm}", n * H,
                "n_att" if cfg.attention_norms == cfg.attention_copies else "n_an"),
        Formula("encoder.ffn.ffn", "FFN up (gate and up)" if cfg.ffn_kind == "glu" else "FFN up",
                H * up + mlp_b * up, "n_ffn"),
        Formula("encoder.ffn.ffn_output", "FFN down", I * H + mlp_b * H, "n_ffn"),
        Formula("encoder.ffn.LayerNorm", f"FFN {norm}", n * H, "n_ffn"),
    ]
    out += lora_formulas(cfg)
    if cfg.norm_placement == "pre":
        out.append(Formula("encoder.final_norm", f"final {norm}", n * H))
    if cfg.has_pooler:
        out.append(Formula("pooler", "pooler", H * H + H))
    if cfg.has_mlm_head:
        if cfg.head_transform:
            out += [Formula("predictions.dense", "MLM transform", H * E + int(cfg.head_bias) * E),
                    Formula("predictions.LayerNorm", f"MLM {norm}", n * E)]
        elif cfg.is_factorized:
            out.append(Formula("predictions.dense", "MLM map H to E", H * E))
        if cfg.decoder_bias:
            out.append(Formula("predictions", "MLM output bias", V))
        if not cfg.tie_word_embeddings:
            out.append(Formula("predictions.decoder", "MLM decoder (untied)",
                               V * E + int(cfg.decoder_bias and cfg.separate_decoder_bias) * V))
    if cfg.has_order_head:
        name = order_head_name(cfg.family)
        out.append(Formula(name, "SOP classifier" if name == "sop_classifier" else "NSP classifier",
                           NUM_ORDER_LABELS * H + NUM_ORDER_LABELS))
    if cfg.has_discriminator:
        out += [Formula("discriminator.dense", "discriminator transform", H * H + H),
                Formula("discriminator.prediction", "discriminator output", H + 1)]
    return out


def one_layer(cfg: ModelConfig) -> Poly:
    """One attention copy and one feed-forward copy (with their norms), as a polynomial (a LoRA is per position, not
    part of a layer's copy)."""
    return sum((f.poly for f in formulas(cfg) if f.copies in ("n_att", "n_an", "n_ffn")), Poly())
