"""The counter-audit tests' tiny config (keyword arguments of ModelConfig): every counting tool runs on it in
milliseconds."""

TINY = dict(
    vocab_size=50,
    embedding_size=8,
    hidden_size=16,
    num_layers=4,
    num_heads=2,
    intermediate_size=24,
    max_position_embeddings=32,
)


def family_tiny(name: str, **changes):
    """A preset of an encoder after BERT at TINY's sizes (its own layout kept: E = H unless the family projects, a
    local window of 4 tokens where it has local attention, DeBERTa's relative table at 8 buckets a side)."""
    from albert_core.configuration.presets import ENCODER_PRESETS

    cfg = ENCODER_PRESETS[name]
    sizes = dict(TINY)
    if not cfg.is_factorized:
        sizes["embedding_size"] = sizes["hidden_size"]
    if cfg.local_window:
        sizes["local_window"] = 4
    if cfg.position == "relative":
        sizes["position_buckets"] = 8
    return cfg.replace(**{**sizes, **changes})
