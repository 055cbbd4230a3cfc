"""The shared config sidebar: preset, architecture and workload widgets, bound to the URL.

One source of truth: the config and workload the page computes with (`_CURRENT`). A whole configuration (a preset,
an upload, a link, Reset) replaces it whole, never as an edit of the previous one (`_replace_whole`). An edit of one
widget is turned into a config with `albert_core.configuration.coerce.coerce` (the rule shared with the URL decoder
and the CLI): the fields whose widget differs from the current config are the explicit changes, the rule derives the
rest (heads that fit H, I = 4H while kept, the family's fields). An edit that cannot form a model is not applied:
the widgets go back to the current config and the message names the rule. Every widget is then drawn from that
config and workload (its value / index given on every render, never a widget default, which the browser would paint
first), and the URL is written from it: what a visitor sees is what the pages compute and what the link reopens.

URL codec (`ui.urls`): on the first run of a session the query string is decoded with
`parse_query` / `parse_workload_query` into the widgets' session state (bad values fall back to the defaults with a
visible warning); after every run the URL is rewritten with the full state (`share_query`), so the
address bar always reproduces the view. We use this codec rather than `bind="query-params"` because
bound widgets drop invalid values silently and omit defaults from the link.

Widget keys are `cfg_<URL key>` (see `QUERY_KEYS`, and `SCHEME_QUERY_KEYS` for the sharing schemes since ALBERT)
and `wl_<URL key>` (see `WORKLOAD_QUERY_KEYS`). The one widget whose value is not the field's is "LoRA on": a list of
matrices, the field's '-'-joined text (`widget_field_value`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

import streamlit as st

from albert_core import HEADS, LIMITS, SHARING_MODES, ModelConfig, Workload
from albert_core.configuration.coerce import coerce, divisors
from albert_core.configuration.config import (
    ACTIVATIONS,
    AXIS_FIELDS,
    BLOCK_ORDER_LABELS,
    BLOCK_ORDERS,
    ENCODER_ACTIVATIONS,
    ENCODER_HEADS,
    FAMILIES,
    FAMILY_NAMES,
    HEAD_LABELS,
    LORA_MATRICES,
    LORA_MATRIX_LABELS,
    PAPER_FAMILIES,
    POSITION_LABELS,
    SHARING_LABELS,
)
from albert_core.configuration.hf_config import config_from_json_bytes, hf_class_mismatch
from albert_core.configuration.presets import (
    ALL_PRESETS,
    ENCODER_PRESETS,
    FAMILY_BASE_PRESET,
    matching_preset,
)
from albert_core.configuration.workload import (
    DTYPE_BYTES,
    MIXED_DTYPES,
    OPTIMIZERS,
    PRECISIONS,
    WORKLOAD_LIMITS,
    check_seq_len,
)
from albert_core.format import escape_markdown
from ui.url_state import seed_from_url_once
from ui.urls import (
    QUERY_KEYS,
    SCHEME_QUERY_KEYS,
    WORKLOAD_QUERY_KEYS,
    parse_query,
    parse_workload_query,
    share_query,
)

CUSTOM = "custom"
MAX_UPLOAD_MB = 1  # Streamlit's unit; .streamlit/config.toml's server.maxUploadSize is the same
PRESET_KEY = "cfg_preset"
RESET_KEY = "sb_reset"
UPLOAD_KEY = "sb_upload"
_UPLOAD_MESSAGE = "_sb_upload_message"  # (ok, text) of the last upload
DOCTOR_KEY = "_sb_doctor"  # (file name, albert_core.review.doctor.Diagnosis) of the last upload, shown on the Explorer
_SEEDED = "_sb_seeded"
_PROBLEMS = "_sb_url_problems"
_CURRENT = "_sb_last_valid"  # (ModelConfig, Workload): what every page computes with
_STASH = "_sb_albert_stash"  # ALBERT-only fields kept while the family is BERT
_AXES = "cfg_axes"  # the architecture axes of the current config (no widget: a preset, an upload or the URL set them)
# URL key -> field of every model widget: the paper's fields and the sharing schemes since ALBERT
WIDGET_KEYS: Mapping[str, str] = {**QUERY_KEYS, **SCHEME_QUERY_KEYS}
TARGETS = "lorat"  # the "LoRA on" multiselect: a list of LORA_MATRICES, the field a '-'-joined text

# Sliders have browser-sized ranges; a URL value outside them falls back to the default.
SLIDER_RANGES: Mapping[str, tuple[int, int, int]] = {"H": (64, 8192, 64), "L": (1, 128, 1)}
PRECISION_LABELS = {"pure": "pure (all in dtype)", "mixed": "mixed (fp32 master)"}
_STEPS = {"V": 1000, "E": 16, "I": 256, "P": 128, "T": 1, "G": 1, "K": 1}

HELP = {
    "preset": "Load one of the published configurations: the paper's BERT and ALBERT (Table 1) or an encoder "
    "designed since (RoBERTa, XLM-R, ELECTRA, DeBERTa-v3, ModernBERT, Ettin, mmBERT, EuroBERT, NomicBERT). Changing "
    "any field makes it custom.",
    "family": "BERT: embeddings at the hidden size, every layer has its own weights. ALBERT: factorized "
    "embeddings (V x E then E -> H) and cross-layer parameter sharing. The other families keep their own "
    "layout (gated FFN, rotary positions, pre-norm, ...) and take ALBERT's two ideas through E and sharing.",
    "V": "Vocabulary size V: rows of the word-embedding table (30,000 for ALBERT, 30,522 for BERT).",
    "E": "Embedding size E (transformers `embedding_size`): ALBERT looks tokens up at width E and projects "
    "them to H with `embedding_hidden_mapping_in`, so the table costs V*E + E*H instead of V*H. "
    "BERT has no factorization: E = H.",
    "H": "Hidden size H (`hidden_size`): width of every encoder layer. Layer params grow as 4H^2 + 2HI.",
    "L": "Layers L (`num_hidden_layers`): how many times a layer is executed. With full sharing the "
    "parameters do not grow with L, the FLOPs do.",
    "heads": "Attention heads (`num_attention_heads`); only divisors of H are offered. Changes neither "
    "the parameter count nor the matmul FLOPs, only the head dimension H / heads.",
    "I": "Intermediate size I (`intermediate_size`): width of the feed-forward block, 4H in every published model.",
    "keep4h": "Keep I = 4H while you move H.",
    "P": "Max positions P (`max_position_embeddings`): rows of the position table and the longest sequence.",
    "T": "Token types T (`type_vocab_size`): segment A / B embeddings (2).",
    "act": "Activation of the feed-forward block (ALBERT: gelu_new, BERT: gelu). Changes no parameter and no "
    "matmul FLOP, but it changes training memory: for backward, gelu_new (written in Python) saves about five "
    "B x S x I tensors per layer, gelu two, relu one.",
    "sharing": "Cross-layer sharing (paper Table 4): all-shared = whole layer shared (transformers' ALBERT); "
    "shared-attention / shared-FFN = only that block shared; not-shared = BERT-like layers with "
    "factorized embeddings.",
    "G": "Groups G (transformers `num_hidden_groups`): distinct copies of the shared block(s); layer i uses "
    "group int(i / (L / G)) (or i mod G with the block order 'cycle'). G = 1: one shared layer; G = L: nothing "
    "shared. Ignored when not shared.",
    "K": "Inner repeats K (transformers `inner_group_num`): blocks run in a row inside each layer. "
    "Executed depth is L*K; parameters grow with G*K.",
    "order": "Which shared group each layer runs. Contiguous groups (ALBERT, transformers' `num_hidden_groups`): "
    "the first L / G layers run group 0, the next group 1 (AABB). Cycle: layer i runs group i mod G (ABAB), the "
    "order of recursive transformers that loop a short stack of distinct layers. Same parameters and FLOPs; "
    "only the order changes. Needs sharing.",
    "ends": "The first and last layers get weights of their own and the G groups share the layers between them "
    "(Subformer's and Mixture-of-Recursions' 'middle-cycle': the ends see raw tokens and make the output, so they "
    "gain most from weights of their own). Adds two layers' worth of parameters, no FLOPs. Needs sharing, L >= 3 "
    "and G <= L - 2.",
    "rep": "Run every layer this many times in a row with the same weights (MobileLLM-LS: 2, the immediate "
    "block-wise repeat). Executed depth becomes L x K x repeat: the FLOPs and activations grow with it, the "
    "parameters do not.",
    "lora": "A small low-rank update (LoRA) of this rank at every executed position of a shared block, on the "
    "matrices chosen below (Relaxed Recursive Transformers: the shared weights plus a per-position LoRA recover "
    "much of an unshared model's quality). Each adds r x (d_in + d_out) parameters. Unlike a fine-tuning LoRA it "
    "cannot be merged into the weight, which other positions share: it also adds 2 x r x (d_in + d_out) FLOPs per "
    "token. 0 = none. Needs a block that several executed layers share.",
    "lorat": "The matrices that carry the per-position LoRA: the attention query, key, value and output "
    "projections and the feed-forward up and down projections (Relaxed Recursive Transformers: all of them). "
    "Only matrices of a shared block (or of every layer when layers repeat) can carry one. Set a rank first.",
    "head": "What sits on the encoder: the pooler only (XModel), the pre-training heads MLM + SOP/NSP "
    "(XForPreTraining) or the masked-LM head only (XForMaskedLM).",
    "tied": "Tie the MLM decoder to the word embeddings (counted once). Untied adds V*E parameters. "
    "Only the heads with an MLM decoder (pre-training, masked-LM) use it.",
    "batch": "Batch size B of the workload (memory and FLOPs per step).",
    "seq": "Sequence length S in tokens, at most P. Attention costs grow as S^2.",
    "dtype": "Bytes per weight, gradient and activation: fp32 4, fp16/bf16 2, int8 1.",
    "opt": "Optimizer state per weight: none 0, SGD with momentum 1, Adam/AdamW 2 (first and second moment).",
    "prec": "Pure: weights, gradients and optimizer states all in the dtype (the model cast with .to(dtype)). "
    "Mixed: a bf16/fp16 model plus an fp32 master copy of the weights and fp32 optimizer states (AdamW: "
    "2 + 2 + 4 + 8 = 16 bytes per parameter), the usual recipe for 16-bit training. Only for fp16 / bf16.",
    "ckpt": "Gradient checkpointing: keep only each executed layer's input and recompute the layer in the "
    "backward pass. Activations shrink to about one layer's worth; the encoder layers' forward FLOPs run twice.",
    "share": "The whole view (config and workload) is in this link; paste it into a design discussion.",
    "reset": "Back to ALBERT-base and the default workload.",
    "upload": "A transformers config.json (model_type albert, bert, roberta, xlm-roberta, electra, deberta-v2, "
    "modernbert, eurobert or nomic_bert; at most 1 MB): its fields fill the sidebar, checked like every other "
    "input. The file is only read as JSON.",
}


def _key(url_key: str) -> str:
    return "cfg_" + url_key


def _wkey(url_key: str) -> str:
    return "wl_" + url_key




def preset_name(cfg: ModelConfig) -> str:
    return matching_preset(cfg) or CUSTOM


# ----------------------------------------------------------------------------- URL -> state
def decode_url(params: Mapping[str, str]) -> tuple[ModelConfig, Workload, list[str]]:
    """Config, workload and plain-text problems for a query string (lenient, never raises)."""
    params = dict(params)
    extra: list[str] = []
    while True:
        cfg, problems = parse_query(params)
        popped = False
        for key, (lo, hi, _) in SLIDER_RANGES.items():
            value = getattr(cfg, QUERY_KEYS[key])
            if not lo <= value <= hi and key in params:
                extra.append(f"URL value {key}={value}: the sidebar allows {lo} to {hi}")
                params.pop(key)
                popped = True
        if not popped:
            break
    wl, wl_problems = parse_workload_query(params)
    try:
        check_seq_len(cfg, wl.seq_len)
    except ValueError as exc:
        wl_problems.append(f"URL value seq: {exc}")
        wl = wl.replace(seq_len=min(Workload().seq_len, cfg.max_seq_len))
    return cfg, wl, problems + extra + wl_problems


_LINK_REASONS = {"layer_norm_eps": "no count depends on it; the Live model's outputs do"}


def link_losses(cfg: ModelConfig) -> list[str]:
    """What a link to ``cfg`` cannot carry (one sentence per field, with the value a reopened link uses): the URL
    holds whole numbers and words, so a float such as an uploaded ``layer_norm_eps`` is said, not dropped
    silently."""
    reopened = decode_url(share_query(cfg, Workload()))[0]
    return [f"The link cannot carry {f.name} = {getattr(cfg, f.name)!r} ({_LINK_REASONS.get(f.name, 'no URL key')}): "
            f"it reopens with {getattr(reopened, f.name)!r}." for f in dataclasses.fields(cfg)
            if getattr(reopened, f.name) != getattr(cfg, f.name)]


def axes_of(cfg: ModelConfig) -> dict[str, object]:
    return {name: getattr(cfg, name) for name in AXIS_FIELDS}


def _state_values(cfg: ModelConfig, wl: Workload) -> dict[str, object]:
    """Every sidebar widget's session-state value for a config and workload."""
    values: dict[str, object] = {_key(key): widget_state_value(key, getattr(cfg, name))
                                 for key, name in WIDGET_KEYS.items()}
    values[_key("keep4h")] = cfg.intermediate_size == 4 * cfg.hidden_size
    values[_AXES] = axes_of(cfg)
    values.update({_wkey(key): getattr(wl, name) for key, name in WORKLOAD_QUERY_KEYS.items()})
    values[PRESET_KEY] = preset_name(cfg)
    return values


