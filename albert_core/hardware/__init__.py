"""Hardware: the chip profiles and this machine's measured kernels (profiles), the time model that turns
FLOPs and bytes into seconds (time_model), and the measured DDP gradient traffic (allreduce)."""
