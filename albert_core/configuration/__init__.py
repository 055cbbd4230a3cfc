"""Configuration: the one `ModelConfig` (config), the coerce rule that turns any partial request into a valid
config (coerce), the named presets, the training workload (batch, sequence, dtype, optimizer), and the codec
to transformers' config.json (hf_config). Imports nothing else from the package."""
