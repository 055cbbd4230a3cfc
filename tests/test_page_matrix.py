"""Every page tried with every preset (issue 39): no exception element, and no error box but an expected, named
message (`EXPECTED_ERRORS`: each names the limit it is about).

What is tried, and how it is sampled (deterministically: the same cases in every run):

- **pages x presets x heads** (`matrix`): every preset of `ALL_PRESETS` with its own head on each of the 7 pages;
  each family's base preset (`FAMILY_BASE_PRESET`) with every head its family offers (every head of `ENCODER_HEADS`
  the config accepts: model, pretraining, masked-lm for BERT and ALBERT; model, masked-lm, discriminator after
  them) on every page; every other preset with each of its other heads on the three pages whose numbers or model
  depend on the head (Explorer, Hardware, Live) plus one of the other four pages in turn. 489 page loads of the full
  product's 609 (29 presets x 3 heads x 7 pages): the left-out loads are a head on a page that reads the head only
  through counts the Explorer already drew for that config, and each such (preset, head) still meets one of them;
- **Hardware's panels**: every Hardware case picks a hardware profile and a chip count from the link, rotating over
  all of them in a fixed order (this machine with its probe faked: no benchmark in tests), so every profile meets
  every family and several chip counts, and the data-parallel panel meets every head;
- **Compare**: every Compare case opens with BERT-base and RoBERTa-base pinned at the preset's longest sequence (the
  pins lowered to theirs) and pins the sidebar's config ("Pin current config": its table and bars);
- **Train's options** (`train_cases`): every preset at the sidebar's size (the lab's BERT and ALBERT twins of the
  preset's size), each family's base preset also in custom runs at both sizes and twins at the tiny size (which
  does not depend on the preset: every preset opens the page at it above); nothing is submitted, nothing trains;
- **Live's token cap** (`token_cap_cases`): a small model of every family built for real with P just below and
  just above the 128-token cap (after the family's position offset) and far below it, run on a text longer than the
  cap: the tokens shown are exactly the cap;
- **the preset box**: every preset picked in the sidebar's box in a fresh session (the Explorer page).

Why sampled: the full product with every Train option is about 870 page loads, over five minutes with two test
processes on a loaded 2-core host; this selection keeps every preset on every page and every head on the pages that
read it, in about half the time (measured: see the closing note of issue 39).

Kept cheap: the Live page's presets run under a 16 MiB memory budget (every preset is over it: the page says so and
proves the count on the meta device, allocating nothing); only the token-cap models (H 64, L 2, V 300) are built;
the lab worker is a fresh one with its run cache in a temporary folder and is never given a run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from albert_core.configuration.config import ENCODER_HEADS, FAMILY_NAMES, ModelConfig
from albert_core.configuration.presets import ALL_PRESETS, FAMILY_BASE_PRESET
from albert_core.hardware import profiles as hardware
from albert_core.hardware.profiles import HARDWARE_NAMES
from albert_core.lab import worker as lab_worker
from albert_core.lab.runs import RunCache
from albert_core.settings import CACHE_DIR, MEMORY_BUDGET, RUNS_DIR
from ui.hardware.questions import CHIP_CHOICES
from ui.live.models import MAX_TOKENS
from ui.urls import config_to_query

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = {  # page -> (script, title)
    "explorer": ("ui/explorer/page.py", "Explorer"),
    "scaling": ("ui/scaling/page.py", "Scaling"),
    "live": ("ui/live/page.py", "Live model"),
    "train": ("ui/train/page.py", "Train"),
    "compare": ("ui/compare/page.py", "Compare"),
    "hardware": ("ui/hardware/page.py", "Hardware"),
    "paper": ("ui/paper/page.py", "Paper & formulas"),
}
# The error boxes a page may show for a shipped preset: each names the limit it is about.
EXPECTED_ERRORS = {
    # the preset is over the server's memory budget: the page offers what fits and proves the count on meta
    "live": (r"Too big to build here: .+ needs about .+, over the memory budget of ",),
    # a run of the plan over one of the lab's limits, named (steps, training memory, compute, vocabulary)
    "train": (r".+, seed \d+: (steps \(|training .+ needs about .+ over the memory budget|the run needs .+ of compute"
              r"|vocab_size must be )",),
}


COMPARE_PINS = ("bert-base", "roberta-base")  # a paper family's 512 positions and RoBERTa's 514 (512 tokens)


def heads(cfg: ModelConfig) -> list[str]:
    """Every head the config's family offers (the config takes it)."""
    out = []
    for head in ENCODER_HEADS:
        try:
            cfg.replace(head=head)
        except ValueError:
            continue
        out.append(head)
    return out


