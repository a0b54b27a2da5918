/**
 * Search in the messages shown: the hits of the query (decoded text, any
 * case), at most MAX_HITS, and the search's state as the element reports it.
 *
 * @module
 */

import { MAX_HITS } from "./text.js";
import { blockText } from "./columns.js";
import { limit } from "./state.js";

/** Finds the hits of the search in the messages shown. */
export function findHits(pv) {
  const v = pv.view;
  pv.hits = [];
  pv.hitsByMessage = new Map();
  pv.hitsOf = v ? `${pv.shownGen}:${limit(pv)}` : "";
  if (!v || !pv.queryText) {
    pv.hit = -1;
    return;
  }
  const re = new RegExp(pv.queryText.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "giu");
  const lim = limit(pv);
  for (let i = 0; i < lim && pv.hits.length < MAX_HITS; i++) {
    for (let b = v.blockStart[i]; b < v.blockStart[i + 1]; b++) {
      const text = blockText(/** @type {any} */ (v), b);
      re.lastIndex = 0;
      for (let m = re.exec(text); m && pv.hits.length < MAX_HITS; m = re.exec(text)) {
        const list = pv.hitsByMessage.get(i) ?? [];
        list.push(pv.hits.length);
        pv.hitsByMessage.set(i, list);
        pv.hits.push({ message: i, block: b - v.blockStart[i], from: m.index, to: m.index + m[0].length });
      }
    }
  }
  pv.hit = Math.min(pv.hit, pv.hits.length - 1);
  if (pv.hit < 0 && pv.hits.length) pv.hit = 0;
}

/** The search: its text, the number of hits, the current one (0-based,
 * -1 for none) and the message it is in. */
export function searchStateOf(pv) {
  const h = pv.hits[pv.hit];
  return { query: pv.queryText, count: pv.hits.length, current: pv.hit, message: h ? h.message : -1 };
}
