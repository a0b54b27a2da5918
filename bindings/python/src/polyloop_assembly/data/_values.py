"""Column values as Python values for the data-set adapters (``data``, ``data._run_rows``): a column of any
batch form as a list, and a request read from Arrow with its null keys absent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List


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


def _frame_append(frame: Any, cols: Dict[str, List[Any]], schema: Any) -> Any:
    """``frame`` (changed in place) with the added columns, Arrow-typed by ``schema`` (``pandas.ArrowDtype``)."""
    import pandas as pd  # type: ignore[import-not-found, import-untyped, unused-ignore]
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    for field in schema:
        frame[field.name] = pd.Series(
            pa.array(cols[field.name], type=field.type), index=frame.index, dtype=pd.ArrowDtype(field.type)
        )
    return frame


def _with_columns(batch: Any, cols: Dict[str, List[Any]], schema: Any) -> Any:
    """Any batch form with ``cols`` added, typed by ``schema``: a Table for a Table, a ``datasets`` batch
    (its features kept), NumPy or lists; a DataFrame for a DataFrame."""
    if hasattr(batch, "column_names") and hasattr(batch, "append_column"):  # a pyarrow.Table
        return _append(batch, cols, schema)
    if hasattr(batch, "iloc") and hasattr(batch, "columns"):  # a pandas.DataFrame
        return _frame_append(batch.copy(), cols, schema)
    if _is_hf_batch(batch):
        return _hf_table(batch, [], cols, schema)
    if any(_is_ndarray(v) for v in batch.values()):  # Ray "numpy": a typed Table
        return _append(_numpy_table(dict(batch)), cols, schema)
    return _typed(dict(batch), cols, schema)


def _append(table: Any, cols: Dict[str, List[Any]], schema: Any) -> Any:
    """``table`` with the rendered columns appended, typed by ``schema``."""
    import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

    arrays = [pa.array(cols[field.name], type=field.type) for field in schema]
    if table.num_columns == 0:  # nothing kept: the rendered columns alone
        return pa.Table.from_arrays(arrays, schema=schema)
    for field, array in zip(schema, arrays):
        table = table.append_column(field, array)
    return table


def _is_hf_batch(batch: Any) -> bool:
    return type(batch).__name__ == "LazyBatch" and hasattr(batch, "pa_table")


def _hf_table(batch: Any, dropped: List[Any], cols: Dict[str, List[Any]], schema: Any) -> Any:
    """A ``datasets`` batch's own Arrow columns (less ``dropped``) with ``cols`` appended, typed by
    ``schema``; the schema's metadata holds the features of both, as ``datasets`` stores them, so a
    feature Arrow stores in another type (``Json``, ``Image``) stays what it was."""
    import datasets  # type: ignore[import-not-found, import-untyped, unused-ignore]

    table = batch.pa_table.drop_columns([c for c in dropped if c in batch.pa_table.column_names])
    out = _append(table, cols, schema)
    given = getattr(batch.formatter, "features", None)
    if given is None:
        return out
    features = datasets.Features({k: v for k, v in given.items() if k in table.column_names})
    features.update(datasets.Features.from_arrow_schema(schema))
    return out.replace_schema_metadata(features.arrow_schema.metadata)


def _typed(out: Dict[str, Any], cols: Dict[str, List[Any]], schema: Any) -> Any:
    """A batch of lists as a Table, the added columns typed by ``schema``; the batch as lists when pyarrow is
    missing or the kept columns are not Arrow data (mixed types: a list and a dict in one column)."""
    try:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        table = pa.table(out) if out else pa.table({})
    except (ImportError, TypeError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return dict(out, **cols)
    return _append(table, cols, schema)


def _numpy_table(batch: Dict[str, Any]) -> Any:
    """A NumPy batch as Ray turns it into a block (its tensor columns
    included), or as pyarrow does without Ray."""
    try:
        from ray.data.block import BlockAccessor, BlockType  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return BlockAccessor.batch_to_block(batch, block_type=BlockType.ARROW)
    except ImportError:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return pa.table(batch)