PAGE_NAMES = list(PAGES)
CONFIGS = [(name, head) for name, cfg in ALL_PRESETS.items() for head in heads(cfg)]  # 87: each preset, each head
FAMILY_BASES = set(FAMILY_BASE_PRESET.values())  # one preset per family (albert-base, roberta-base, ...)
HEAD_PAGES = ("explorer", "hardware", "live")  # the pages whose numbers or model differ with the head
OTHER_PAGES = tuple(p for p in PAGE_NAMES if p not in HEAD_PAGES)


def matrix() -> list[tuple[str, str, str]]:
    """(preset, head, page), config by config (a page's caches serve the config's other pages):

    - every preset with its own head on every page;
    - every other head of a family's base preset on every page;
    - every other head of the other presets on the pages whose numbers depend on the head (Explorer: every count;
      Hardware: its time and gradient traffic; Live: the model built), and on one more page, rotating over the
      others in a fixed order (Scaling, Train, Compare, Paper: heads enter them only through the counts above).
    """
    out, turn = [], 0
    for name, head in CONFIGS:
        if head == ALL_PRESETS[name].head or name in FAMILY_BASES:
            pages = PAGE_NAMES
        else:
            pages = [*HEAD_PAGES, OTHER_PAGES[turn % len(OTHER_PAGES)]]
            turn += 1
        out += [(name, head, page) for page in pages]
    return out


CASES = [pytest.param(name, head, page, id=f"{page}-{name}-{head}") for name, head, page in matrix()]


