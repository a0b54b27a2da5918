// Writes the A/B benchmark's requests as JSON into the directory argv[2]: the
// tiny, typical and ~1 MB requests of bindings/js/bench/requests.mjs (the same
// ones `make bench` measures) and addstep.json, a prompt base and a 1 KB step.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tinyRequest, typicalRequest, largeRequest } from "../../bindings/js/bench/requests.mjs";

const dir = process.argv[2];
const put = (name, v) => writeFileSync(join(dir, name + ".json"), JSON.stringify(v));
put("tiny", tinyRequest());
put("typical", typicalRequest());
put("1MB", largeRequest());
const base = typicalRequest();
base.steps = [];
delete base.max_prompt_chars;
base.step = { raw_output: "Thought: x.\nAction: y()".padEnd(256, "."), observation: "result ".repeat(110).slice(0, 768) };
put("addstep", base);