def _replace_whole(cfg: ModelConfig, wl: Workload) -> None:
    """A whole configuration (a preset, an upload, a link, Reset) becomes the current one, whole: every widget is
    set from it (before the widgets are drawn) and it is what the next edit is compared with, so no field of the
    previous config survives by being equal to a widget's value (the family switch rule would rewrite it)."""
    if wl.seq_len > cfg.max_seq_len:
        wl = wl.replace(seq_len=cfg.max_seq_len)
    st.session_state.update(_state_values(cfg, wl))
    st.session_state[_CURRENT] = (cfg, wl)
    st.session_state.pop(_STASH, None)


def _refill_missing() -> None:
    """A client may send partial widget state (a hand-made or truncated message): widgets whose value
    is missing take the last valid view's value instead of raising KeyError on every read."""
    ss = st.session_state
    if not ss.get(_SEEDED):
        return
    cfg, wl = ss.get(_CURRENT) or (ModelConfig(), Workload())
    for key, value in _state_values(cfg, wl).items():
        if key not in ss:
            ss[key] = value


def _seed_once() -> None:
    def seed(query: dict[str, str]) -> list[str]:
        cfg, wl, problems = decode_url(query)
        _replace_whole(cfg, wl)
        st.session_state[_PROBLEMS] = problems  # shown under the sidebar's link, not as page warnings
        return problems

    if st.session_state.get(_SEEDED):
        _refill_missing()
    else:
        seed_from_url_once(_SEEDED, seed, warn=False)


