"""Pure helpers of the Train page: run ids in the URL, number lists, twins' specs, the runs table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from albert_core.lab.spec import RunSpec
from tests.helpers.lab import TINY
from ui.train import runs as tr


def test_run_ids_from_the_url_keep_valid_hashes_only():
    ids, problems = tr.parse_run_ids("abc123abc123,<script>,abc123abc123,,0123456789abcdef0123")
    assert ids == ["abc123abc123", "0123456789abcdef0123"]  # duplicates once, order kept
    assert problems == ["URL value run='<script>' is not a run id"]
    assert tr.parse_run_ids(None) == ([], [])
    many = ",".join(f"{i:012x}" for i in range(40))
    assert len(tr.parse_run_ids(many)[0]) == tr.MAX_URL_RUNS
    assert tr.format_run_ids(["a" * 12, "b" * 12, "a" * 12]) == "a" * 12 + "," + "b" * 12


def test_parse_ints_names_the_field_and_the_rule():
    assert tr.parse_seeds("0, 1 2,1") == [0, 1, 2]
    with pytest.raises(ValueError, match="seeds must be whole numbers"):
        tr.parse_seeds("0, x")
    with pytest.raises(ValueError, match="seeds: at most 5"):
        tr.parse_seeds("1 2 3 4 5 6")
    for other_digits in ("\u0663", "\u00b2", "1, \uff12"):  # Arabic-Indic three, superscript two, fullwidth two
        with pytest.raises(ValueError, match="seeds must be whole numbers"):
            tr.parse_seeds(other_digits)
    with pytest.raises(ValueError, match="E values must be between 1 and 128, got 500"):
        tr.parse_ints("16, 500", "E values", lo=1, hi=128)


def test_twin_specs_share_one_pipeline_and_differ_in_architecture():
    specs = tr.twin_specs(TINY, tr.TWINS, task="nsp", steps=30, seeds=[0, 1], batch_size=4, seq_len=32)
    assert [(s.label, s.seed) for s in specs] == [(n, seed) for n in tr.TWINS for seed in (0, 1)]
    assert {(s.tokenizer_kind, s.ngram, s.task, s.steps) for s in specs} == {("unigram", 3, "nsp", 30)}
    by = {s.label: s.config for s in specs}
    assert by["BERT"].family == "bert" and by["BERT"].embedding_size == TINY.hidden_size
    assert by["factorized only"].sharing == "none" and by["factorized only"].embedding_size < TINY.hidden_size
    assert by["shared only"].sharing == "all" and by["shared only"].embedding_size == TINY.hidden_size
    assert by["ALBERT"] == TINY
    with pytest.raises(ValueError, match="twins must be among"):
        tr.twin_specs(TINY, ["GPT"], task="sop", steps=10, seeds=[0], batch_size=4, seq_len=32)


def test_custom_specs_one_run_per_embedding_size_and_seed():
    specs = tr.custom_specs(TINY, sharing="attention", groups=2, inner=1, embedding_sizes=[8, 32], task="sop",
                            steps=20, seeds=[3], batch_size=4, seq_len=32)
    assert [s.label for s in specs] == ["E=8 shared-attention G=2", "E=32 shared-attention G=2"]
    assert [s.config.embedding_size for s in specs] == [8, 32]
    assert all(s.config.num_hidden_groups == 2 and s.seed == 3 for s in specs)


def _history(step_s: float, steps: int = 10) -> pd.DataFrame:
    step = np.arange(0, steps + 1)
    return pd.DataFrame({
        "step": step, "tokens": step * 128, "elapsed_s": 0.5 + step * step_s, "lr": 1e-3,
        "train_mlm_loss": np.where(step > 0, 6.0 - step * 0.1, np.nan), "train_order_loss": 0.69,
        "val_mlm_loss": np.where(step % 5 == 0, 6.1 - step * 0.1, np.nan),
        "val_mlm_acc": np.where(step % 5 == 0, step / 100, np.nan), "val_order_acc": np.nan,
        "tokens_per_s": 128 / step_s, "val_order_ones": np.nan,
    })


def test_runs_table_shows_final_numbers_or_the_latest_of_a_running_run():
    spec = RunSpec(TINY, task="none", steps=10, batch_size=4, seq_len=32, seed=7, warmup=2, label="mine")
    done = tr.RunRow("a" * 20, "mine", spec, "done", _history(0.02),
                     {"train_mlm_loss": 5.0, "val_mlm_loss": 5.1, "val_mlm_acc": 0.1, "val_order_acc": math.nan,
                      "tokens": 1280, "seconds": 1.0, "steps": 10}, 1234, 5678)
    running = tr.RunRow("b" * 20, "mine", spec, "running", _history(0.04).iloc[:8], {}, 1234, 5678)
    df = tr.runs_frame([done, running])
    assert list(df.columns) == tr.RUNS_COLUMNS
    first, second = df.to_dict("records")
    assert first["val_mlm_loss"] == 5.1 and first["steps"] == 10 and first["seed"] == 7
    assert first["step_ms"] == pytest.approx(20.0)  # 0.02 s between consecutive logged steps
    # a running run: the last logged training loss (step 7) and the last evaluation (step 5)
    assert second["train_mlm_loss"] == pytest.approx(6.0 - 0.7) and second["val_mlm_loss"] == pytest.approx(5.6)
    assert second["steps"] == 7 and second["tokens"] == 7 * 128 and second["state"] == "running"
    assert second["step_ms"] == pytest.approx(40.0)
    assert math.isnan(tr.measured_step_ms(_history(0.02).iloc[:2]))  # one training row: no step time yet
    assert list(tr.groups_of([done, running])) == ["mine"] and len(tr.groups_of([done, running])["mine"]) == 2
    # the best evaluation as well as the last; FLOPs in the app's one format
    evals = _history(0.02).dropna(subset=["val_mlm_loss"])
    assert first["best_val_mlm_loss"] == evals["val_mlm_loss"].min()
    assert first["flops_per_step"] == "5.7 kFLOP"
    assert list(df.columns[:4]) == ["run", "seed", "state", "val_mlm_loss"]  # results before cost


def test_only_the_columns_that_differ_keep_the_key_results():
    df = pd.DataFrame({"run": ["a", "b"], "seed": [0, 0], "state": ["done", "done"], "val_mlm_loss": [5.0, 5.0],
                       "vs_frequency": ["0.40 nat below"] * 2, "mlm_verdict": ["x", "x"], "lr": [1e-3, 3e-3],
                       "steps": [100, 100], "frequency_loss": [math.nan, math.nan], "E": [16, math.nan]})
    assert tr.differing_columns(df) == ["run", "seed", "state", "val_mlm_loss", "vs_frequency", "mlm_verdict",
                                        "lr", "E"]


def test_runs_table_and_summary_put_every_result_beside_its_baselines():
    from albert_core.lab.baselines import Baselines

    base = Baselines(frequency_loss=6.0, frequency_acc=0.05, neighbour_loss=5.25, neighbour_acc=0.13, masked=100,
                     order_majority=0.5, pairs=400)
    spec = RunSpec(TINY, task="sop", steps=10, batch_size=4, seq_len=32, seed=0, warmup=2, label="ALBERT")
    final = {"val_mlm_loss": 5.55, "val_order_acc": 0.62, "val_order_ones": 0.4, "steps": 10}
    learned = tr.RunRow("a" * 20, "ALBERT", spec, "done", _history(0.02), final, 1, 1, base)
    flat = tr.RunRow("b" * 20, "ALBERT", spec.replace(seed=1), "done", _history(0.02),
                     {**final, "val_mlm_loss": 5.98, "val_order_acc": 0.5, "val_order_ones": 1.0}, 1, 1, base)
    a, b = tr.runs_frame([learned, flat]).to_dict("records")
    assert a["frequency_loss"] == 6.0 and a["neighbour_loss"] == 5.25 and a["frequency_acc"] == 0.05
    # 5.55 is 0.45 below the frequency-only model but 0.30 above the neighbour model (5.25)
    assert a["below_frequency"] == pytest.approx(0.45) and a["vs_frequency"] == "0.45 nat below"
    assert a["mlm_verdict"] == "learned some context, short of the neighbour model"
    assert a["order_verdict"] == "learned"  # 62 % with both answers, majority 50 %
    assert b["below_frequency"] == pytest.approx(0.02) and b["mlm_verdict"] == "frequencies only"
    assert b["order_verdict"] == "not learned"  # one answer for every pair
    (line,) = tr.learning_summary([learned, flat])
    assert line == ("ALBERT: 0.02-0.45 nat below the frequency-only model (frequencies only, learned some context, "
                    "short of the neighbour model); SOP learned / not learned")
    unknown = tr.runs_frame([tr.RunRow("c" * 20, "x", spec, "running", _history(0.02), {}, 1, 1)]).iloc[0]
    assert math.isnan(unknown["below_frequency"]) and unknown["mlm_verdict"] == "" and unknown["vs_frequency"] == ""


def test_a_loss_above_the_frequency_only_model_is_said_above_not_minus_below():
    """Issue #34: "-0.18 nats below" read as a double negative; the direction comes from the sign."""
    from albert_core.lab.baselines import Baselines

    base = Baselines(frequency_loss=6.0, frequency_acc=0.05, neighbour_loss=5.25, neighbour_acc=0.13, masked=100)
    spec = RunSpec(TINY, task="none", steps=10, batch_size=4, seq_len=32, seed=0, warmup=2, label="BERT")
    rows = [tr.RunRow(f"{i}" * 20, "BERT", spec.replace(seed=i), "done", _history(0.02),
                      {"val_mlm_loss": loss, "steps": 10}, 1, 1, base) for i, loss in enumerate((6.18, 6.03))]
    (line,) = tr.learning_summary(rows[:1])
    assert line == "BERT: 0.18 nat above the frequency-only model (not yet at the frequency level)"
    assert tr.runs_frame(rows[:1]).iloc[0]["vs_frequency"] == "0.18 nat above"
    (line,) = tr.learning_summary(rows)
    assert line.startswith("BERT: 0.03-0.18 nat above the frequency-only model")
    below = tr.RunRow("9" * 20, "BERT", spec.replace(seed=9), "done", _history(0.02),
                      {"val_mlm_loss": 5.1, "steps": 10}, 1, 1, base)  # 0.15 under the neighbour model too
    (line,) = tr.learning_summary([rows[0], below])
    assert line.startswith("BERT: from 0.18 nat above to 0.90 nat below the frequency-only model")
    assert "learned context, beyond the neighbour model" in line


