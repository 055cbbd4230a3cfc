"""Helpers shared by the tests (no fixtures: those live in tests/conftest.py).

facts: the independent reference figures (transformers' exact counts, the paper's figures and shapes, the
    published configs, closed forms).
app: `charts`, the Plotly specs an AppTest page sent, by title.
cli: `run`, `run_json`, `fails`: `python -m albert_core` in the test process.
audit: the counter-audit tests' tiny config.
lab: the tiny lab model and runs (`TINY`, `V`, `tiny_spec`) and `CountingTrain`.
hf_models: transformers' model of a config (`hf_model`), the oracle of the counting and model tests.
checkpointing: gradient checkpointing of every encoder layer of a transformers model.
strategies: Hypothesis strategies (`configs`).
ddp_worker, lab_ddp_worker: scripts torchrun runs as modules (`-m tests.helpers.ddp_worker`).
"""
