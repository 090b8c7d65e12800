// The line cap: no product file over 350 lines (docs/TESTING.md#what-npm-test-runs). Product files
// are the tracked sources outside tests and docs; npm test runs this after the format check, so the
// lines counted are formatted ones. `--report-only` lists the files over the cap and exits 0.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export const LINE_CAP = 350;

const SOURCE = /\.(ts|tsx|js|mjs|cjs|py|css)$/;
const TEST = /(^|\/)test\/|\.test\.tsx?$|(^|\/)test_[^/]*\.py$/;
/** Open WebUI installs a filter as one file, pasted or uploaded whole: it cannot be split. */
const ONE_FILE_BY_DESIGN = new Set(["integrations/open-webui/openclaw_asks_filter.py"]);

export function isProductFile(path: string): boolean {
  return SOURCE.test(path) && !TEST.test(path) && !ONE_FILE_BY_DESIGN.has(path);
}

/** Lines as an editor numbers them: a final newline does not start another. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { encoding: "utf8" }).split("\0").filter(Boolean);
}

if (import.meta.main) {
  const over = trackedFiles()
    .filter(isProductFile)
    .map((path) => ({ path, lines: lineCount(readFileSync(path, "utf8")) }))
    .filter(({ lines }) => lines > LINE_CAP)
    .sort((a, b) => b.lines - a.lines);
  for (const { path, lines } of over) console.log(`${path}: ${lines} lines (cap ${LINE_CAP})`);
  if (over.length === 0) console.log(`line cap: no product file over ${LINE_CAP} lines`);
  else if (process.argv.includes("--report-only"))
    console.log(`line cap: ${over.length} product files over ${LINE_CAP} lines (reported only)`);
  else process.exit(1);
}
