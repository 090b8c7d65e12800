// Runs the pinned Ruff (test/support/ruff.ts) with this script's arguments, from npm run lint:
// `node test/lint/ruff.ts check integrations/open-webui`.
import { spawnSync } from "node:child_process";
import { installedRuffVersion, RUFF_VERSION, ruffBin } from "../support/ruff.ts";

if (installedRuffVersion() !== RUFF_VERSION) {
  console.error(
    `ruff ${RUFF_VERSION} is not installed at ${ruffBin()}: run node test/setup/ensure-test-deps.ts`,
  );
  process.exit(1);
}
const result = spawnSync(ruffBin(), process.argv.slice(2), { stdio: "inherit" });
process.exit(result.status ?? 1);
