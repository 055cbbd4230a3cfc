"""Design-review tools: the audit of this package's counts against other counters and transformers (audit),
and the config doctor that reads a config.json and names its traps (doctor)."""
