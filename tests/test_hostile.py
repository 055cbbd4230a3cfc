"""Hostile input: whatever a visitor types, pastes into a URL or passes on a command line yields a
clear ValueError (API), a warning list (lenient URL decoding) or exit code 2 (CLI), never another
exception, and nothing over the live-model memory budget is allocated."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import string
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from albert_core import ModelConfig, Workload
from albert_core.cli.main import main
from albert_core.configuration.hf_config import config_from_hf
from albert_core.configuration.presets import PRESETS
from ui.urls import QUERY_KEYS, WORKLOAD_QUERY_KEYS, config_from_query, parse_query, parse_workload_query

pytestmark = pytest.mark.slow  # hypothesis fuzzing of every entry point: slow

ROOT = Path(__file__).resolve().parents[1]
FIELDS = list(ModelConfig().to_dict())

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.binary(max_size=10),
    st.complex_numbers(),
    st.sampled_from(["albert", "bert", "all", "none", "ffn", "model", "gelu", "768", "1e-12", "nan"]),
)
anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def assert_valid(cfg: ModelConfig) -> None:
    """An accepted config satisfies every rule (rebuilding it re-runs validation)."""
    assert isinstance(cfg, ModelConfig)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg


# ----------------------------------------------------------------------------- ModelConfig
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), anything, max_size=5))
def test_model_config_accepts_or_raises_value_error(changes):
    try:
        cfg = ModelConfig(**changes)
    except ValueError as exc:
        assert str(exc)
        return
    assert_valid(cfg)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=10), anything, max_size=5))
def test_replace_and_from_dict_only_raise_value_error(changes):
    for build in (lambda: ModelConfig().replace(**changes), lambda: ModelConfig.from_dict(changes)):
        with contextlib.suppress(ValueError):
            assert_valid(build())


HF_KEYS = ["model_type", "vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
           "num_attention_heads", "intermediate_size", "num_hidden_groups", "inner_group_num", "hidden_act",
           "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "tie_word_embeddings",
           "position_embedding_type", "architectures"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["albert", "bert"]),
    st.dictionaries(st.sampled_from(HF_KEYS), json_like, max_size=4),
    st.none() | st.sampled_from(["model", "pretraining", "masked-lm", "bogus"]),
)
def test_from_hf_dicts_only_raise_value_error(model_type, data, head):
    data = {"model_type": model_type, **data}
    try:
        cfg = config_from_hf(data, head=head)
    except ValueError as exc:
        assert str(exc)
        return
    assert_valid(cfg)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_from_hf_files_only_raise_value_error(tmp_path, blob):
    path = tmp_path / "config.json"
    path.write_bytes(blob)
    with contextlib.suppress(ValueError):
        assert_valid(config_from_hf(path))


# ----------------------------------------------------------------------------- URL codec
HOSTILE_VALUES = [
    "", " ", "-1", "00", "1e3", "1.5", "nan", "NaN", "inf", "-inf", "0x10", "1_000", "1,000", "+12",
    "9" * 17, "9" * 400, "\u0661\u0662", "\uff11\uff12", "\u00b2", "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>", "javascript:alert(1)", "[x](javascript:alert(1))", "'; DROP TABLE",
    "__import__('os')", "\x00", "768\n", "albert\u200b", "ALBERT", "True", "None",
]
url_value = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    st.text(max_size=40),
    st.integers().map(str),
    st.floats().map(str),
    st.lists(st.sampled_from(HOSTILE_VALUES) | st.text(max_size=10), max_size=3),
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from([*QUERY_KEYS, "page", "x"]), url_value, max_size=8))
def test_lenient_url_decoding_never_raises(params):
    cfg, problems = parse_query(params)
    assert_valid(cfg)
    assert all(isinstance(p, str) and p for p in problems)
    # A value that was not taken as-is is reported: decoding never guesses silently.
    clean = {k: v for k, v in params.items() if k in QUERY_KEYS}
    if not problems:
        assert config_from_query(clean) == cfg


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(list(QUERY_KEYS)), url_value, min_size=1, max_size=6))
def test_strict_url_decoding_only_raises_value_error(params):
    with contextlib.suppress(ValueError):
        assert_valid(config_from_query(params))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([*WORKLOAD_QUERY_KEYS, "H"]), url_value, max_size=5))
def test_workload_url_decoding_never_raises(params):
    work, problems = parse_workload_query(params)
    assert isinstance(work, Workload) and all(isinstance(p, str) for p in problems)
    # whatever the URL held, the workload it decodes to passes Workload's own checks (every field, the
    # precision and checkpointing ones too: the 4-field rebuild left them out, so ckpt=1 failed it)
    assert dataclasses.replace(work) == work


@pytest.mark.parametrize("raw", HOSTILE_VALUES)
def test_every_hostile_value_is_rejected_with_a_message(raw):
    for key in QUERY_KEYS:
        cfg, problems = parse_query({key: raw})
        assert cfg == ModelConfig() and len(problems) == 1, (key, raw)
        # The message quotes at most a short, inert excerpt of the value.
        assert len(problems[0]) < 200


# ----------------------------------------------------------------------------- CLI
OPTIONS = ["--preset", "--hf-config", "--family", "--vocab-size", "--embedding-size", "--hidden-size",
           "--num-layers", "--num-heads", "--intermediate-size", "--max-position", "--type-vocab", "--sharing",
           "--groups", "--inner-groups", "--head", "--act", "--untied", "--json", "--batch", "--seq-len",
           "--dtype", "--optimizer", "--convention", "--mlm-fraction", "--recompute", "--inference"]
WORDS = ["albert-base", "bert-base", "albert-xxlarge", "bert", "albert", "all", "none", "ffn", "attention",
         "pretraining", "masked-lm", "fp16", "int8", "sgd", "full", "0", "1", "2", "3", "7", "12", "64",
         "768", "-1", "1e9", "nan", "0.5", "99999999999999999999999", "Makefile", "tests", "", "--"]
arg = st.sampled_from(OPTIONS) | st.sampled_from(WORDS) | st.text(string.ascii_letters + string.digits + "-.", max_size=12)
argv = st.tuples(
    st.sampled_from(["presets", "params", "flops", "memory", "export-hf", "bogus"]),
    st.lists(arg, max_size=10),
).map(lambda t: [t[0], *t[1]])


@settings(max_examples=250, deadline=None)
@given(argv)
def test_cli_exits_0_or_2_never_a_traceback(args):
    pytest.importorskip("albert_core.counting.flops")
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code
    assert code in (0, 2), (args, code, err.getvalue())
    if code == 2:
        assert err.getvalue().count("\n") == 1, err.getvalue()
    else:
        assert out.getvalue()


# ----------------------------------------------------------------------------- live-model budget
def test_live_model_guard_refuses_over_budget_configs(monkeypatch):
    model = pytest.importorskip("albert_core.live.model")
    monkeypatch.setenv("ALBERT_EXPLORER_MEMORY_BUDGET", "50MB")
    huge = PRESETS["albert-xxlarge"].replace(sharing="none")  # ~ 3.5 GB of fp32 weights
    check = model.check_budget(huge)
    assert not check.ok and check.budget == 50 * 10**6 and "budget" in check.message
    with pytest.raises(ValueError, match="budget"):
        model.build_model(huge)
    tiny = ModelConfig(vocab_size=100, embedding_size=8, hidden_size=16, num_layers=2, num_heads=2,
                       intermediate_size=32, max_position_embeddings=32)
    assert model.check_budget(tiny, seq_len=32).ok
    assert sum(p.numel() for p in model.build_model(tiny, seq_len=32).parameters()) > 0
    monkeypatch.setenv("ALBERT_EXPLORER_MEMORY_BUDGET", "lots")  # a bad budget is named, not ignored
    with pytest.raises(ValueError, match="ALBERT_EXPLORER_MEMORY_BUDGET"):
        model.build_model(tiny, seq_len=32)


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(list(QUERY_KEYS)), url_value | st.integers(1, 64).map(str), max_size=8))
def test_no_url_builds_a_model_over_budget(params):
    model = pytest.importorskip("albert_core.live.model")
    budget = 8 * 10**6
    cfg, _ = parse_query(params)
    seq = min(16, cfg.max_position_embeddings)
    try:
        live = model.build_model(cfg, seq_len=seq, budget_bytes=budget)
    except ValueError as exc:
        assert "budget" in str(exc)
        return
    assert sum(p.numel() * p.element_size() for p in live.parameters()) <= budget


# ----------------------------------------------------------------------------- no code from data
UNSAFE = re.compile(r"(?<![.\w])(eval|exec)\s*\(|\bimport (pickle|marshal|shelve|dill)\b|pickle\.loads?\(")
TORCH_LOAD = re.compile(r"torch\.load\s*\(([^)]*)\)")


def test_no_code_paths_evaluate_or_unpickle_user_data():
    files = [p for d in ("albert_core", "ui") for p in (ROOT / d).rglob("*.py")]
    files += [ROOT / "app.py"]
    offenders = []
    for path in files:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.name}: {m.group(0)}" for m in UNSAFE.finditer(text)]
        offenders += [
            f"{path.name}: {m.group(0)}" for m in TORCH_LOAD.finditer(text) if "weights_only=True" not in m.group(1)
        ]
    assert not offenders, offenders


# ----------------------------------------------------------------------------- checkpoint folders
def test_checkpoint_folders_are_confined_to_the_allowed_roots(tmp_path):
    interop = pytest.importorskip("albert_core.live.interop")
    transformers = pytest.importorskip("transformers")
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    hf = transformers.AlbertConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=16)
    for folder in (allowed / "good", outside / "secret"):
        transformers.AlbertModel(hf).save_pretrained(folder)
    (allowed / "link").symlink_to(outside / "secret", target_is_directory=True)
    pickled = allowed / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((allowed / "good" / "config.json").read_text())
    (pickled / "pytorch_model.bin").write_bytes(b"not read")
    roots = [str(allowed)]
    for path, rule in [
        (outside / "secret", "outside"),
        (allowed / ".." / "outside" / "secret", "outside"),  # traversal
        (allowed / "link", "outside"),  # a symlink out of the root
        ("/etc", "outside"),
        ("/no/such/folder", "outside"),  # refused before the disk is asked: no probing for paths
        (outside / "missing", "outside"),
        (allowed / "missing", "exist"),
        ("", "outside|folder"),
        ("\x00", "exist"),
        (pickled, "safetensors"),  # pickle weights are never loaded
    ]:
        with pytest.raises(ValueError, match=rule):
            interop.load_pretrained_folder(path, allowed_roots=roots, seq_len=16)
    model = interop.load_pretrained_folder(allowed / "good", allowed_roots=roots, seq_len=16)
    assert sum(p.numel() for p in model.parameters()) == sum(
        p.numel() for p in transformers.AlbertModel(hf).parameters())


# ----------------------------------------------------------------------------- config.json (issue 39)
# Hostile config.json files through the one strict reader and everything that uses it: the library, the doctor, the
# CLI (in the test process, and as `python -m albert_core` for real) and the app (upload and paste box). Each file is a
# family's own valid file with up to four of the keys its reader uses replaced by wrong types, huge numbers (up to the
# parser's 100 digits), huge strings, long lists, deep nesting (within and beyond the parser's 16 levels), NaN and
# infinities.
def _nest(depth: int):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _family_files() -> dict[str, dict]:
    from albert_core.configuration.hf_config import config_to_hf
    from albert_core.configuration.presets import ENCODER_PRESETS

    bases = {c.family: config_to_hf(c) for c in (*PRESETS.values(), *ENCODER_PRESETS.values())}
    bases["nomic_gpt2"] = {  # NomicBERT as nomic's own class writes it (nomic-ai/nomic-bert-2048's keys)
        "model_type": "nomic_bert", "architectures": ["NomicBertForPreTraining"], "activation_function": "swiglu",
        "n_embd": 768, "n_head": 12, "n_inner": 3072, "n_layer": 12, "n_positions": 2048, "vocab_size": 30528,
        "layer_norm_epsilon": 1e-12, "rotary_emb_base": 1000, "rotary_emb_fraction": 1.0, "qkv_proj_bias": False,
        "mlp_fc1_bias": False, "mlp_fc2_bias": False, "prenorm": False, "pad_vocab_size_multiple": 64,
    }
    return bases


FAMILY_FILES = _family_files()


def _read_keys() -> list[str]:
    from albert_core.configuration.config import FAMILIES, family_of
    from albert_core.configuration.families.nomic_bert import CODE_KEYS

    return sorted({"model_type", *CODE_KEYS, *(k for f in FAMILIES for k in family_of(f).reader.schema.keys)})


READ_KEYS = _read_keys()
NAMES = set(READ_KEYS) | set(FIELDS)  # a message names a key of the file (or, past the reader, a config field)
hostile_value = st.one_of(
    json_like,
    st.integers(-(10**100) + 1, 10**100 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 300_000).map(lambda n: "x" * n),
    st.integers(0, 100_000).map(lambda n: [7] * n),
    st.integers(0, 20_000).map(lambda n: {str(i): i for i in range(n)}),
    st.integers(1, 40).map(_nest),
    st.sampled_from(["p2c|c2p", "P2C | c2p", "full_attention", "sliding_attention", "default", "yarn", "swiglu",
                     "silu", "gelu", "absolute", "layer_norm", None, True, False, 0, -1, 1, 2, 0.5, 1e308, 2**63]),
    st.dictionaries(st.sampled_from(["rope_type", "type", "rope_theta", "full_attention", "sliding_attention",
                                     "partial_rotary_factor", "factor"]), json_like, max_size=3),
)
hostile_files = st.builds(
    lambda family, changes: {**FAMILY_FILES[family], **changes},
    st.sampled_from(sorted(FAMILY_FILES)),
    st.dictionaries(st.sampled_from(READ_KEYS), hostile_value, max_size=4),
)


def _dumps(data: dict) -> bytes:
    return json.dumps(data, allow_nan=True).encode()


FILE_LEVEL = re.compile(r"(upload|config\.json|config file)\b.*(too large|not valid JSON|nested too deeply|JSON "
                        r"object|too long to be a setting)")  # what is wrong with the file as a whole


def _names_a_key(message: str) -> bool:
    return bool(FILE_LEVEL.search(message)) or any(
        re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) for name in NAMES)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_files)
def test_hostile_config_json_through_the_reader_and_the_doctor(data):
    from albert_core.configuration.hf_config import config_from_json_bytes, parse_config_json
    from albert_core.review.doctor import diagnose

    raw = _dumps(data)
    tracemalloc.start()
    try:
        with contextlib.suppress(ValueError):
            parse_config_json(raw)
        _, parse_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        try:
            assert_valid(config_from_json_bytes(raw, "upload"))
        except ValueError as exc:
            assert _names_a_key(str(exc)) and len(str(exc)) < 600, str(exc)
        try:
            result = diagnose(raw)
        except ValueError as exc:  # only a file that is no config of a family read here
            assert "model_type" in str(exc) or "config.json" in str(exc), str(exc)
        else:
            assert all(f.severity in ("error", "warning", "info") for f in result.findings)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - parse_peak < 4 * 2**20, (peak, parse_peak)  # a few MB above the parse, whatever the file holds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_files)
def test_hostile_config_json_through_the_cli(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_bytes(_dumps(data))
    for args in (["params", "--hf-config", str(path)], ["doctor", str(path)]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:
                code = exc.code
        assert code in (0, 2), (args, code, err.getvalue()[-2000:])
        if code == 2:
            assert err.getvalue().count("\n") == 1 and _names_a_key(err.getvalue()), err.getvalue()[:600]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_files)
def test_hostile_config_json_through_python_m_albert_core(tmp_path, data):
    """The real entry point, in its own process: exit 0 or 2, one line on stderr, never a traceback."""
    import subprocess
    import sys

    path = tmp_path / "config.json"
    path.write_bytes(_dumps(data))
    for args in (["params", "--hf-config", str(path)], ["doctor", str(path)]):
        done = subprocess.run([sys.executable, "-m", "albert_core", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert done.returncode in (0, 2) and "Traceback" not in done.stderr, (args, done.stderr[-2000:])
        if done.returncode == 2:
            assert done.stderr.count("\n") == 1 and _names_a_key(done.stderr), done.stderr[:600]


@pytest.fixture(scope="module")
def explorer():
    """One AppTest of the app on the Explorer page, shared by the examples (a fresh one costs seconds)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    return at


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_files)
def test_hostile_config_json_through_the_upload_and_the_paste_box(explorer, data):
    from ui.explorer.review import MAX_PASTE_CHARS

    at, raw = explorer, _dumps(data)
    at.file_uploader(key="sb_upload").set_value(("config.json", raw, "application/json")).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [e.value.replace("\\", "") for e in at.sidebar.error] + [
        c.value.replace("\\", "") for c in at.sidebar.caption if "Loaded config.json" in c.value.replace("\\", "")]
    assert said and all("Loaded config.json" in s or ("Not loaded" in s and _names_a_key(s)) for s in said), said
    text = raw.decode()[:MAX_PASTE_CHARS]  # what the box holds at most (Streamlit cuts a longer value)
    at.text_area(key="doctor_paste").input(text).run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_area(key="doctor_paste").input("").run()
    at.file_uploader(key="sb_upload").set_value(None).run()
