"""The shared vectors (testdata/vectors; rules in testdata/vectors/README.md)
through ``assemble_bytes``, then the same vectors through ``assemble``
wherever Python can express the request.

An ok case gives the vector's response bytes exactly; an error case the
AssemblyError (read by the binding's own decoder) with the vector's code, path
and offset. The canonical shape of error responses is the Go runner's check
(``core/vectors_test.go``); host-test proves every engine gives its bytes.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any, Optional

import pytest

import polyloop_assembly as pa

from conftest import VECTORS_DIR
from vectorsets import Case, Unrepresentable, check_error, describe_mismatch, error_of, load, request_to_python

VECTORS = load("vectors")
IDS = [lv.id for lv in VECTORS]


# --- TestVectors ----------------------------------------------------------------


@pytest.mark.parametrize("lv", VECTORS, ids=IDS)
def test_vectors(lv: Case) -> None:
    """Every shared vector through assemble_bytes: ok cases give the expected
    bytes exactly; error cases the expected code, path and offset and a
    non-empty message."""
    got = pa.assemble_bytes(lv.request)
    if lv.error is None:
        assert lv.response is not None
        assert got == lv.response, "%s\n%s" % (lv.description, describe_mismatch(got, lv.response))
        return
    check_error(error_of(got), lv.error, lv.description)


def test_vectors_cover_every_error_code() -> None:
    """The vectors use only codes the binding declares, and cover every one
    except too_large and internal."""
    declared = set(typing.get_args(pa.ErrorCode))
    assert len(declared) >= 13
    covered = set()
    for lv in VECTORS:
        if lv.error is not None:
            assert lv.error["code"] in declared, "%s/%s: code %r is not declared" % (lv.file, lv.name, lv.error["code"])
            covered.add(lv.error["code"])
    missing = declared - covered - {"too_large", "internal"}
    assert not missing, "no vector has error codes %s" % sorted(missing)


def test_vectors_empty_injections() -> None:
    """A request without injections, with {}, and with only empty channels give
    byte-identical responses (docs/SPEC.md §3)."""
    names = ["injections-empty-absent", "injections-empty-map", "injections-empty-channels"]
    by_name = {lv.name: lv for lv in VECTORS}
    first: Optional[bytes] = None
    for i, n in enumerate(names):
        lv = by_name.get(n)
        assert lv is not None and lv.response is not None, "vector %s missing or not an ok case" % n
        assert lv.response == by_name[names[0]].response, "vectors %s and %s expect different responses" % (names[0], n)
        got = pa.assemble_bytes(lv.request)
        if i == 0:
            first = got
        else:
            assert got == first, "%s and %s give different bytes:\n%s" % (names[0], n, describe_mismatch(got, first))


# --- the same vectors through assemble() ----------------------------------------
#
# The request as the Python value a user would write (when one exists) must give
# the same response, or an AssemblyError with the vector's code and path.


def _as_python(lv: Case) -> Any:
    try:
        return request_to_python(lv.request)
    except Unrepresentable:
        return Unrepresentable


PY_VECTORS = [(lv, _as_python(lv)) for lv in VECTORS]
PY_RUN = [(lv, py) for lv, py in PY_VECTORS if py is not Unrepresentable]
PY_IDS = [lv.id for lv, _ in PY_RUN]


@pytest.mark.parametrize("lv,py", PY_RUN, ids=PY_IDS)
def test_vectors_through_assemble(lv: Case, py: Any) -> None:
    if lv.error is None:
        assert lv.response is not None
        assert pa.assemble(py) == request_to_python(lv.response)
        from polyloop_assembly import _codec

        assert pa.assemble_bytes(_codec.encode(py)) == lv.response
        return
    with pytest.raises(pa.AssemblyError) as info:
        pa.assemble(py)
    check_error(info.value, lv.error, lv.description)


def test_assemble_ran_every_ok_vector_and_most_error_vectors() -> None:
    ok_total = sum(1 for lv in VECTORS if lv.error is None)
    err_total = len(VECTORS) - ok_total
    ok_run = sum(1 for lv, _ in PY_RUN if lv.error is None)
    err_run = len(PY_RUN) - ok_run
    skipped = [lv.name for lv, py in PY_VECTORS if py is Unrepresentable]
    assert ok_run == ok_total, "ok vectors not representable in Python: %s" % skipped
    assert err_run >= 0.6 * err_total, "only %d of %d error vectors ran; skipped: %s" % (err_run, err_total, skipped)


def test_vector_files_exist() -> None:
    assert Path(VECTORS_DIR, "README.md").is_file()
    assert len(VECTORS) > 100


def test_python_users_read_python_words() -> None:
    """Every error of the shared and JSON-text vectors, as the calls whose errors the binding raises answer it
    (WORDS_PYTHON): no msgpack, map, array, nil, bin or ext; the code and path the vector states."""
    import re

    import msgpack  # type: ignore[import-untyped]

    from polyloop_assembly import _consts

    wire = re.compile(r"msgpack|\bmaps?\b|\barrays?\b|\bnil\b|\bbin\b|\bext\b")
    asm = pa.Assembler(max_instances=1)
    said = 0
    for op, cases in ((_consts.CALL_ASSEMBLE, VECTORS), (_consts.CALL_ASSEMBLE_JSON, load("json-vectors"))):
        for lv in cases:
            answer = msgpack.unpackb(asm._pool.call(bytes(lv.request), op | _consts.WORDS_PYTHON), raw=False)
            if lv.error is None:
                continue
            e = answer["error"]
            assert (e["code"], e["path"]) == (lv.error["code"], lv.error["path"]), lv.name
            assert not wire.search(e["message"]), "%s/%s: a Python user reads %r" % (lv.file, lv.name, e["message"])
            said += 1
    assert said > 300
