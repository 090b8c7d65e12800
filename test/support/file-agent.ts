// Every test file that talks to the shared real Gateway (test/setup/global-gateway.ts) runs as its
// own agent, so no file sees another file's asks: the product server touches only the sessions of
// its AGENT_ID (docs/ARCHITECTURE.md#routing), and a file's asks are made on its agent's session keys. The Gateway
// refuses runs (`chat.send`) for agents it has no configuration for, so the global setup
// configures one agent per test file, named after the file.
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TEST_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TEST_FILE = /\.test\.ts$/;
/** The Gateway's default agent (test/setup/global-gateway.ts). */
export const DEFAULT_AGENT = "dev";

/** The agent id of a test file: its name without `.test.ts` (`test/e2e/a11y.test.ts` → `a11y`). */
export function agentOfTestFile(file: string): string {
  const id = path
    .basename(file)
    .replace(TEST_FILE, "")
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-");
  if (!id) throw new Error(`no agent id for test file ${file}`);
  return id;
}

/** The agent of the file Vitest runs: a test file's own, else (a script run by Vitest) the default agent `dev`. */
export function agentOfRunningFile(file: string | undefined): string {
  return file !== undefined && TEST_FILE.test(file) ? agentOfTestFile(file) : DEFAULT_AGENT;
}

/** One agent per test file under test/ (each name is unique there: checked, a clash would share an agent). */
export function testFileAgents(root: string = TEST_ROOT): string[] {
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((file) =>
    TEST_FILE.test(file),
  );
  const byAgent = new Map<string, string>();
  for (const file of files) {
    const agent = agentOfTestFile(file);
    const clash = byAgent.get(agent);
    if (clash)
      throw new Error(
        `test files ${clash} and ${file} would share the Gateway agent "${agent}": rename one`,
      );
    byAgent.set(agent, file);
  }
  return [...byAgent.keys()].sort();
}