def test_the_runs_csv_holds_numbers_with_the_unit_in_the_column_name():
    """Issue #34: the runs table's CSV held '768.0 MFLOP' strings; a spreadsheet or pandas gets numbers."""
    import io

    from albert_core import count_flops
    from albert_core.lab.baselines import Baselines

    base = Baselines(frequency_loss=6.0, frequency_acc=0.05, neighbour_loss=5.25, neighbour_acc=0.13, masked=100)
    spec = RunSpec(TINY, task="sop", steps=10, batch_size=4, seq_len=32, seed=0, warmup=2, label="ALBERT")
    flops = count_flops(TINY, 4, 32).training
    row = tr.RunRow("a" * 20, "ALBERT", spec, "done", _history(0.02),
                    {"val_mlm_loss": 6.18, "val_order_acc": 0.5, "val_order_ones": 0.5, "steps": 10}, 1, flops, base)
    csv = pd.read_csv(io.StringIO(tr.runs_csv(tr.runs_frame([row]))))
    text = {"run", "state", "mlm_verdict", "order_verdict", "config", "task", "run_id"}
    assert all(pd.api.types.is_numeric_dtype(csv[c]) for c in csv.columns if c not in text), csv.dtypes
    assert not any("FLOP" in str(v) or "nat" in str(v) for c in text for v in csv[c])
    assert csv["training_flop_per_step"].iloc[0] == flops
    assert csv["below_frequency_nats"].iloc[0] == pytest.approx(-0.18)
    assert csv["val_mlm_loss_nats"].iloc[0] == pytest.approx(6.18) and csv["frequency_loss_nats"].iloc[0] == 6.0


def test_the_owner_cookie_takes_only_a_fresh_random_secret():
    """The cookie's value comes from the browser: only the form `new_secret` makes is ever used or written."""
    from ui import owner

    a, b = owner.new_secret(), owner.new_secret()
    assert a != b and owner.parse_secret(a) == a and len(a) == 43
    assert owner.parse_secret(a + "=") is None and owner.parse_secret(a[:-1] + "/") is None
    assert owner.parse_secret(None) is None and owner.parse_secret(["Q" * 43]) is None
    with pytest.raises(ValueError, match="owner secret"):
        owner.cookie_script('x"; document.location = "//elsewhere"; "')
    assert f'albert_lab_owner={a}; Path=/; Max-Age=' in owner.cookie_script(a)
