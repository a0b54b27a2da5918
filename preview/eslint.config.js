// ESLint flat config of the prompt preview (`make check` runs it): the
// recommended rules on the page, the element, its worker, the tests and the
// benches. The code runs in Node, in browsers and in the element's worker,
// so all three sets of globals are known. Installed and copied files are not
// linted.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "react.json"] },
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
];
