"""polyloop_assembly.data without a cluster: one row per request, whatever the
request is (JSON text, msgpack bytes, a mapping, garbage), error rows with code
and path (data sets; the Ray and datasets runs are in tests_data/)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Iterator, List

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, data

T = "Observation: {observation}"
RENDERED = [c for c in data.COLUMNS if c != "response"]  # RenderBatch's columns by default
OK = {
    "goal_messages": [{"role": "user", "content": [{"type": "text", "text": "\ufeffgo\x00"}]}],
    "steps": [{"raw_output": "r", "observation": "o"}],
    "observation_template": T,
    "max_prompt_chars": 5,
}


class Broken(Sequence):  # type: ignore[type-arg]
    def __len__(self) -> int:
        return 1

    def __getitem__(self, i: Any) -> Any:
        raise ValueError("broken")

    def __iter__(self) -> Iterator[Any]:
        raise ValueError("broken")


def test_every_kind_of_request_is_one_row() -> None:
    bad = dict(OK, max_prompt_chars=-1)
    reqs = [
        json.dumps(OK),
        _codec.encode(OK),
        OK,
        json.dumps(bad),
        _codec.encode(bad),
        bad,
        "{not json",
        '{"v": NaN}',
        dict(OK, steps=Broken()),
        5,
        b"\xc1",
    ]
    # JSON text gets the CLI's verdict (assemble_json), not Python's json module's
    dup = (
        '{"steps": [{"raw_output": "first", "raw_output": "second", "observation": "o"}], '
        '"observation_template": "{observation}"}'
    )
    big = '{"observation_template": "{observation}", "max_prompt_chars": 9007199254740993}'
    reqs += [dup, '{"v": 1.0, "observation_template": "{observation}"}', big]
    cols = data.render_columns(reqs, response=True)
    assert list(cols) == list(data.COLUMNS)
    assert list(data.render_columns(reqs[:1])) == [c for c in data.COLUMNS if c != "response"]  # the default
    assert all(len(v) == len(reqs) for v in cols.values())
    want = pa.assemble_bytes(_codec.encode(OK))
    resp = msgpack.unpackb(want, raw=False)
    for i in range(3):
        assert cols["ok"][i] is True and cols["response"][i] == want
        assert cols["messages"][i] == resp["messages"]
        assert cols["prompt_chars"][i] == resp["prompt_chars"] and cols["context_overflow"][i] is True
        assert cols["prefix_digest_run"][i] == resp["prefix_digests"]["run"]
        assert cols["error_code"][i] is None
    with pytest.raises(pa.AssemblyError) as bad_error:
        pa.assemble(bad)
    # each form's own answer: JSON text's, the wire's, and a dict's, all in the wire's words (a row's
    # response bytes are every host's; assemble() raises in Python's words, the same code and path)
    bad_answers = [pa.assemble_json_bytes(json.dumps(bad)), pa.assemble_bytes(_codec.encode(bad)), None]
    for i in range(3, 6):
        assert (cols["ok"][i], cols["error_code"][i], cols["error_path"][i]) == (False, "invalid_budget", "max_prompt_chars")
        assert cols["messages"][i] is None and cols["prompt_chars"][i] is None
        assert cols["response"][i] == bad_answers[i - 3] or bad_answers[i - 3] is None
    assert cols["error_message"][5] == msgpack.unpackb(bad_answers[1], raw=False)["error"]["message"]
    assert (bad_error.value.code, bad_error.value.path) == ("invalid_budget", "max_prompt_chars")
    assert (cols["error_code"][6], cols["error_path"][6]) == ("malformed_request", "")
    assert cols["error_message"][6].startswith("invalid JSON at byte 1")
    assert cols["response"][6] == pa.assemble_json_bytes("{not json")  # the module's error response
    assert (cols["error_code"][7], cols["error_path"][7]) == ("malformed_request", "")  # NaN is not JSON
    assert (cols["error_code"][8], cols["error_path"][8]) == ("malformed_request", "steps")
    assert "broken" in cols["error_message"][8]
    assert cols["error_code"][9] == "malformed_request" and cols["response"][9] is not None  # the core's answer
    assert cols["error_code"][10] == "malformed_request" and cols["response"][10] == pa.assemble_bytes(b"\xc1")
    assert (cols["error_code"][11], cols["error_path"][11]) == ("duplicate_key", "steps[0].raw_output")
    assert (cols["error_code"][12], cols["error_path"][12]) == ("malformed_request", "v")  # a float version
    assert cols["ok"][13] is True  # an integer beyond 2**53 is exact


def test_render_batch_keeps_columns_and_takes_numpy_and_arrow() -> None:
    r = data.RenderBatch("req")
    out = r({"req": [json.dumps(OK), "x"], "id": [7, 8]}).to_pydict()  # a dict of lists: a typed Table
    assert out["id"] == [7, 8] and out["ok"] == [True, False] and out["req"][1] == "x"
    assert "req" not in data.RenderBatch("req", keep_request=False)({"req": ["x"]}).column_names
    np = pytest.importorskip("numpy")
    out = r({"req": np.array([_codec.encode(OK)], dtype=object)})  # Ray "numpy": a typed Table
    assert out.column("ok").to_pylist() == [True]
    pyarrow = pytest.importorskip("pyarrow")
    table = r(pyarrow.table({"req": [json.dumps(OK), "nope"], "id": [1, 2]}))
    assert table.schema.names == ["req", "id", *RENDERED]
    assert table.schema.field("prompt_chars").type == pyarrow.int64()
    assert table.column("error_code").to_pylist() == [None, "malformed_request"]
    with pytest.raises(TypeError, match="a mapping of columns"):
        r([1, 2])


def _hash(obj: Any) -> str:
    """The fingerprint ``datasets`` caches a ``map`` by (its Hasher: a hash of
    the pickled callable), or the pickle itself without ``datasets``."""
    try:
        from datasets.fingerprint import Hasher  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        import hashlib
        import pickle

        return hashlib.sha256(pickle.dumps(obj)).hexdigest()
    return str(Hasher.hash(obj))


def test_fingerprint_changes_with_what_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another module, another release or another option is another
    fingerprint, so a cached map is never reused for them; the same ones are
    the same fingerprint (the cache is reused)."""
    from polyloop_assembly import _runtime

    base = _hash(data.RenderBatch(column="text"))
    used = data.RenderBatch(column="text")
    used({"text": [json.dumps(OK)]})  # a loaded assembler is no part of it
    assert _hash(used) == base
    assert _hash(data.RenderBatch(column="request")) != base
    assert _hash(data.RenderBatch(column="text", keep_request=False)) != base
    sha = _runtime.module_sha256()
    monkeypatch.setattr(_runtime, "module_sha256", lambda: "0" * 64 if sha != "0" * 64 else "1" * 64)
    assert _hash(data.RenderBatch(column="text")) != base
    monkeypatch.undo()
    release = _runtime.version()
    monkeypatch.setattr(_runtime, "version", lambda: release + ".post1")
    assert _hash(data.RenderBatch(column="text")) != base


