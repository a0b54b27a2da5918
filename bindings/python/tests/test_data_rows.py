"""polyloop_assembly.data without a cluster: one row per request, whatever the
request is (JSON text, msgpack bytes, a mapping, garbage), error rows with code
and path (data sets; the Ray and datasets runs are in tests_data/)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Iterator

import msgpack
import pytest

import polyloop_assembly as pa
from polyloop_assembly import _codec, data

T = "Observation: {observation}"
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
    cols = data.render_rows(reqs)
    assert list(cols) == list(data.COLUMNS)
    assert all(len(v) == len(reqs) for v in cols.values())
    want = pa.assemble_bytes(_codec.encode(OK))
    resp = msgpack.unpackb(want, raw=False)
    for i in range(3):
        assert cols["ok"][i] is True and cols["response"][i] == want
        assert json.loads(cols["messages"][i]) == resp["messages"]
        assert cols["prompt_chars"][i] == resp["prompt_chars"] and cols["context_overflow"][i] is True
        assert cols["prefix_digest_run"][i] == resp["prefix_digests"]["run"]
        assert cols["error_code"][i] is None
    bad_bytes = pa.assemble_bytes(_codec.encode(bad))
    for i in range(3, 6):
        assert (cols["ok"][i], cols["error_code"][i], cols["error_path"][i]) == (False, "invalid_budget", "max_prompt_chars")
        assert cols["response"][i] == bad_bytes and cols["messages"][i] is None and cols["prompt_chars"][i] is None
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
    out = r({"req": [json.dumps(OK), "x"], "id": [7, 8]})
    assert out["id"] == [7, 8] and out["ok"] == [True, False] and out["req"][1] == "x"
    assert "req" not in data.RenderBatch("req", keep_request=False)({"req": ["x"]})
    np = pytest.importorskip("numpy")
    out = r({"req": np.array([_codec.encode(OK)], dtype=object)})
    assert out["ok"] == [True]
    pyarrow = pytest.importorskip("pyarrow")
    table = r(pyarrow.table({"req": [json.dumps(OK), "nope"], "id": [1, 2]}))
    assert table.schema.names == ["req", "id", *data.COLUMNS]
    assert table.schema.field("prompt_chars").type == pyarrow.int64()
    assert table.column("error_code").to_pylist() == [None, "malformed_request"]
    with pytest.raises(TypeError, match="pyarrow.Table or a mapping"):
        r([1, 2])