# ----------------------------------------------------------------------------- state -> config
def widget_field_value(url_key: str, value: object) -> object:
    """A widget's value as its field's: "LoRA on" holds a list of matrices, the field their '-'-joined text in
    `LORA_MATRICES` order ("q-v-in"); every other widget holds the field's own value."""
    if url_key == TARGETS and isinstance(value, (list, tuple)):
        return "-".join(m for m in LORA_MATRICES if m in value)
    return value


def widget_state_value(url_key: str, value: object) -> object:
    """A field's value as its widget holds it (the inverse of `widget_field_value`)."""
    if url_key == TARGETS and isinstance(value, str):
        return [m for m in value.split("-") if m in LORA_MATRICES]
    return value


def widget_changes(state: Mapping[str, object], last: ModelConfig) -> dict[str, object]:
    """The explicit edits: every field whose widget value differs from the current config."""
    values = {name: widget_field_value(key, state[_key(key)]) for key, name in WIDGET_KEYS.items()}
    return {name: value for name, value in values.items() if value != getattr(last, name)}


def _config_from_state() -> ModelConfig:
    ss = st.session_state
    last = ss[_CURRENT][0]
    changes = widget_changes(ss, last)
    # the axes a preset or an upload set (no widget edits them; a family switch derives them unless given)
    changes |= {name: value for name, value in (ss.get(_AXES) or {}).items() if getattr(last, name) != value}
    return coerce(changes, last, keep_4h=bool(ss[_key("keep4h")])).config