def test_misuse_is_an_error_before_any_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """One row (datasets' batched=False), a missing column, a column of
    numbers: a TypeError/ValueError that says what to write; nothing rendered."""
    rendered: List[Any] = []
    monkeypatch.setattr(data, "render", lambda req, asm: rendered.append(req))
    r = data.RenderBatch(column="text")
    with pytest.raises(TypeError, match="batched=True"):
        r({"text": json.dumps(OK)})  # one row, a str
    with pytest.raises(TypeError, match="batched=True"):
        r({"text": _codec.encode(OK)})  # one row, bytes
    with pytest.raises(TypeError, match="batched=True"):
        r({"text": OK})  # one row, a mapping
    with pytest.raises(ValueError, match=r"no column 'text'.*\['request', 'id'\].*column="):
        r({"request": [json.dumps(OK)], "id": [1]})
    with pytest.raises(TypeError, match=r"row 1 .* int.*column="):
        r({"text": [json.dumps(OK), 5]})
    pyarrow = pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match="column="):
        r(pyarrow.table({"line": ["x"]}))
    with pytest.raises(TypeError, match="column="):
        r(pyarrow.table({"text": [1.5, 2.5]}))
    assert rendered == []


def _typed(batch_kind: str, rows: List[Any]) -> Any:
    """RenderBatch's answer to ``rows`` given as one batch of ``batch_kind``, as an Arrow table."""
    pyarrow = pytest.importorskip("pyarrow")
    r = data.RenderBatch(column="text")
    ids = list(range(len(rows)))
    if batch_kind == "pyarrow":
        return r(pyarrow.table({"text": rows, "id": ids}))
    if batch_kind == "numpy":
        np = pytest.importorskip("numpy")
        return r({"text": np.array(rows, dtype=object), "id": np.array(ids)})
    pd = pytest.importorskip("pandas")
    return pyarrow.Table.from_pandas(r(pd.DataFrame({"text": rows, "id": ids})), preserve_index=False)


