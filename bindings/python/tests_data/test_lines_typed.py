"""Issue 34 on the engines: lines are lines on Ray and ``datasets`` (the same rows, count and ids as the
serial way), and typed output whatever a batch holds (a first batch of error rows only, an all-error data
set, ``batch_size=1``, ``num_proc=2``, every Ray ``batch_format``; ``CompareRecorded`` likewise), with one
schema in every Parquet file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import polyloop_assembly as pa
from polyloop_assembly import data

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "examples" / "datasets"))
sys.path.insert(0, str(HERE.parent / "tests"))
import render  # noqa: E402
from test_data_lines import serial_rows, tricky_lines  # noqa: E402

T = "Observation: {observation}"


@pytest.fixture()
def tricky(tmp_path: Path) -> Path:
    p = tmp_path / "tricky.jsonl"
    p.write_bytes("".join(line + "\n" for line, _ in tricky_lines()).encode("utf-8"))
    return p


def _want(path: Path) -> Dict[str, List[Any]]:
    ids, cols = serial_rows(path)
    assert len(ids) == len(tricky_lines())
    return {"line": ids, "text": [line for line, _ in tricky_lines()], **cols}


def test_ray_pipeline_rows_are_the_lines(tricky: Path, ray_local: Any) -> None:
    """The example's (and README's) Ray lines: one row per "\\n" line, numbered, as the serial way."""
    want = _want(tricky)
    rows = render.ray_pipeline(str(tricky), concurrency=2, response=True).take_all()
    for col in ("line", "text", *data.COLUMNS):
        assert [r[col] for r in rows] == want[col], col


def test_datasets_pipeline_rows_are_the_lines(tricky: Path, tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    want = _want(tricky)
    for num_proc in (1, 2):
        out = render.hf_pipeline(str(tricky), num_proc=num_proc, cache_dir=str(tmp_path / "hf"), response=True)
        for col in ("line", "text", *data.COLUMNS):
            assert out[col] == want[col], (num_proc, col)


def _dataset(tmp_path: Path, texts: List[str]) -> Any:
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_dict({"line": list(range(1, len(texts) + 1)), "text": texts})


NO_OBSERVATION = [json.dumps({"observation_template": "no placeholder %d" % i}) for i in range(8)]
VALID = [json.dumps({"steps": [{"raw_output": "r%d" % i, "observation": "o"}], "observation_template": T}) for i in range(8)]


def _one_schema(tmp_path: Path, out: Any, name: str, schema: Any) -> Any:
    import pyarrow.parquet as pq

    d = tmp_path / name
    d.mkdir()
    for k in range(2):
        out.shard(2, k, contiguous=True).to_parquet(str(d / ("%d.parquet" % k)))
    schemas = {str(pq.read_schema(str(f))) for f in sorted(d.glob("*.parquet"))}
    assert len(schemas) == 1, schemas
    table = pq.read_table(str(d))
    assert [table.schema.field(f.name).type for f in schema] == [f.type for f in schema]
    return table


@pytest.mark.parametrize("num_proc", [1, 2])
def test_datasets_first_batch_of_errors_maps_without_features(tmp_path: Path, num_proc: int) -> None:
    """The issue's repro: 8 requests whose template has no {observation}, then 8 valid, batch_size=4, no
    features= given: the map runs, every batch typed as arrow_schema, in Parquet too."""
    ds = _dataset(tmp_path, NO_OBSERVATION + VALID)
    out = ds.map(data.RenderBatch(column="text"), batched=True, batch_size=4, num_proc=num_proc)  # no features=
    assert out["ok"] == [False] * 8 + [True] * 8 and out["line"] == list(range(1, 17))
    assert set(out["error_code"][:8]) == {"invalid_template"}
    table = _one_schema(tmp_path, out, "p", data.arrow_schema())
    assert table.column("ok").to_pylist() == out["ok"]


@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("num_proc", [1, 2])
def test_datasets_all_error_data_set(tmp_path: Path, num_proc: int, batch_size: int) -> None:
    ds = _dataset(tmp_path, NO_OBSERVATION + ["{", "", "[]"])
    render_batch = data.RenderBatch(column="text", response=True)
    out = ds.map(render_batch, batched=True, batch_size=batch_size, num_proc=num_proc)
    assert out["ok"] == [False] * 11
    assert out.features == render_batch.features(ds.features)  # what features= would have said
    _one_schema(tmp_path, out, "p", data.arrow_schema(response=True))


@pytest.mark.parametrize("batch_format", ["default", "numpy", "pandas", "pyarrow"])
def test_ray_all_error_data_set_one_schema(batch_format: str, ray_local: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    ray = ray_local
    lines = NO_OBSERVATION + ["{", "[]"]
    out = ray.data.from_items([{"text": t} for t in lines], override_num_blocks=2).map_batches(
        data.RenderBatch, fn_constructor_kwargs={"column": "text"}, batch_format=batch_format, batch_size=3
    )
    out.write_parquet(str(tmp_path / "p"))
    files = sorted((tmp_path / "p").glob("*.parquet"))
    assert len({str(pq.read_schema(str(f))) for f in files}) == 1
    back = pq.read_table(str(tmp_path / "p"))
    assert back.column("ok").to_pylist() == [False] * len(lines)
    assert [back.schema.field(f.name).type for f in data.arrow_schema()] == [f.type for f in data.arrow_schema()]


def _recorded_set(n_same: int) -> Dict[str, List[Any]]:
    reqs = [{"steps": [{"raw_output": "r%d" % i, "observation": "o"}], "observation_template": T} for i in range(n_same + 1)]
    recorded = [json.dumps(pa.assemble(q)["messages"]) for q in reqs]
    changed = json.loads(recorded[-1])
    changed[-1]["content"][0]["text"] += " (edited)"
    recorded[-1] = json.dumps(changed)
    return {"sent": recorded, "request": [json.dumps(q) for q in reqs]}


@pytest.mark.parametrize("num_proc", [1, 2])
def test_compare_recorded_999_identical_then_one_changed(tmp_path: Path, num_proc: int) -> None:
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict(_recorded_set(999))
    check = data.CompareRecorded(recorded="sent", request="request")
    out = ds.map(check, batched=True, batch_size=100, num_proc=num_proc)
    assert out["identical"] == [True] * 999 + [False]
    assert (out["first_message"][999], out["segment"][999]) == (1, "history") and out["first_message"][
        0
    ] is None  # the last message
    _one_schema(tmp_path, out, "p", data.compare_arrow_schema())


def test_compare_recorded_single_dict_first_is_a_row_error(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = _recorded_set(3)
    rows["sent"][0] = json.dumps(json.loads(rows["sent"][0])[0])  # one message dict, not a list
    out = datasets.Dataset.from_dict(rows).map(data.CompareRecorded(recorded="sent", request="request"), batched=True)
    assert out["identical"] == [False, True, True, False] and out["compare_error"][0]
    assert out["compare_error"][1:] == [None] * 3
