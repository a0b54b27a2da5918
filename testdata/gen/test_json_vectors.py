"""The committed JSON-text vectors are what the oracle says today.

Run with CPython 3.12: python3.12 -m unittest testdata/gen/test_json_vectors.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_json_vectors as G  # noqa: E402


class TestJSONVectors(unittest.TestCase):
    def test_committed_files_are_current(self):
        want = G.build().render()
        have = sorted(f for f in os.listdir(G.OUT_DIR) if f.endswith(".json"))
        self.assertEqual(have, sorted(want), "run make vectors")
        for name, text in want.items():
            with open(os.path.join(G.OUT_DIR, name), encoding="ascii") as f:
                self.assertTrue(f.read() == text, f"{name} differs from the oracle's output: run make vectors")

    def test_oracle_keeps_bytes(self):
        # a raw 0x80 byte and an escaped \udc80 are different strings
        raw = G.to_msgpack(b'"\x80"')
        esc = G.to_msgpack(b'"\\udc80"')
        self.assertEqual(raw, b"\xa1\x80")
        self.assertEqual(esc, b"\xa3\xed\xb2\x80")
        self.assertIsNone(G.to_msgpack(b"NaN"))
        self.assertIsNone(G.to_msgpack(b"1\xd9\xa3"))  # a non-ASCII digit
        self.assertEqual(G.to_msgpack(b'{"a":1,"a":2.0}'), bytes.fromhex("82a16101a161cb4000000000000000"))


if __name__ == "__main__":
    unittest.main()
