"""Usage reconciled as data-set columns on the engines (issue 35, item 3): ``CacheRows`` on ``datasets``
(a first batch of error rows only, ``batch_size=1``, ``num_proc=2``, no ``features=``) and on Ray (every
``batch_format``, one run per batch), the rows of the independent oracle of ``tests/test_data_usage_rows.py`` and
one schema in every Parquet file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from polyloop_assembly import data

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))
from test_data_usage_rows import CALLS, comparable, oracle, planted_calls  # noqa: E402
from test_lines_typed import _one_schema  # noqa: E402

# Two runs a process: with num_proc=2 the shards (contiguous halves) hold whole runs.
CALLS_SET = planted_calls(4, whole=False)


def _columns(calls: List[Any]) -> Dict[str, List[Any]]:
    return {"run_id": [c[0] for c in calls], "request": [c[1] for c in calls], "usage": [c[2] for c in calls]}


def _rows(table: Any, n: int) -> List[Dict[str, Any]]:
    return [{k: table[k][i] for k in ("run_id", *data.CACHE_COLUMNS)} for i in range(n)]


@pytest.mark.parametrize("num_proc,batch_size", [(1, 1), (1, 7), (2, 1), (2, 1000)])
def test_datasets_rows_are_the_oracle_s(tmp_path: Path, num_proc: int, batch_size: int) -> None:
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict(_columns(CALLS_SET))
    adapter = data.CacheRows(usage="usage")
    out = ds.map(adapter, batched=True, batch_size=batch_size, num_proc=num_proc, with_indices=True)
    assert comparable(_rows(out, len(CALLS_SET))) == comparable(oracle(CALLS_SET))
    assert out.features == adapter.features(ds.features)
    table = _one_schema(tmp_path, out, "p", data.cache_arrow_schema())
    assert table.column("break_cause").to_pylist() == out["break_cause"]


@pytest.mark.parametrize("num_proc", [1, 2])
def test_datasets_first_batch_of_errors_maps_without_features(tmp_path: Path, num_proc: int) -> None:
    """A run of 8 invalid requests, then a valid one of 8 calls, batch_size=4, no features=: the map runs,
    every batch typed as cache_arrow_schema, in Parquet too; and a data set of errors only."""
    datasets = pytest.importorskip("datasets")
    bad = json.dumps({"observation_template": "no placeholder"})
    calls = [("bad", bad, None)] * 8 + [("good", request, usage) for _, request, usage in CALLS_SET[:8]]
    ds = datasets.Dataset.from_dict(_columns(calls))
    out = ds.map(data.CacheRows(usage="usage"), batched=True, batch_size=4, num_proc=num_proc, with_indices=True)
    assert out["error_code"] == ["invalid_template"] * 8 + [None] * 8
    assert out["call_index"] == list(range(8)) * 2 and out["usage_class"][8:10] == ["first", "hit"]
    _one_schema(tmp_path, out, "p", data.cache_arrow_schema())
    errors = datasets.Dataset.from_dict(_columns(calls[:8])).map(
        data.CacheRows(), batched=True, batch_size=1, num_proc=num_proc, with_indices=True
    )
    assert errors["error_code"] == ["invalid_template"] * 8 and errors["extends"] == [None] * 8


def test_datasets_tokenizer_column(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    calls = CALLS_SET[: 2 * CALLS]
    out = datasets.Dataset.from_dict(_columns(calls)).map(
        data.CacheRows(usage="usage", tokenizer=str.split), batched=True, with_indices=True
    )
    want = list(data.cache_rows(calls, tokenizer=str.split))
    assert out["cacheable_prefix_tokens"] == [r["cacheable_prefix_tokens"] for r in want]
    assert (
        out.data.schema.field("cacheable_prefix_tokens").type
        == data.cache_arrow_schema(tokenizer=True).field("cacheable_prefix_tokens").type
    )


def _ray_check(out: Any, calls: List[Any], tmp_path: Path) -> None:
    """The Parquet files of one schema for the added columns, read back: the oracle's rows."""
    import pyarrow.parquet as pq

    out.write_parquet(str(tmp_path / "p"))
    files = sorted((tmp_path / "p").glob("*.parquet"))
    assert len({str(pq.read_schema(str(f)).remove_metadata()) for f in files}) == 1
    back = pq.read_table(str(tmp_path / "p"))
    assert back.select(list(data.CACHE_COLUMNS)).schema == data.cache_arrow_schema()
    got = sorted(_rows(back.to_pydict(), back.num_rows), key=lambda r: (r["run_id"], r["call_index"]))
    assert comparable(got) == comparable(oracle(calls))


def _ray_table(calls: List[Any], json_usage: bool) -> Any:
    """The calls, last first, with a step column; the usage as structs of one type, or as JSON text."""
    import pyarrow

    cols = dict(_columns(calls), step=[i % CALLS for i in range(len(calls))])
    if json_usage:
        cols["usage"] = [None if u is None else json.dumps(u) for u in cols["usage"]]
    return pyarrow.table({k: v[::-1] for k, v in cols.items()})


@pytest.mark.parametrize("batch_format", ["default", "numpy", "pandas", "pyarrow"])
def test_ray_batch_formats_rows_are_the_oracle_s(batch_format: str, ray_local: Any, tmp_path: Path) -> None:
    """Every batch_format, a batch of three whole runs in no order (put in call order by the step column).
    On NumPy batches Ray infers a struct column again from dicts (and fails to join the batches' types):
    the usage there is JSON text."""
    calls = CALLS_SET[: 3 * CALLS]
    table = _ray_table(calls, json_usage=batch_format in ("default", "numpy"))
    out = ray_local.data.from_arrow(table).map_batches(
        data.CacheRows, fn_constructor_kwargs={"usage": "usage", "call": "step"}, batch_format=batch_format, batch_size=None
    )
    _ray_check(out, calls, tmp_path)


def test_ray_map_groups_one_run_a_batch(ray_local: Any, tmp_path: Path) -> None:
    """The documented recipe: groupby run id, map_groups, the step column for the order."""
    calls = CALLS_SET[: 3 * CALLS]
    out = (
        ray_local.data.from_arrow(_ray_table(calls, json_usage=False))
        .groupby("run_id", num_partitions=2)
        .map_groups(data.CacheRows, fn_constructor_kwargs={"usage": "usage", "call": "step"}, batch_format="pyarrow")
    )
    _ray_check(out, calls, tmp_path)


def test_datasets_map_without_indices_is_refused() -> None:
    """The same CacheRows mapped twice without indices carried the first map's runs on (call_index 3, 4, 5
    and a break that is not in the data); a datasets map now needs with_indices=True, and with it a second
    map starts afresh."""
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict(_columns(CALLS_SET[:3]))
    adapter = data.CacheRows(usage="usage")
    with pytest.raises(TypeError, match="with_indices=True"):
        ds.map(adapter, batched=True, load_from_cache_file=False)
    first = ds.map(adapter, batched=True, with_indices=True, load_from_cache_file=False)
    again = ds.map(adapter, batched=True, with_indices=True, load_from_cache_file=False)
    assert again["call_index"] == first["call_index"] == [0, 1, 2]
    assert again["break_cause"] == first["break_cause"]
