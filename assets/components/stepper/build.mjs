// Builds what the mpviz package ships of the stepper into mpviz/presentation/static/, the only place Python reads
// it from (mpviz.presentation.stepper_payload): the stepper's ES modules (entry stepper.js) bundled into one module,
// and beside it the files the hosts load as they are (the component's markup and CSS, the notebook's anywidget
// module, the lesson file's template). The output is committed, so running the app needs no node;
// tests/test_stepper.py builds in memory and fails when a committed file differs (`npm run build` fixes that).
//   node build.mjs           write mpviz/presentation/static/
//   node build.mjs --stdout  print the build as JSON {name: text} instead (the staleness test)

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "..", "mpviz", "presentation", "static");
const COPIED = ["stepper.html", "stepper.css", "notebook.js", "export.html"];

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
const files = { "stepper.js": banner + result.outputFiles[0].text };
for (const name of COPIED) files[name] = readFileSync(join(here, name), "utf8");
if (process.argv.includes("--stdout")) process.stdout.write(JSON.stringify(files));
else for (const [name, text] of Object.entries(files)) writeFileSync(join(out, name), text);