def _clamp_groups() -> str | None:
    """G above L cannot form a model (every group needs a layer): the widget is set to G = L, and the
    message says so, so the sidebar never shows a G the pages do not use."""
    ss = st.session_state
    groups, layers = ss[_key("G")], ss[_key("L")]
    if groups <= layers:
        return None
    ss[_key("G")] = layers
    return (f"Groups G = {groups} is more than the layers L = {layers}: every group needs at least one layer "
            f"(G ≤ L), so G is set to {layers}.")


def _workload_from_state() -> Workload:
    ss = st.session_state
    return Workload(**{name: ss[_wkey(key)] for key, name in WORKLOAD_QUERY_KEYS.items()})


# ----------------------------------------------------------------------------- callbacks
def _on_field_change() -> None:
    _refill_missing()
    st.session_state[_PROBLEMS] = []


def _on_preset_change() -> None:
    _refill_missing()
    name = st.session_state[PRESET_KEY]
    if name in ALL_PRESETS:
        _replace_whole(ALL_PRESETS[name], st.session_state[_CURRENT][1])
    st.session_state[_PROBLEMS] = []


def _on_family_change() -> None:
    """The rule sets the family's fields; the sidebar only remembers the ALBERT-only ones across a
    switch to BERT and gives them back (as explicit edits) on the way back."""
    _refill_missing()
    ss = st.session_state
    if ss[_key("family")] == "bert":
        ss[_STASH] = {k: ss[_key(k)] for k in ("E", "sharing", "G", "K")}
    else:
        for k, v in (ss.pop(_STASH, None) or {}).items():
            ss[_key(k)] = v
    _on_field_change()