@pytest.mark.parametrize("batch_kind", ["pyarrow", "numpy", "pandas"])
def test_one_schema_whatever_the_rows(batch_kind: str) -> None:
    """A batch of error rows only, of ok rows only and a mix: the one schema
    of arrow_schema() after the input's columns, never a null-typed column."""
    pyarrow = pytest.importorskip("pyarrow")
    injected = dict(OK, injections={"skills": [{"entry_id": "s1", "content": "x"}]})
    batches = {"errors": ["{", "[]", json.dumps(dict(OK, max_prompt_chars=-1))], "ok": [json.dumps(injected)]}
    batches["mixed"] = batches["errors"] + batches["ok"]
    for name, rows in batches.items():
        table = _typed(batch_kind, rows)
        assert table.schema.names == ["text", "id", *RENDERED], name
        assert pyarrow.schema([table.schema.field(c) for c in RENDERED]) == pyarrow.schema(arrow_fields()), name
        assert not any(pyarrow.types.is_null(f.type) for f in table.schema), name
    table = _typed(batch_kind, batches["mixed"])
    resp = pa.assemble(injected)
    assert table.column("message_chars").to_pylist() == [None, None, None, resp["message_chars"]]
    assert table.column("injected").to_pylist() == [None, None, None, resp["injected"]]
    assert table.column("injected").to_pylist()[3] == [{"channel": "skills", "entry_id": "s1", "message_index": 0}]


def arrow_fields() -> List[Any]:
    return list(data.arrow_schema())


