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
