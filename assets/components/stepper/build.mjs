// Bundles the stepper's ES modules (entry: stepper.js) into dist/stepper.js, the one module view/stepper.py hands
// Streamlit. The built file is committed, so running the app needs no node; tests/test_stepper.py rebuilds it in
// memory and fails when the committed file differs from the sources (`npm run build` fixes that).
//   node build.mjs           write dist/stepper.js
//   node build.mjs --stdout  print the build instead (the staleness test)

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const result = await build({
  entryPoints: [join(here, "stepper.js")],
  bundle: true,
  format: "esm",
  target: "es2022",
  charset: "utf8", // keep "−", "×", "∇" as written
  legalComments: "none",
  write: false,
});
const banner =
  "// Built by assets/components/stepper/build.mjs from the modules beside it; do not edit (npm run build).\n";
const text = banner + result.outputFiles[0].text;
if (process.argv.includes("--stdout")) process.stdout.write(text);
else writeFileSync(join(here, "dist", "stepper.js"), text);
