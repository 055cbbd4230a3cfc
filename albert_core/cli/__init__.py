"""The command line (`albert-explorer`, `python -m albert_core`): the shared options and tables (args), the
counting commands (main), and one module per further command family (train_cmd, time_cmd, review_cmd, and
allreduce_cmd for torchrun)."""
