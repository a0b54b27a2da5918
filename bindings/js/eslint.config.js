// ESLint flat config of the JavaScript binding (`make check` runs it).
// The recommended rules on the sources, tests and benches (the preview,
// /preview, has its own). The code runs in Node and in browsers, so both sets
// of globals (and a worker's) are known. Built, copied and installed files
// are not linted.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "dist/", "src/version.js"] },
  js.configs.recommended,
  {
    files: ["**/*.{js,mjs,cjs}"],
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "module",
      globals: { ...globals.browser, ...globals.node, ...globals.worker },
    },
    rules: {
      // A leading underscore names a parameter kept for the interface's sake.
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // The bad-value tests build arrays with holes on purpose.
    files: ["test/**"],
    rules: { "no-sparse-arrays": "off" },
  },
];