def hardware_choice(name: str, head: str) -> tuple[str, int]:
    """The profile and chip count a Hardware case picks: rotating over every profile, and over the chip counts
    more slowly, in the fixed order of CONFIGS (so the pairs differ from case to case and run to run the same)."""
    i = CONFIGS.index((name, head))
    return HARDWARE_NAMES[i % len(HARDWARE_NAMES)], CHIP_CHOICES[(i // len(HARDWARE_NAMES)) % len(CHIP_CHOICES)]


def train_cases() -> list:
    """(preset, size, mode): every preset at the sidebar's size (twins: the lab's BERT and ALBERT of the preset's
    size), and each family's base preset in the other three (custom runs at either size, twins at the tiny size:
    the tiny size does not depend on the preset; every preset opens the page at it in the matrix above)."""
    out = [pytest.param(name, "sidebar", "twins", id=f"{name}-sidebar-twins") for name in ALL_PRESETS]
    out += [pytest.param(name, size, mode, id=f"{name}-{size}-{mode}") for name in ALL_PRESETS if name in FAMILY_BASES
            for size, mode in (("sidebar", "custom"), ("tiny", "custom"), ("tiny", "twins"))]
    return out


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """A fresh lab worker with its own run cache (the Train page asks it for the queue), and the hardware probe's
    cache in a temporary folder with the probe faked."""
    monkeypatch.setenv(RUNS_DIR, str(tmp_path / "runs"))
    monkeypatch.setenv(CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(MEMORY_BUDGET, raising=False)
    w = lab_worker.Worker(workers=1, max_queue=8, cache=RunCache(tmp_path / "runs"))
    monkeypatch.setattr(lab_worker, "_WORKER", w)
    monkeypatch.setattr(hardware, "_MEMO", {})
    monkeypatch.setattr(hardware, "probe_this_machine", lambda budget_s=1.0: {
        "key": hardware._probe_key(1), "cpu": "Test CPU", "threads": 1, "matmul_flops": 1.5e11,
        "kernel_flops": {"torch.matmul": 0.7e11, "onednn linear": 1.5e11}, "memory_bandwidth": 2.0e10,
        "memory_bytes": 8 * 2**30, "probed_at": "now"})
    yield
    w.close()


def open_page(query: dict[str, str], page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query)
    at.run()  # the Explorer: the page a link without a page path opens
    return at if page == "explorer" else at.switch_page(PAGES[page][0]).run()


def plain(text: str) -> str:
    return text.replace("\\", "")  # the pages escape markdown


def check(at: AppTest, page: str, what: str) -> None:
    """No exception element, the page drawn (its title), no URL value refused, and only expected error boxes."""
    assert not at.exception, f"{what}: {at.exception[0].value}"
    assert [t.value for t in at.title] == [PAGES[page][1]], what
    warnings = [plain(w.value) for w in at.warning if plain(w.value).startswith("URL value")]
    assert not warnings, f"{what}: {warnings}"
    unexpected = [plain(e.value) for e in at.error
                  if not any(re.match(rule, plain(e.value)) for rule in EXPECTED_ERRORS.get(page, ()))]
    assert not unexpected, f"{what}: {unexpected}"


def preset_query(name: str, head: str) -> dict[str, str]:
    cfg = ALL_PRESETS[name].replace(head=head)
    return {**config_to_query(cfg), "seq": str(min(512, cfg.max_seq_len))}


@pytest.mark.parametrize(("name", "head", "page"), CASES)
def test_every_page_opens_with_every_preset_and_head(monkeypatch, name, head, page):
    query = preset_query(name, head)
    if page == "live":
        monkeypatch.setenv(MEMORY_BUDGET, "16MiB")  # every preset is over it: nothing is allocated
    if page == "hardware":
        hw, chips = hardware_choice(name, head)
        query |= {"hw": hw, "chips": str(chips)}
    if page == "compare":  # the preset's longest sequence, beside pins of 512 tokens (RoBERTa's after its offset)
        query |= {"seq": str(ALL_PRESETS[name].max_seq_len), "pin": ",".join(COMPARE_PINS)}
    at = open_page(query, page)
    what = f"{page} with {name} ({head})"
    check(at, page, what)
    if page == "live":
        assert any("meta device" in i.value for i in at.info), what  # the proof on the meta device
    if page == "hardware":
        assert at.selectbox(key="hw_hardware").value == hw and at.query_params["hw"] == hw, what
    if page == "compare":
        at.button(key="compare_pin_current").click().run()
        check(at, page, f"{what}, pinned")
        pinned_already = ALL_PRESETS[name].replace(head=head) in [ALL_PRESETS[p] for p in COMPARE_PINS]
        assert len(at.dataframe[0].value) == (2 if pinned_already else 3), what  # the link's pins, the sidebar's


@pytest.mark.parametrize(("name", "size", "mode"), train_cases())
def test_train_plans_every_preset_at_the_sidebars_size(name, size, mode):
    at = open_page(preset_query(name, ALL_PRESETS[name].head), "train")
    at.radio(key="train_size").set_value(size).run()
    at.button_group(key="train_mode").set_value(mode).run()
    what = f"train with {name}, {size}, {mode}"
    check(at, "train", what)
    assert at.dataframe, what  # the plan's table (or the reference runs' table) is drawn
    if size == "sidebar" and ALL_PRESETS[name].family not in ("albert", "bert"):
        assert any("The lab pretrains BERT and ALBERT only" in plain(i.value) for i in at.info), what


def token_cap_cases() -> list:
    """(family, max positions, tokens the page runs): a small model of each family with P just below the cap of
    128 tokens after the family's position offset, just above it, and far below it."""
    out = []
    for family, preset in FAMILY_BASE_PRESET.items():
        offset = ALL_PRESETS[preset].position_offset
        for rows in (16, MAX_TOKENS - 1, MAX_TOKENS + 1):  # positions after the offset
            cap = min(MAX_TOKENS, rows)
            # ui/live/runs.py (its owner's) still tokenizes to min(128, P), not min(128, P - offset)
            marks = [pytest.mark.xfail(strict=True, reason="ui/live/runs.py:67 tokenizes to min(128, P), not "
                                       "min(128, P - offset)")] if offset and rows < MAX_TOKENS else []
            out.append(pytest.param(family, rows + offset, cap, marks=marks, id=f"{family}-P{rows + offset}"))
    return out


@pytest.mark.parametrize(("family", "max_positions", "cap"), token_cap_cases())
def test_live_runs_every_family_up_to_its_token_cap(family, max_positions, cap):
    cfg = ALL_PRESETS[FAMILY_BASE_PRESET[family]].replace(
        vocab_size=300, embedding_size=64, hidden_size=64, num_layers=2, num_heads=2, intermediate_size=128,
        max_position_embeddings=max_positions)
    at = open_page({**config_to_query(cfg), "seq": str(min(64, cfg.max_seq_len))}, "live")
    what = f"live with a small {FAMILY_NAMES[family]}, P = {max_positions}"
    check(at, "live", what)
    assert any(f"runs one sequence of up to {cap} tokens" in c.value for c in at.caption), what
    at.text_area(key="live_text").input(" ".join(["word"] * 200) + "\nand " * 40).run()
    check(at, "live", f"{what}, a long text")
    assert not at.error, f"{what}: {[plain(e.value) for e in at.error]}"  # built and run: no refusal either
    assert len(at.dataframe[1].value) == cap, what  # every position the table has, no more


@pytest.mark.parametrize("name", list(ALL_PRESETS))
def test_every_preset_picked_in_the_preset_box(name):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.selectbox(key="cfg_preset").set_value(name).run()
    check(at, "explorer", f"{name} from the preset box")
    assert at.metric, name
