"""Train: pretrain the BERT and ALBERT twins of the sidebar config live (MLM + SOP/NSP on a real
corpus), watch their curves, and open the experiments in miniature with their shipped reference runs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from albert_core.configuration.coerce import coerce
from albert_core.configuration.config import FAMILY_NAMES, PAPER_FAMILIES, SHARING_LABELS, ModelConfig
from albert_core.format import escape_markdown
from albert_core.lab import trainer
from albert_core.lab.spec import DEFAULT_MASK_RATE, DEFAULT_STEPS, TASKS, mask_rate_text
from ui import owner as train_owner
from ui.state import current
from ui.train import experiments as train_experiments
from ui.train import runs as tr
from ui.train import view as train_view
from ui.url_state import seed_widget, sync_widget

TASK_LABELS = {"sop": "SOP (sentence order, ALBERT)", "nsp": "NSP (next sentence, BERT)", "none": "none (MLM only)"}
SIZE_LABELS = {"tiny": f"Tiny twins ({tr.TINY.label.split(' ', 1)[1]}, V {tr.TINY.vocab_size:,})",
               "sidebar": "The sidebar's size (bounded by the lab's limits)"}


def lab_base(sidebar: ModelConfig) -> tuple[ModelConfig, list[str]]:
    """The sidebar's config as the lab trains it, and a sentence for each change. The lab pretrains BERT and ALBERT
    only (their pre-training heads MLM + SOP/NSP, their tokenizers, two segments): a family after BERT is taken at
    its size (V, E, H, L, heads, I, P) in the paper's layout, by the coerce rule of a family switch."""
    notes = []
    if sidebar.family in PAPER_FAMILIES:
        cfg = sidebar
    else:
        cfg = coerce({"family": "albert", "embedding_size": sidebar.embedding_size}, sidebar).config
        name = FAMILY_NAMES[sidebar.family]
        notes.append(
            f"The lab pretrains BERT and ALBERT only (MLM + SOP/NSP heads, their tokenizers): these runs take {name}'s "
            f"size from the sidebar (V {cfg.vocab_size:,}, E {cfg.embedding_size:,}, H {cfg.hidden_size:,}, "
            f"L {cfg.num_layers}, {cfg.num_heads} heads, I {cfg.intermediate_size:,}, "
            f"P {cfg.max_position_embeddings:,}) in the paper's layout (dense FFN, learned positions, post-LayerNorm, "
            f"{cfg.hidden_act}), not {name}'s own.")
    if cfg.type_vocab_size < 2:
        notes.append(f"Token types T = {cfg.type_vocab_size} in the sidebar; the runs have 2, one per segment of the "
                     "sentence task.")
        cfg = cfg.replace(type_vocab_size=2)
    return cfg.replace(head="pretraining"), notes


E_KEY = "train_e"
URL_SEEDS, URL_STEPS, URL_PROBE = "tseeds", "tsteps", "tprobe"  # the plan form's URL keys
DEFAULT_SEEDS = "0, 1"


def _parses(parse: Callable[[str], object], raw: str) -> bool:
    try:
        parse(raw)
    except ValueError:
        return False
    return True


def follow(key: str, default: object, keep: Callable[[object], bool]) -> None:
    """A custom-run widget's value before it is drawn: the size's ``default`` unless the visitor chose another
    value that ``keep`` says still fits the size; the default it was given is remembered beside it."""
    ss, given = st.session_state, f"_{key}_default"
    if key not in ss or ss[key] == ss.get(given) or not keep(ss[key]):
        ss[key] = default
    ss[given] = default


def parse_e(text: str, base: ModelConfig) -> list[int]:
    """The custom runs' embedding sizes: at most 4, each from 1 to 4H (ValueError naming the field otherwise)."""
    return tr.parse_ints(text, "E values", limit=4, lo=1, hi=base.hidden_size * 4)


def fits_e(text: object, base: ModelConfig) -> bool:
    """Whether typed E values still fit ``base`` (text that does not parse is kept: the page says what is wrong)."""
    try:
        parse_e(str(text), base)
    except ValueError as exc:
        return "must be between" not in str(exc)
    return True


cfg, wl = current()
limits = trainer.LabLimits.from_env()
ids = train_view.run_ids()

st.title("Train")
st.caption(
    "Pretrain small BERT and ALBERT encoders on this machine, on real English (Python's documentation and the World "
    "English Bible) with a real tokenizer: masked-language-model loss plus sentence order (SOP) or next sentence "
    "(NSP). Runs train in a background worker; the curves update while they run. Everything here is measured on "
    "this server, never copied from the paper."
)

# ----------------------------------------------------------------------------- experiments
train_experiments.render(cfg)

# ----------------------------------------------------------------------------- plan your own
st.header("Train your own")
mode = st.segmented_control("What to train", ["twins", "custom"], key="train_mode", default="twins",
                            format_func={"twins": "Twins of the sidebar config", "custom": "Custom runs"}.get
                            ) or "twins"
c = st.columns(2)
size = c[0].radio("Size", list(SIZE_LABELS), format_func=SIZE_LABELS.get, key="train_size",
                  help="Tiny twins: the lab's small base model, the size of the shipped reference runs (a few minutes "
                  "per run at the default steps, measured: see Steps). The sidebar's own size is checked against "
                  "the lab's limits (steps, compute, training memory, vocabulary) before anything starts.")
task = c[1].selectbox("Sentence task", TASKS[::-1], format_func=TASK_LABELS.get, key="train_task",
                      help="SOP: two consecutive segments, swapped half the time (ALBERT). NSP: the second "
                      "segment follows the first or comes from another document (BERT).")
