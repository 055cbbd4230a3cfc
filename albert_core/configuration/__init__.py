"""Configuration: the one `ModelConfig` (config), each family's record (family; the shipped ones in families,
registered here as the package loads, so that every config can name them), the coerce rule that turns any partial
request into a valid config (coerce), the named presets, the training workload (batch, sequence, dtype,
optimizer), and the codec to transformers' config.json (hf_config, hf_schema). Imports nothing else from the
package."""

from albert_core.configuration.config import register_family
from albert_core.configuration.families import SHIPPED

for _record in SHIPPED:
    register_family(_record)