def upload_config(raw: bytes, name: str) -> ModelConfig:
    """The config of an uploaded config.json (ValueError naming the problem): transformers' fields,
    then the sidebar's own ranges (a slider cannot show a value outside its range)."""
    cfg = config_from_json_bytes(raw, f"uploaded file {name[:60]}")
    for key, (lo, hi, _) in SLIDER_RANGES.items():
        value = getattr(cfg, QUERY_KEYS[key])
        if not lo <= value <= hi:
            raise ValueError(f"{QUERY_KEYS[key]} = {value:,}: the sidebar allows {lo} to {hi:,}")
    return cfg


def _on_upload() -> None:
    _refill_missing()
    ss = st.session_state
    upload = ss.get(UPLOAD_KEY)
    if upload is None:
        ss.pop(_UPLOAD_MESSAGE, None)
        ss.pop(DOCTOR_KEY, None)
        return
    ss[DOCTOR_KEY] = _diagnosis(upload.getvalue(), upload.name[:60])
    try:
        cfg = upload_config(upload.getvalue(), upload.name)
    except ValueError as exc:
        ss[_UPLOAD_MESSAGE] = (False, f"Not loaded: {exc}.")
        return
    _replace_whole(cfg, ss[_CURRENT][1])
    ss[_PROBLEMS] = []
    lost = " ".join(link_losses(cfg))
    ss[_UPLOAD_MESSAGE] = (True, f"Loaded {upload.name[:60]}: {cfg.label}. {lost + ' ' if lost else ''}"
                                 "Its traps: Config doctor on the Explorer.")


def _diagnosis(raw: bytes, name: str):
    """The config doctor's findings on an uploaded file (also when the sidebar cannot load it), or None
    when it is no transformers config at all (the upload message says why)."""
    from albert_core.review.doctor import diagnose

    try:
        return name, diagnose(raw)
    except ValueError:
        return None


def _upload_widget() -> None:
    with st.expander("Start from a config.json", expanded=False):
        st.file_uploader("transformers config.json", type=["json"], key=UPLOAD_KEY, help=HELP["upload"],
                         on_change=_on_upload, max_upload_size=MAX_UPLOAD_MB)
        ok, text = st.session_state.get(_UPLOAD_MESSAGE, (True, ""))
        if text:
            (st.caption if ok else st.error)(escape_markdown(text))


def _on_reset() -> None:
    _replace_whole(ModelConfig(), Workload())
    st.session_state[_PROBLEMS] = []


# ----------------------------------------------------------------------------- widgets
def _index(options: Sequence[object], key: str) -> int:
    """The position of the session's value among a box's options. Every box is drawn with it: a box drawn without
    ``index`` is painted with option 0 first, and a fresh browser kept showing it (Optimizer "none" while the page
    computed AdamW) until the next edit sent that 0 back."""
    return list(options).index(st.session_state[key])


