"""Data sets: 10,000 recorded requests, valid and invalid,
rendered serially, by assemble_many, by the CLI's --batch (and --jobs when the
CLI has it), on a local Ray cluster and by ``datasets.map(num_proc=2)``: every
response byte-identical to the serial run, every invalid request an error row
with its code and path, no row dropped.

Run by ``make test.data`` (part of ``make test``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, data

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "examples" / "datasets"))
import render  # noqa: E402
import trajectories  # noqa: E402

N = 10_000
ITEMS = list(trajectories.requests(N, seed=13))
LINES = trajectories.lines(N, seed=13)


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("data") / "trajectories.jsonl"
    p.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def serial() -> Dict[str, List[Any]]:
    """The serial run: one assembler, one request after another."""
    return data.render_columns(LINES, pa.Assembler(max_instances=1), response=True)


def _check_rows(got: Dict[str, List[Any]], want: Dict[str, List[Any]]) -> None:
    assert len(got["ok"]) == N, "a row was dropped or added"
    for col in data.COLUMNS:
        g, w = list(got[col]), want[col]
        if g != w:
            k = next(i for i in range(N) if g[i] != w[i])
            raise AssertionError("column %s differs first at row %d: %r != %r" % (col, k, g[k], w[k]))


def test_serial_rows(serial: Dict[str, List[Any]]) -> None:
    kinds = [k for k, _ in ITEMS]
    assert kinds.count("valid") > 8000 and kinds.count("invalid") > 1000 and kinds.count("not-json") > 50
    codes = set()
    for i, (kind, req) in enumerate(ITEMS):
        ok = serial["ok"][i]
        assert ok == (kind == "valid"), (i, kind, serial["error_code"][i], serial["error_message"][i])
        if ok:
            resp = pa.assemble(req)  # the object path agrees with the row
            assert serial["messages"][i] == resp["messages"]
            assert serial["prompt_chars"][i] == resp["prompt_chars"]
            assert serial["context_overflow"][i] == resp["context_overflow"]
            assert serial["prefix_digest_goal"][i] == resp["prefix_digests"]["goal"]
            assert serial["error_code"][i] is None
        else:
            assert serial["error_code"][i] and serial["error_path"][i] is not None and serial["error_message"][i]
            codes.add(serial["error_code"][i])
            if kind == "invalid":
                with pytest.raises(pa.AssemblyError) as info:
                    pa.assemble(req)
                assert (info.value.code, info.value.path) == (serial["error_code"][i], serial["error_path"][i])
    assert {
        "invalid_role",
        "unknown_field",
        "invalid_budget",
        "invalid_template",
        "invalid_utf8",
        "malformed_request",
        "missing_field",
        "unsupported_version",
        "invalid_entry_id",
    } <= codes
    assert any(serial["context_overflow"][i] for i in range(N) if serial["ok"][i])


def _wires() -> List[bytes]:
    return [_codec.encode(r) for k, r in ITEMS if k != "not-json"]


def _serial_responses(serial: Dict[str, List[Any]]) -> List[bytes]:
    return [serial["response"][i] for i, (k, _) in enumerate(ITEMS) if k != "not-json"]


def test_assemble_many_equals_serial(serial: Dict[str, List[Any]]) -> None:
    want = _serial_responses(serial)
    assert list(pa.assemble_bytes_many(_wires(), workers=2)) == want
    objs = [r for k, r in ITEMS if k != "not-json"]
    for got, w in zip(pa.assemble_many(objs, workers=2), want):
        resp = msgpack.unpackb(w, raw=False)
        if resp["ok"]:
            assert got == resp
        else:
            assert isinstance(got, pa.AssemblyError)  # in Python's words: the verdict is the same
            assert (got.code, got.path) == (resp["error"]["code"], resp["error"]["path"])


def _cli(tmp: Path) -> Path:
    if os.environ.get("POLYLOOP_CLI"):  # built once by make for every suite that runs it
        return Path(os.environ["POLYLOOP_CLI"])
    exe = tmp / "polyloop-assemble"
    if not exe.exists():
        subprocess.run(
            ["go", "build", "-o", str(exe), "./cmd/polyloop-assemble"],
            cwd=REPO,
            check=True,
            env=dict(os.environ, CGO_ENABLED="0"),
        )
    return exe


def test_cli_batch_equals_serial(serial: Dict[str, List[Any]], tmp_path: Path) -> None:
    exe = _cli(tmp_path)
    stream = b"".join(_wires())
    want = b"".join(_serial_responses(serial))
    usage = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    runs = [["--batch"]]
    if "--jobs" in usage.stdout + usage.stderr:
        runs += [["--batch", "--jobs", "2"], ["--batch", "--jobs", "1"]]
    for flags in runs:
        out = subprocess.run([str(exe), "--in", "msgpack", "--out", "msgpack", *flags], input=stream, capture_output=True)
        assert out.returncode == 1, out.stderr[-2000:]  # 1: some requests are assembly errors
        assert out.stdout == want, flags


def test_ray_equals_serial(serial: Dict[str, List[Any]], jsonl: Path, tmp_path: Path, ray_local: Any) -> None:
    ray = ray_local
    # materialized once: take_all and write_parquet would each run the lazy pipeline over the 10,000 lines
    ds = render.ray_pipeline(str(jsonl), concurrency=2, response=True).materialize()
    rows = ds.take_all()
    got = {c: [r[c] for r in rows] for c in data.COLUMNS}
    assert [r["text"] for r in rows] == LINES  # input order, every line
    _check_rows(got, serial)
    # the example's output: Parquet with the columns
    ds.write_parquet(str(tmp_path / "prompts"))
    back = ray.data.read_parquet(str(tmp_path / "prompts"))
    assert back.count() == N and set(data.COLUMNS) <= set(back.schema().names)


@pytest.mark.parametrize("batch_format", ["numpy", "pandas", "pyarrow"])
def test_ray_batch_formats_write_one_schema(batch_format: str, ray_local: Any, tmp_path: Path) -> None:
    """Every Ray batch_format renders, and batches of error rows only beside
    batches of ok rows write Parquet files of one schema, read back whole."""
    import pyarrow.parquet as pq

    ray = ray_local
    lines = ["{", "[]", "{}", "nope"] + [line for (k, _), line in zip(ITEMS, LINES) if k == "valid"][:4]
    out = ray.data.from_items([{"text": t} for t in lines], override_num_blocks=2).map_batches(
        data.RenderBatch, fn_constructor_kwargs={"column": "text", "response": True}, batch_format=batch_format, batch_size=4
    )
    out.write_parquet(str(tmp_path / "p"))
    files = sorted((tmp_path / "p").glob("*.parquet"))
    assert len(files) >= 2  # a file of error rows, one of ok rows
    for f in files:
        schema = pq.read_schema(str(f))
        assert [schema.field(c).type for c in data.COLUMNS] == [f.type for f in data.arrow_schema(response=True)], f.name
    back = pq.read_table(str(tmp_path / "p"))
    assert sorted(back.column("text").to_pylist()) == sorted(lines)
    assert back.column("ok").to_pylist().count(True) == 4


def test_datasets_equals_serial(serial: Dict[str, List[Any]], jsonl: Path, tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    out = render.hf_pipeline(str(jsonl), num_proc=2, cache_dir=str(tmp_path / "hf"), response=True)
    assert out["text"] == LINES
    _check_rows({c: out[c] for c in data.COLUMNS}, serial)
    out.to_parquet(str(tmp_path / "prompts.parquet"))
    import pyarrow.parquet as pq

    table = pq.read_table(str(tmp_path / "prompts.parquet"))
    assert table.num_rows == N and table.column("response").to_pylist() == serial["response"]


def test_render_batch_pickles_without_its_assembler() -> None:
    import pickle

    r = data.RenderBatch("text", response=True)
    r({"text": LINES[:3]})
    again = pickle.loads(pickle.dumps(r))
    assert again._assembler is None and again({"text": LINES[:3]})["response"] == r({"text": LINES[:3]})["response"]


def _text_dataset(tmp_path: Path, lines: List[str]) -> Any:
    datasets = pytest.importorskip("datasets")
    p = tmp_path / "in.jsonl"
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return datasets.load_dataset("text", data_files=str(p), split="train", cache_dir=str(tmp_path / "hf"))


def test_datasets_cache_follows_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same RenderBatch over the same rows is served from datasets' cache;
    new module bytes (its sha256 as the package reports it) are a new
    fingerprint, so the map runs again."""
    from polyloop_assembly import _runtime

    ds = _text_dataset(tmp_path, LINES[:50])
    calls: List[int] = []
    real = data.render_columns
    monkeypatch.setattr(data, "render_columns", lambda reqs, asm=None, **kw: calls.append(1) or real(reqs, asm, **kw))

    def run() -> Any:
        calls.clear()
        render = data.RenderBatch(column="text", response=True)
        return ds.map(render, batched=True, features=data.hf_features(ds.features, response=True))

    first = run()
    assert calls and first["response"] == [r for r in data.render_columns(LINES[:50], response=True)["response"]]
    again = run()
    assert calls == [] and again._fingerprint == first._fingerprint  # served from the cache
    sha = _runtime.module_sha256()
    monkeypatch.setattr(_runtime, "module_sha256", lambda: "0" * 64 if sha != "0" * 64 else "1" * 64)
    renewed = run()
    assert calls and renewed._fingerprint != first._fingerprint
    assert renewed.cache_files[0]["filename"] != first.cache_files[0]["filename"]