mask_rate = c[1].selectbox("Mask rate", list(tr.MASK_RATES), key="train_mask_rate",
                           index=list(tr.MASK_RATES).index(DEFAULT_MASK_RATE),
                           format_func=lambda r: f"{mask_rate_text(r)} ({tr.MASK_RATES[r]})",
                           help="The share of the training pieces chosen for the masked-language-model loss: 15 % "
                           "in BERT and ALBERT, 20 % in NeoBERT, 30 % in ModernBERT and Ettin. The held-out pieces "
                           "are always masked at 15 %, whatever the rate, so the validation loss of runs at "
                           "different rates compares like with like (the same masked pieces); the training loss "
                           "does not.")
# the plan form travels in the URL (issue 42: seeds, steps and the probe were lost on a reload although "every view
# in the URL"): each seeded from the link once, drawn with the session's value, and written back
ss = st.session_state
default_steps = min(DEFAULT_STEPS, limits.max_steps)
seed_widget(URL_SEEDS, "train_seeds", DEFAULT_SEEDS, valid=lambda raw: _parses(tr.parse_seeds, raw), max_chars=40)
if "train_steps" not in ss:
    raw = st.query_params.get(URL_STEPS, "")
    ss["train_steps"] = int(raw) if raw.isdigit() and 1 <= int(raw) <= limits.max_steps else default_steps
if "train_probe" not in ss:
    ss["train_probe"] = st.query_params.get(URL_PROBE) == "1"
c = st.columns(2)
steps = c[0].number_input("Steps", 1, limits.max_steps, ss["train_steps"], step=100,
                          key="train_steps",
                          help=f"Training steps (at most {limits.max_steps:,} per run on this server). A model first "
                          "learns how often each piece occurs (the frequency-only line on the chart) and only then "
                          f"context. At the tiny size, {train_view.reference_outcome(DEFAULT_STEPS)}")
seeds_text = c[1].text_input("Seeds", ss["train_seeds"], key="train_seeds", max_chars=40,
                             help="One run per seed (comma separated, at most 5): several seeds draw a band, and two "
                             "or more per run are what the page needs to say whether two runs have separated.")
probe = st.checkbox("Then fine-tune on movie reviews (downstream probe)", value=ss["train_probe"], key="train_probe",
                    help=train_view.PROBE_HELP)
sync_widget(URL_SEEDS, seeds_text, DEFAULT_SEEDS)
sync_widget(URL_STEPS, str(int(steps)), str(default_steps))
sync_widget(URL_PROBE, "1" if probe else None, "0")

base, base_notes = (tr.TINY, []) if size == "tiny" else lab_base(cfg)
for note in base_notes:
    st.info(escape_markdown(note))
batch, seq = ((tr.RUN_DEFAULTS["batch_size"], tr.RUN_DEFAULTS["seq_len"]) if size == "tiny"
              else (wl.batch, wl.seq_len))
specs = []
try:
    seeds = tr.parse_seeds(seeds_text)
    if mode == "twins":
        chosen = st.pills("Twins", tr.TWINS, selection_mode="multi", default=list(tr.DEFAULT_TWINS), key="train_twins",
                          help="; ".join(f"{k}: {v}" for k, v in tr.TWIN_HELP.items())) or []
        specs = tr.twin_specs(base, chosen, task=task, steps=int(steps), seeds=seeds, batch_size=batch,
                              seq_len=seq, mask_rate=mask_rate, probe=probe)
    else:
        c = st.columns(4)
        sharing = c[0].selectbox("Sharing", ("none", "all", "attention", "ffn"), format_func=SHARING_LABELS.get,
                                 key="train_sharing", index=1)
        # the E values follow the size unless the visitor typed their own that still fit it (as Streamlit resets a
        # G past the new L): a switch of the size or of the sidebar's config kept E past 4H from the size before
        follow(E_KEY, f"{tr.factorized_size(base)}, {base.hidden_size}", lambda text: fits_e(text, base))
        groups = c[1].number_input("Groups G", 1, base.num_layers, 1, key="train_groups")
        inner = c[2].number_input("Inner repeats K", 1, 4, 1, key="train_inner")
        e_text = c[3].text_input("E values", key=E_KEY, max_chars=40,
                                 help="One run per embedding size (comma separated).")
        specs = tr.custom_specs(base, sharing=sharing, groups=int(groups), inner=int(inner),
                                embedding_sizes=parse_e(e_text, base),
                                task=task, steps=int(steps), seeds=seeds, batch_size=batch, seq_len=seq,
                                mask_rate=mask_rate, probe=probe)
except ValueError as exc:
    st.error(escape_markdown(f"Cannot plan these runs: {exc}"))
    specs = []

if specs:
    problems = train_view.show_plan(specs)
    if size == "sidebar" and problems:
        st.info("The sidebar's size is too big for this server: pick **Tiny twins** for runs of a few "
                "CPU-minutes.")
    st.button(f"Train {len(specs)} run{'s' if len(specs) > 1 else ''}", key="train_submit", type="primary",
              disabled=bool(problems), icon=":material/play_arrow:", on_click=train_view.submit, args=(specs,))
    if not problems:
        st.caption(escape_markdown(train_view.queue_note(specs)))
    train_view.show_submit_errors()  # the click's callback ran before this script: `ids` holds the new runs

# ----------------------------------------------------------------------------- your runs
st.header("Your runs")
if ids:
    train_view.live_panel(ids)
    st.button("Clear the list", key="train_clear", on_click=train_view.set_run_ids, args=([],),
              help="Forget these runs on this page (runs still training carry on for anyone who asked for them).")
else:
    st.caption("No runs yet: pick twins above and press Train. Runs you start are in the page's link: a reload "
               "or another tab of this browser finds them again, still yours to cancel. The link opened in another "
               "browser or on another device shows them read-only.")
train_owner.keep()  # last (an invisible element): the runs this browser starts stay its own in its other tabs
