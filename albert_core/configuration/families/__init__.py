"""The records of the families shipped (`albert_core.configuration.family.Family`), one module each, in the order
they are registered (`albert_core.configuration` registers them when it loads): BERT and ALBERT, the paper's two,
then the encoders designed since. A new family is a module here and one entry in `SHIPPED` (docs/architecture.md,
"Adding a family")."""

from albert_core.configuration.families import (
           albert,
           bert,
           deberta,
           electra,
           eurobert,
           modernbert,
           nomic_bert,
           roberta,
)

SHIPPED = (albert.FAMILY, bert.FAMILY, roberta.ROBERTA, roberta.XLM_ROBERTA, electra.FAMILY, deberta.FAMILY,
           modernbert.FAMILY, eurobert.FAMILY, nomic_bert.FAMILY)
