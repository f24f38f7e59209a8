// Builds what the mpviz package ships of assets/components into the package, the only place Python reads it from:
// mpviz/presentation/static/ gets the stepper's ES modules (entry stepper.js) bundled into one module and beside it
// the files the hosts load as they are (the component's markup and CSS, the notebook's anywidget module, the lesson
// file's template); mpviz/app/static/ gets the app's own small components (the presenter key, the bit
// flipper). The output is committed, so running the app needs no node; tests/test_stepper.py builds in memory and
// fails when a committed file differs (`npm run build` fixes that).
//   node build.mjs           write the files
//   node build.mjs --stdout  print the build as JSON {path from the repository root: text} (the staleness test)

import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const STEPPER_OUT = "mpviz/presentation/static";
const COPIED = {
  "stepper.html": STEPPER_OUT,
  "stepper.css": STEPPER_OUT,
  "notebook.js": STEPPER_OUT,
  "export.html": STEPPER_OUT,
  "../presenter/presenter_key.js": "mpviz/app/static",
  "../bitflip/bitflip.js": "mpviz/app/static",
  "../bitflip/bitflip.css": "mpviz/app/static",
};

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
const files = { [`${STEPPER_OUT}/stepper.js`]: banner + result.outputFiles[0].text };
for (const [source, out] of Object.entries(COPIED)) {
  files[`${out}/${basename(source)}`] = readFileSync(join(here, source), "utf8");
}
if (process.argv.includes("--stdout")) process.stdout.write(JSON.stringify(files));
else for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