def _number(label: str, key: str, lo: int, hi: int, *, disabled: bool = False, help_key: str = "") -> None:
    st.number_input(
        label, min_value=lo, max_value=hi, value=st.session_state[_key(key)], step=_STEPS.get(key, 1), key=_key(key),
        help=HELP[help_key or key], on_change=_on_field_change, disabled=disabled,
    )


def _select(label: str, options: Sequence[object], key: str, **kwargs: object) -> None:
    st.selectbox(label, options, index=_index(options, key), key=key, on_change=_on_field_change, **kwargs)


def _pair():
    """Two inputs side by side, aligned at the bottom: one horizontal container (one message to the browser) where
    two columns were three; every element a rerun sends costs the server its own work, and the sidebar sends ~25."""
    return st.container(horizontal=True, vertical_alignment="bottom", gap="small", wrap=False)


def _model_widgets() -> None:
    """The model's widgets, each drawn with the current config's value (see `_index`)."""
    ss = st.session_state
    bert = ss[_key("family")] == "bert"
    paper = ss[_key("family")] in PAPER_FAMILIES
    presets = [*ALL_PRESETS, CUSTOM]
    st.selectbox("Preset", presets, index=_index(presets, PRESET_KEY), key=PRESET_KEY, help=HELP["preset"],
                 format_func=_preset_label, on_change=_on_preset_change)
    st.radio("Family", FAMILIES, index=_index(FAMILIES, _key("family")), key=_key("family"), horizontal=True,
             format_func=FAMILY_NAMES.__getitem__, help=HELP["family"], on_change=_on_family_change)
    if not paper:
        st.caption(escape_markdown(layout_summary(ss.get(_AXES) or {})))
    _number("Vocabulary size V", "V", *LIMITS["vocab_size"])
    h = ss[_key("H")]
    _number("Embedding size E", "E", *LIMITS["embedding_size"], disabled=bert)
    for key, label in (("H", "Hidden size H"), ("L", "Layers L")):
        lo, hi, step = SLIDER_RANGES[key]
        st.slider(label, lo, hi, value=ss[_key(key)], step=step, key=_key(key), help=HELP[key],
                  on_change=_on_field_change)
    _select("Attention heads", divisors(h), _key("heads"), help=HELP["heads"],
            format_func=lambda n: f"{n} (head dim {h // n})")
    keep = st.toggle("Keep I = 4H", value=ss[_key("keep4h")], key=_key("keep4h"), help=HELP["keep4h"],
                     on_change=_on_field_change)
    _number("Intermediate size I", "I", *LIMITS["intermediate_size"], disabled=keep)
    _number("Max positions P", "P", *LIMITS["max_position_embeddings"])
    _select("Cross-layer sharing", SHARING_MODES, _key("sharing"), disabled=bert,
            format_func=SHARING_LABELS.__getitem__, help=HELP["sharing"])
    unshared = bert or ss[_key("sharing")] == "none"
    with _pair():
        _number("Groups G", "G", *LIMITS["num_hidden_groups"], disabled=unshared)
        _number("Inner repeats K", "K", *LIMITS["inner_group_num"], disabled=bert)
    _scheme_widgets(bert, unshared)
    family = ss[_key("family")]
    _select("Head", head_options(family, ss[_key("head")]), _key("head"), format_func=functools.partial(
        head_label, family), help=HELP["head"])
    st.checkbox("Tie MLM decoder to word embeddings", value=ss[_key("tied")], key=_key("tied"), help=HELP["tied"],
                on_change=_on_field_change, disabled=ss[_key("head")] == "model")
    with st.expander("More fields"):
        _number("Token types T", "T", LIMITS["type_vocab_size"][0] if paper else 0, LIMITS["type_vocab_size"][1])
        _select("Activation", ACTIVATIONS if paper else ENCODER_ACTIVATIONS, _key("act"), help=HELP["act"])


