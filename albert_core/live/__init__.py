"""The live PyTorch model: the encoder for any config (model), its fused CPU path (fastpath), the memory
budget every build is checked against first (budget), transformers interop (interop), the pre-training losses
(losses), and what a built model shows: timings, attention, layer-to-layer smoothness (analysis)."""
