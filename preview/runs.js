// Runs as the library defines them: the rule of `run_rows` and `cache_rows`
// (bindings/python/src/polyloop_assembly/data/_run_rows.py, _usage_rows.py). A
// call's run is named by a run id given beside its request (the `run_id`
// column of a data set); a request itself holds none (an unknown key is
// `unknown_field`). The calls of one run come together, in call order: a
// run is a maximal stretch of consecutive calls with the same run id, and a
// run id met again after another run is refused (the calls must be sorted by
// run id first), never merged or split silently. Each run is reported on its
// own: its first call is compared with nothing.
//
// A JSON-lines file of requests names no run id, so the page asks how its
// lines are read ("split"): `calls`, one run's calls in order (as
// `polyloop-assemble cache FILE` reads a file: every line the same run id),
// or `lines`, each line a run of its own (a file of trajectories: every
// line its own run id).

/** @typedef {"calls" | "lines"} Split */

/**
 * The run ids of `n` entries read as `split`.
 * @param {number} n @param {Split} split
 * @returns {number[]}
 */
export function runIds(n, split) {
  return Array.from({ length: n }, (_, k) => (split === "lines" ? k : 0));
}

/**
 * The runs of calls with run ids `ids` (run_rows' rule): `runs[k]` the run
 * of call k (0, 1, … in order of first appearance), `starts[r]` its first
 * call, `ends[r]` past its last; or the error of an id met again after
 * another run.
 * @param {ArrayLike<unknown>} ids
 * @returns {{runs: Int32Array, starts: number[], ends: number[], ids: unknown[]} | {error: string}}
 */
export function runsOf(ids) {
  const runs = new Int32Array(ids.length);
  /** @type {number[]} */ const starts = [];
  /** @type {number[]} */ const ends = [];
  /** @type {unknown[]} */ const names = [];
  const seen = new Set();
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k];
    if (k === 0 || id !== ids[k - 1]) {
      if (seen.has(id))
        return {
          error: `the calls of run ${JSON.stringify(id)} are not together (it is met again at call ${k}, after another run): sort the calls by run id, stably, so each run's calls stay in call order`,
        };
      seen.add(id);
      if (k > 0) ends.push(k);
      starts.push(k);
      names.push(id);
    }
    runs[k] = starts.length - 1;
  }
  if (ids.length) ends.push(ids.length);
  return { runs, starts, ends, ids: names };
}
