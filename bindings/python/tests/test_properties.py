"""Hypothesis properties against the pure-Python reference (CPython's real
``str.format``, its own msgpack reader and writer)."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyloop_assembly as pa
from polyloop_assembly import _consts
from polyloop_assembly import AssemblyError

from conftest import load_reference
from strategies import (
    BAD_KEYS,
    BAD_VALUES,
    add_key_at,
    any_template,
    maps_of,
    paths_of,
    replace_at,
    request,
    to_wire,
)

R = load_reference()

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reference(wire_value: Any) -> tuple:
    return R.assemble_bytes(R.pack(wire_value))


@PROPERTY
@given(request())
def test_random_requests_equal_the_reference(req: dict) -> None:
    want, err = _reference(req)
    assert err is None, err
    # the wire function: the reference's bytes exactly
    assert pa.assemble_bytes(R.pack(req)) == want
    # the Python API: the same response
    assert pa.assemble(req) == msgpack.unpackb(want, raw=False)


@PROPERTY
@given(request(template=any_template()))
def test_random_templates_equal_the_reference(req: dict) -> None:
    want, err = _reference(req)
    if err is None:
        assert pa.assemble_bytes(R.pack(req)) == want
        pa.validate_template(req["observation_template"])
    else:
        assert err == ("invalid_template", "observation_template")
        try:
            pa.assemble(req)
        except AssemblyError as e:
            assert (e.code, e.path) == err
        else:
            raise AssertionError("the core accepted a template the reference rejects")
        assert R.validate_template(req["observation_template"]) is not None


@PROPERTY
@given(request(), st.data())
def test_bad_python_values_get_the_codes_of_the_wire(req: dict, data: st.DataObject) -> None:
    """A random value or key put anywhere in a valid request: assemble() of the
    Python value answers what the core and the reference answer for the same
    request written for the wire."""
    if data.draw(st.booleans()):
        where = data.draw(st.sampled_from(paths_of(req)))
        bad = replace_at(req, where, data.draw(st.sampled_from(BAD_VALUES)))
    else:
        where = data.draw(st.sampled_from(maps_of(req)))
        bad = add_key_at(req, where, data.draw(st.sampled_from(BAD_KEYS)), data.draw(st.sampled_from(BAD_VALUES)))
    wire = R.pack(to_wire(bad, R))
    want, err = R.assemble_bytes(wire)
    core = msgpack.unpackb(pa.assemble_bytes(wire), raw=False)
    # assemble() raises in Python's words (WORDS_PYTHON): the core's message for these bytes in them
    words = msgpack.unpackb(pa.default_assembler()._pool.call(wire, _consts.CALL_ASSEMBLE | _consts.WORDS_PYTHON), raw=False)
    if err is None:
        assert pa.assemble_bytes(wire) == want
        assert pa.assemble(bad) == msgpack.unpackb(want, raw=False)
        return
    assert (core["error"]["code"], core["error"]["path"]) == err
    try:
        pa.assemble(bad)
    except AssemblyError as e:
        assert (e.code, e.path, e.message) == (err[0], err[1], words["error"]["message"])
    else:
        raise AssertionError("assemble() accepted a request the reference rejects with %r" % (err,))