def test_the_data_extra_installs_the_tested_versions() -> None:
    """``pip install "polyloop-assembly[data]"``: Ray Data and datasets, bounded
    so that the versions make test.data pins (constraints.txt) are inside."""
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement

    here = Path(__file__).resolve().parents[1]
    extra = tomllib.loads((here / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["data"]
    pins = {}
    for line in (here / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split(";")[0].strip().split("==")
            pins[name.lower()] = version
    reqs = {Requirement(r).name.lower(): Requirement(r) for r in extra}
    assert set(reqs) == {"ray", "datasets"} and "data" in reqs["ray"].extras
    for name, req in reqs.items():
        assert req.specifier.contains(pins[name]), (name, str(req.specifier), pins[name])
        assert req.specifier and not req.specifier.contains(pins[name].split(".")[0] + ".999"), "no upper bound: " + name


def _msg(role: str, text: str) -> Any:
    return {"role": role, "content": [{"type": "text", "text": text}]}


# Requests as JSON objects a JSON reader types into columns: channels some
# rows lack (filled with null), optional fields absent, empty lists and maps,
# a null budget, and mistakes Arrow can carry (an unknown column, a step
# without its observation, an empty entry_id, a bad role, v 2).
COLUMN_REQUESTS: List[Any] = [
    {"id": 0, "injections": {"memory": [{"entry_id": "m1", "content": "a"}]}, "observation_template": T},
    {"id": 1, "injections": {"skills": [{"entry_id": "s1", "content": "b"}], "tools": []}, "observation_template": T},
    {"id": 2, "injections": {}, "run_messages": [], "steps": [], "observation_template": T, "max_prompt_chars": None},
    {
        "id": 3,
        "v": 1,
        "run_messages": [_msg("system", "sys")],
        "goal_messages": [_msg("user", "go")],
        "steps": [{"raw_output": "r", "observation": "o"}],
        "observation_template": T,
        "max_prompt_chars": 3,
    },
    {"id": 4, "observation_template": T, "extra": True},
    {"id": 5, "steps": [{"raw_output": "r"}], "observation_template": T},
    {"id": 6, "injections": {"memory": [{"entry_id": "", "content": "x"}]}, "observation_template": T},
    {"id": 7, "run_messages": [_msg("robot", "x")], "observation_template": T},
    {"id": 8, "v": 2, "observation_template": T},
    {"id": 9, "goal_messages": [{"role": "user", "content": []}], "observation_template": "{observation!r}"},
    {"id": 10, "steps": [{"raw_output": "r", "observation": "o"}]},
]


def _column_table() -> Any:
    pj = pytest.importorskip("pyarrow.json")
    import io

    text = "".join(json.dumps(r) + "\n" for r in COLUMN_REQUESTS).encode()
    return pj.read_json(io.BytesIO(text))


def _json_text_responses() -> List[bytes]:
    """The oracle: each request's JSON text (without the id) through assemble_json_bytes."""
    return [pa.assemble_json_bytes(json.dumps({k: v for k, v in r.items() if k != "id"})) for r in COLUMN_REQUESTS]


def test_request_columns_render_as_their_json_text() -> None:
    """A file of requests read by a JSON reader (the request's fields as
    columns, null-filled where a row lacks a key or a channel) renders
    byte-identical to the same requests as JSON text, whatever the batch form;
    the id column is carried through."""
    table = _column_table()
    assert table.schema.field("injections").type.num_fields == 3  # memory, skills, tools: null-filled
    want = _json_text_responses()
    render = data.RenderBatch(request=[c for c in table.column_names if c != "id"], response=True)
    out = render(table)
    assert out.column("response").to_pylist() == want
    assert out.column("id").to_pylist() == list(range(len(COLUMN_REQUESTS)))
    assert out.column("ok").to_pylist().count(True) == 5
    assert render(table.to_pydict()).column("response").to_pylist() == want  # a dict of lists
    np = pytest.importorskip("numpy")
    numpy_batch = {c: np.array(table.column(c).to_pylist(), dtype=object) for c in table.column_names}
    assert render(numpy_batch).column("response").to_pylist() == want
    pd = pytest.importorskip("pandas")
    # Ray's "pandas" (Arrow-backed columns: an int column keeps its nulls)
    assert render(table.to_pandas(types_mapper=pd.ArrowDtype))["response"].tolist() == want
    # "*": every column is the request's, so the id is an unknown field, met
    # after the wire's fields (their table order, then the others)
    star = data.RenderBatch(request="*", response=True)(table)
    table_order = ["v", "run_messages", "injections", "goal_messages", "steps", "observation_template", "max_prompt_chars"]
    keys = table_order + ["id", "extra"]  # docs/SPEC.md §2's table, then the other columns as the table has them
    ordered = [{k: r[k] for k in keys if k in r} for r in COLUMN_REQUESTS]
    assert star.column("response").to_pylist() == [pa.assemble_json_bytes(json.dumps(r)) for r in ordered]
    assert star.column("error_code").to_pylist().count("unknown_field") >= 5


def test_a_struct_column_of_requests_takes_nulls_as_absent() -> None:
    """One column holding whole requests as a struct (read_json of
    {"id", "request"} lines): a channel other rows have is null here, and the
    request is still the one its JSON text says."""
    pj = pytest.importorskip("pyarrow.json")
    import io

    lines = [json.dumps({"id": r["id"], "request": {k: v for k, v in r.items() if k != "id"}}) for r in COLUMN_REQUESTS]
    table = pj.read_json(io.BytesIO("\n".join(lines).encode()))
    assert table.column("request").to_pylist()[0]["injections"]["skills"] is None  # what the reader gives
    out = data.RenderBatch(column="request", response=True)(table)
    assert out.column("response").to_pylist() == _json_text_responses()


def test_request_of_row_null_is_absent_lists_kept() -> None:
    row = {"steps": [{"raw_output": "r", "observation": None}, None], "injections": {"a": None, "b": []}, "v": None}
    assert data.request_of_row(row) == {"injections": {"b": []}, "steps": [{"raw_output": "r"}, None]}
    keys = list(data.request_of_row({"zz": 1, "max_prompt_chars": 1, "v": 1, "observation_template": T}))
    assert keys == ["v", "observation_template", "max_prompt_chars", "zz"]


def test_messages_and_response_options() -> None:
    """messages: a nested list of structs by default, JSON text on request;
    response bytes only with response=True; the schemas say so."""
    pyarrow = pytest.importorskip("pyarrow")
    lines = [json.dumps(OK), "{"]
    resp = pa.assemble(OK)
    nested = data.RenderBatch("text")(pyarrow.table({"text": lines}))
    assert nested.column("messages").to_pylist() == [resp["messages"], None]
    assert nested.schema.field("messages").type == data.arrow_schema().field("messages").type
    assert str(nested.schema.field("messages").type) == (
        "list<item: struct<role: string, content: list<item: struct<type: string, text: string>>>>"
    )
    assert "response" not in nested.schema.names
    as_json = data.RenderBatch("text", messages="json", response=True)(pyarrow.table({"text": lines}))
    assert json.loads(as_json.column("messages")[0].as_py()) == resp["messages"]
    assert as_json.schema.field("messages").type == pyarrow.string()
    assert as_json.column("response").to_pylist() == [pa.assemble_json_bytes(x) for x in lines]
    assert as_json.schema.equals(
        pyarrow.schema([pyarrow.field("text", pyarrow.string()), *data.arrow_schema(messages="json", response=True)])
    )
    with pytest.raises(ValueError, match="messages="):
        data.RenderBatch("text", messages="text")
    with pytest.raises(ValueError, match="request="):
        data.RenderBatch(request="columns")


def test_render_columns_leaves_the_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cyclic collector is the caller's: on or off, a batch leaves it as it found it, while it renders too."""
    import gc

    seen: List[bool] = []
    real = data.render

    def spy(req: Any, asm: Any, **kw: Any) -> Any:
        seen.append(gc.isenabled())
        return real(req, asm, **kw)

    monkeypatch.setattr(data, "render", spy)
    assert gc.isenabled()
    data.render_columns([json.dumps(OK), "{"])
    assert seen == [True, True] and gc.isenabled()
    gc.disable()
    try:
        data.render_columns(["{"])
        assert seen[-1] is False and not gc.isenabled()
    finally:
        gc.enable()
