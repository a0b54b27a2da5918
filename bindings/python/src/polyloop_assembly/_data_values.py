"""Column values as Python values for the data-set adapters (``data``, ``_data_runs``): a column of any
batch form as a list, and a request read from Arrow with its null keys absent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, List


def _values(column: Any) -> List[Any]:
    if type(getattr(column, "dtype", None)).__name__ == "ArrowDtype":  # Ray's pandas: Arrow-backed, nulls kept
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return list(pa.array(column).to_pylist())
    tolist = getattr(column, "tolist", None)  # a NumPy array, a pandas Series: plain Python values
    if callable(tolist):
        return list(tolist())
    to_pylist = getattr(column, "to_pylist", None)  # an Arrow array
    return list(to_pylist()) if callable(to_pylist) else list(column)


def _is_ndarray(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "ndim")


def _absent(value: Any) -> Any:
    """``value`` with every null-valued key of its maps dropped (NumPy
    arrays of Ray's "numpy" batches as lists); list elements are kept, a
    null element is the wire's nil."""
    if isinstance(value, Mapping):
        return {k: _absent(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_absent(v) for v in value]
    if _is_ndarray(value):
        return [_absent(v) for v in value.tolist()]
    return value