def test_datasets_map_without_batched_is_an_error(tmp_path: Path) -> None:
    ds = _text_dataset(tmp_path, LINES[:5])
    with pytest.raises(TypeError, match="batched=True"):
        ds.map(data.RenderBatch(column="text"))
    with pytest.raises(ValueError, match="column="):
        ds.map(data.RenderBatch(column="request"), batched=True)


def test_datasets_all_error_first_batch_keeps_the_schema(tmp_path: Path) -> None:
    """A first batch of error rows only does not fix null types: hf_features
    gives every batch the one schema."""
    ds = _text_dataset(tmp_path, ["{", "[]"] + [line for (k, _), line in zip(ITEMS, LINES) if k == "valid"][:2])
    out = ds.map(data.RenderBatch(column="text"), batched=True, batch_size=2, features=data.hf_features(ds.features))
    schema = out.data.schema
    assert [schema.field(c).type for c in data.COLUMNS[:-1]] == [f.type for f in data.arrow_schema()]
    assert out["ok"] == [False, False, True, True]


# Column rows: the same kind of data set as a file of request objects, read
# by Ray's read_json and datasets' load_dataset("json") into the request's
# fields as columns (null-filled where a row lacks a key or a channel), with
# an id column carried through.
COLUMN_ROWS = trajectories.column_requests(N)