def _scheme_widgets(bert: bool, unshared: bool) -> None:
    """The sharing schemes designed since ALBERT (not for a BERT, which shares nothing), each drawn with the current
    config's value like every other widget; an impossible combination is refused with the rule's words."""
    ss = st.session_state
    with st.expander("Sharing since ALBERT"):
        _select("Block order", BLOCK_ORDERS, _key("order"), disabled=unshared,
                format_func=BLOCK_ORDER_LABELS.__getitem__, help=HELP["order"])
        st.checkbox("Unique first and last layers", value=ss[_key("ends")], key=_key("ends"), help=HELP["ends"],
                    on_change=_on_field_change, disabled=unshared)
        _number("Repeat each layer", "rep", *LIMITS["repeat"], disabled=bert)
        rank = ss[_key("lora")]
        # a LoRA needs positions that share a block: shared layers, or layers that repeat (a rank > 0 stays editable)
        _number("LoRA rank per position", "lora", *LIMITS["lora_rank"],
                disabled=bert or (unshared and ss[_key("rep")] == 1 and rank == 0))
        st.multiselect("LoRA on", LORA_MATRICES, default=ss[_key(TARGETS)], key=_key(TARGETS),
                       format_func=LORA_MATRIX_LABELS.__getitem__, help=HELP[TARGETS], on_change=_on_field_change,
                       disabled=bert or rank == 0, placeholder="Pick one or more matrices")


@functools.cache
def _has_discriminator_class(family: str) -> bool:
    """Whether transformers has a replaced-token discriminator class for the family (ELECTRA's, today)."""
    base = ALL_PRESETS[FAMILY_BASE_PRESET[family]]
    return hf_class_mismatch(base.replace(head="discriminator")) is None


def head_options(family: str, current: str) -> tuple[str, ...]:
    """The heads the Head box offers: the paper's three for BERT and ALBERT; after them the bare encoder and the
    masked-LM head, and the replaced-token discriminator where transformers has a class for it (or while the
    current config has one, from a link or an upload: the box always holds what the pages compute)."""
    if family in PAPER_FAMILIES:
        return HEADS
    return tuple(h for h in ENCODER_HEADS if h not in ("pretraining", "discriminator")
                 or (h == "discriminator" and (_has_discriminator_class(family) or current == h)))


def head_label(family: str, head: str) -> str:
    if head == "discriminator" and not _has_discriminator_class(family):
        return "replaced-token discriminator (ELECTRA's head; no transformers class for this family)"
    return HEAD_LABELS[head]


def _preset_label(name: str) -> str:
    return f"{name} ({FAMILY_NAMES[ENCODER_PRESETS[name].family]})" if name in ENCODER_PRESETS else name


def layout_summary(axes: Mapping[str, object]) -> str:
    """The architecture of a family after BERT in a few words (the axes the sidebar has no widget for)."""
    parts = ["gated FFN (GLU)" if axes.get("ffn_kind") == "glu" else "dense FFN",
             POSITION_LABELS.get(str(axes.get("position")), "")]
    norm = "RMSNorm" if axes.get("norm") == "rmsnorm" else \
        "LayerNorm" + ("" if axes.get("norm_bias") else " without bias")
    parts.append(f"{'pre' if axes.get('norm_placement') == 'pre' else 'post'}-norm {norm}")
    if not axes.get("attention_bias") and not axes.get("mlp_bias"):
        parts.append("no biases in attention and FFN")
    if axes.get("num_kv_heads"):
        parts.append(f"{axes['num_kv_heads']} key/value heads")
    if axes.get("local_window"):
        parts.append(f"local attention over {axes['local_window']} tokens, global every {axes.get('global_every')}")
    return "Layout: " + ", ".join(p for p in parts if p) + "."


def _fit_workload(max_positions: int) -> str | None:
    """The workload widgets' values the config and the dtype allow (before the workload is read): a sequence no
    longer than the longest input, mixed precision only with a 16-bit dtype, no checkpointing for int8. Returns
    the note for a lowered sequence length."""
    ss = st.session_state
    if ss[_wkey("dtype")] not in MIXED_DTYPES:
        ss[_wkey("prec")] = "pure"  # mixed precision needs a 16-bit compute dtype
    if ss[_wkey("dtype")] == "int8":
        ss[_wkey("ckpt")] = False  # int8 is inference-only
    if ss[_wkey("seq")] > max_positions:
        ss[_wkey("seq")] = max_positions
        return f"Sequence length lowered to the longest input, {max_positions}."
    return None


