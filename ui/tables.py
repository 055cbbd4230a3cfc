"""Tables sent to `st.dataframe` as Arrow tables.

`st.dataframe` converts a pandas frame to an Arrow table on every call (with `pyarrow.Table.from_pandas`, which is
what Streamlit runs); a table whose content does not change between
reruns is converted once and the Arrow table is sent as it is. The index is left out: every table here is shown
without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import pyarrow as pa


def arrow(df: pd.DataFrame) -> pa.Table:
    """``df`` as the Arrow table `st.dataframe` would make of it, without its index."""
    return pa.Table.from_pandas(df, preserve_index=False)


def columns(cols: Mapping[str, Sequence]) -> pa.Table:
    """A table of plain columns (lists, one per name) straight to Arrow: for a table rebuilt on every rerun,
    no DataFrame in between (a small frame's construction cost more than the rest of its table)."""
    return pa.table(dict(cols))