@pytest.fixture(scope="module")
def column_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("columns") / "requests.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in COLUMN_ROWS), encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def column_want() -> List[bytes]:
    """The oracle: each row's request as JSON text (without its id), serially."""
    asm = pa.Assembler(max_instances=1)
    return [asm.assemble_json_bytes(json.dumps({k: v for k, v in r.items() if k != "id"})) for r in COLUMN_ROWS]


def test_column_rows_are_valid_and_invalid(column_want: List[bytes]) -> None:
    oks = [msgpack.unpackb(w)["ok"] for w in column_want]
    assert oks.count(True) > 8000 and oks.count(False) > 500
    channels = [set(r.get("injections", {})) for r in COLUMN_ROWS]
    assert {"memory", "skills", "tools"} in channels and set() in channels and {"skills"} in channels


def _read_back_one_schema(directory: Path, pq: Any) -> Any:
    files = sorted(directory.glob("*.parquet"))
    assert len(files) >= 2
    schemas = {str(pq.read_schema(str(f))) for f in files}
    assert len(schemas) == 1, "the Parquet files disagree on their schema"
    return pq.read_table(str(directory))


def test_ray_column_rows_equal_their_json_text(
    column_jsonl: Path, column_want: List[bytes], tmp_path: Path, ray_local: Any
) -> None:
    import pyarrow.parquet as pq

    ray = ray_local
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    ds = ray.data.read_json(str(column_jsonl))
    fields = [c for c in ds.schema().names if c != "id"]
    out = ds.map_batches(
        data.RenderBatch,
        fn_constructor_kwargs={"request": fields, "response": True},
        batch_format="pyarrow",
        batch_size=2000,
        compute=ray.data.ActorPoolStrategy(size=2),
        num_cpus=0.5,
    )
    out.write_parquet(str(tmp_path / "columns"))
    back = _read_back_one_schema(tmp_path / "columns", pq)
    assert back.column("id").to_pylist() == list(range(N))  # input order, every row
    assert back.column("response").to_pylist() == column_want
    assert back.schema.field("messages").type == data.arrow_schema().field("messages").type


def test_datasets_column_rows_equal_their_json_text(column_jsonl: Path, column_want: List[bytes], tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    import pyarrow.parquet as pq

    ds = datasets.load_dataset("json", data_files=str(column_jsonl), split="train", cache_dir=str(tmp_path / "hf"))
    render = data.RenderBatch(request=[c for c in ds.column_names if c != "id"], response=True)
    out = ds.map(render, batched=True, num_proc=2, features=data.hf_features(ds.features, response=True))
    assert out["id"] == list(range(N))
    assert out["response"] == column_want
    (tmp_path / "pq").mkdir()
    for k, shard in enumerate((out.shard(2, 0, contiguous=True), out.shard(2, 1, contiguous=True))):
        shard.to_parquet(str(tmp_path / "pq" / ("%d.parquet" % k)))
    back = _read_back_one_schema(tmp_path / "pq", pq)
    assert back.column("id").to_pylist() == list(range(N)) and back.column("response").to_pylist() == column_want


def test_text_rows_parquet_one_schema_in_order(jsonl: Path, serial: Dict[str, List[Any]], tmp_path: Path, ray_local: Any) -> None:
    """The JSON-text way, default columns (nested messages, no response):
    Parquet files of one schema, rows in input order, equal to the serial rows."""
    import pyarrow.parquet as pq

    render.ray_pipeline(str(jsonl), concurrency=2).write_parquet(str(tmp_path / "text"))
    back = _read_back_one_schema(tmp_path / "text", pq)
    assert back.column("text").to_pylist() == LINES
    assert "response" not in back.schema.names
    for col in data.COLUMNS[:-1]:
        assert back.column(col).to_pylist() == serial[col], col