def _workload_widgets(note: str | None) -> None:
    """The workload's widgets, each drawn with the current workload's value."""
    ss = st.session_state
    st.subheader("Workload")
    if note:
        st.caption(note)
    with _pair():  # the longer label wraps: the boxes aligned at the bottom
        st.number_input("Batch B", *WORKLOAD_LIMITS["batch"], value=ss[_wkey("batch")], step=1,
                        key=_wkey("batch"), help=HELP["batch"], on_change=_on_field_change)
        st.number_input("Sequence length S", 1, WORKLOAD_LIMITS["seq_len"][1], value=ss[_wkey("seq")],
                        step=64, key=_wkey("seq"), help=HELP["seq"], on_change=_on_field_change)
    with _pair():
        _select("dtype", tuple(DTYPE_BYTES), _wkey("dtype"), help=HELP["dtype"])
        _select("Optimizer", OPTIMIZERS, _wkey("opt"), help=HELP["opt"])
    # each on its own row: side by side in the sidebar they read "pure (all in" and "Gradi…"
    _select("Precision", PRECISIONS, _wkey("prec"), help=HELP["prec"], disabled=ss[_wkey("dtype")] not in MIXED_DTYPES,
            format_func=PRECISION_LABELS.__getitem__)
    st.toggle("Gradient checkpointing", value=ss[_wkey("ckpt")], key=_wkey("ckpt"), help=HELP["ckpt"],
              disabled=ss[_wkey("dtype")] == "int8", on_change=_on_field_change)


def _sync_url(cfg: ModelConfig, wl: Workload) -> None:
    current = st.query_params.to_dict()
    wanted = share_query(cfg, wl, current)
    if wanted != current:
        for key in current.keys() - wanted.keys():  # an axis of the family the config no longer has
            del st.query_params[key]
        st.query_params.update({k: v for k, v in wanted.items() if current.get(k) != v})


SHARE_OPEN_KEY = "share_link_open"  # the share box's expander: open or not (a widget state)


def share_link() -> None:
    """The "Copy link to this view" box, drawn after the page ran (app.py): pages own URL keys too
    (Compare's pins), so the link is the address bar's final state, the view the visitor sees."""
    with st.sidebar:
        # Drawn only once opened (a rerun): its code box would make every first page load and run the browser's
        # 1.5 MB syntax-highlighting bundle, ~10 % of a fresh browser's first-page CPU (docs/benchmarks-changes.md).
        box = st.expander("Copy link to this view", expanded=False, key=SHARE_OPEN_KEY, on_change="rerun")
    if not box.open:
        return
    base = st.context.url or ""
    link = f"{base}?{urlencode(st.query_params.to_dict())}"
    with box, st.container(key="share_link"):
        st.code(link, language=None, wrap_lines=True)
        st.caption(HELP["share"])


def _show(cfg: ModelConfig, wl: Workload) -> None:
    """Set every widget from the config and workload this run computes with (before the widgets are drawn). The
    "Keep I = 4H" toggle is the visitor's own setting, not a field: it keeps its state."""
    keep = st.session_state[_key("keep4h")]
    st.session_state.update(_state_values(cfg, wl))
    st.session_state[_key("keep4h")] = keep


def render() -> tuple[ModelConfig, Workload]:
    """Draw the sidebar; return the config and workload of this run, the ones every widget shows and the URL
    carries (an edit that cannot form a model is not applied: the message names the rule)."""
    _seed_once()
    ss = st.session_state
    for problem in ss.get(_PROBLEMS, []):  # a reset names the value used; other problems fall back to the default
        tail = "" if " reset " in problem else " \\- using the default instead."
        st.warning(escape_markdown(problem) + tail, icon="⚠️")
    clamped, refused, lowered = _clamp_groups(), None, None
    try:
        cfg = _config_from_state()
        lowered = _fit_workload(cfg.max_seq_len)
        wl = _workload_from_state()
        wl.check_fits(cfg)
    except ValueError as exc:
        refused = exc
        cfg, wl = ss[_CURRENT]
    ss[_CURRENT] = (cfg, wl)
    _show(cfg, wl)
    with st.sidebar:
        st.header("Model")
        _upload_widget()
        _model_widgets()
        if clamped:
            st.warning(clamped, icon="⚠️")
        _workload_widgets(lowered)
    if refused is not None:
        st.error(escape_markdown(f"Not applied: {refused}. The sidebar is back at the last valid configuration, "
                                 f"{cfg.label}."), icon="🚫")
    _sync_url(cfg, wl)
    with st.sidebar:
        st.button("Reset", key=RESET_KEY, help=HELP["reset"], on_click=_on_reset)
    return cfg, wl
