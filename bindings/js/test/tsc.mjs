/**
 * Runs the pinned TypeScript compiler (node_modules/typescript) on a project.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const TSC = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));

/**
 * @param {string} project a directory with a tsconfig.json
 * @returns {{status: number | null, output: string}}
 */
export function tsc(project) {
  const r = spawnSync(process.execPath, [TSC, "-p", project], { encoding: "utf8" });
  return { status: r.status, output: (r.stdout + r.stderr).trim() };
}
