// eslint for the in-browser components (assets/components: the stepper and the go-to channel it bundles, the
// presenter key, the bit flipper); `npm run lint`, and .ci/run.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["mpviz/presentation/static/**", "node_modules/**"] },
  js.configs.recommended,
  {
    files: ["assets/components/**/*.js"],
    languageOptions: { ecmaVersion: 2025, sourceType: "module", globals: { ...globals.browser } },
    rules: { "no-unused-vars": ["error", { argsIgnorePattern: "^_" }], eqeqeq: ["error", "smart"] },
  },
  {
    files: ["assets/components/stepper/build.mjs", "assets/components/stepper/test/**/*.js", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node } },
  },
];
