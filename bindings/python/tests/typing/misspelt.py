"""Mistakes ``mypy --strict`` must report (tests/test_typing.py checks each line's error)."""

from __future__ import annotations

import polyloop_assembly as pa

pa.assemble({"observation_templat": "{observation}"})  # E: misspelt required key
pa.assemble({"observation_template": "{observation}", "step": []})  # E: misspelt optional key
pa.Prompt({"observation_template": "{observation}", "max_prompt_char": 10})  # E: misspelt key
pa.assemble({"observation_template": "{observation}", "steps": [{"raw_output": "a", "observaton": "b"}]})  # E: nested key
pa.Assembler(memory_limit=1 << 20)  # E: old option name
pa.assemble_many([{"observation_templat": "{observation}"}])  # E: a batch's request type
pa.assemble_json_many(["{}"], window="8")  # E: a batch's option type


def code_is_a_literal(e: pa.AssemblyError) -> None:
    if e.code == "invalid_templat":  # E: not a code
        pass
