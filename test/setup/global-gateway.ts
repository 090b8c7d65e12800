// Vitest globalSetup: one real OpenClaw Gateway on the scripted stub model for the whole run,
// shared by every test file through `inject("gatewayUrl")` etc. Each test file runs as its own
// agent (test/support/file-agent.ts), so files never see each other's asks; `dev` stays the default.
//
// Env:
// - OPENCLAW_GATEWAY_REUSE_URL + OPENCLAW_GATEWAY_REUSE_TOKEN (+ OPENCLAW_STUB_MODEL_REUSE_URL):
//   use an already running Gateway instead, e.g. one started with
//   `node test/setup/global-gateway.ts` (prints these exports and runs until Ctrl-C).
// - OPENCLAW_TEST_GATEWAY=off: start nothing (unit-only runs); injected values are "".
import type { TestProject } from "vitest/node";
import { DEFAULT_AGENT, testFileAgents } from "../support/file-agent.ts";
import type { RealGateway } from "../support/real-gateway.ts";
import { startRealGateway } from "../support/real-gateway.ts";
import type { StubModel } from "../support/stub-model.ts";
import { startStubModel } from "../support/stub-model.ts";

declare module "vitest" {
  export interface ProvidedContext {
    gatewayUrl: string;
    gatewayToken: string;
    stubModelUrl: string;
  }
}

export type HarnessContext = { gatewayUrl: string; gatewayToken: string; stubModelUrl: string };

/** Starts the stub model, then a Gateway configured to use it. */
export async function startHarness(
  opts: { keepGatewayLogLines?: number; maxConcurrent?: number } = {},
): Promise<HarnessContext & { gateway: RealGateway; stub: StubModel; stop(): Promise<void> }> {
  const stub = await startStubModel();
  let gateway: RealGateway;
  try {
    gateway = await startRealGateway({
      stubModelUrl: stub.url,
      agentId: DEFAULT_AGENT,
      moreAgents: testFileAgents(),
      keepLogLines: opts.keepGatewayLogLines,
      maxConcurrent: opts.maxConcurrent,
    });
  } catch (error) {
    await stub.stop();
    throw error;
  }
  return {
    gatewayUrl: gateway.url,
    gatewayToken: gateway.token,
    stubModelUrl: stub.url,
    gateway,
    stub,
    stop: async () => {
      await gateway.stop();
      await stub.stop();
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = process.env;
  if (env.OPENCLAW_TEST_GATEWAY === "off") {
    provideAll(project, { gatewayUrl: "", gatewayToken: "", stubModelUrl: "" });
    return async () => {};
  }
  if (env.OPENCLAW_GATEWAY_REUSE_URL) {
    provideAll(project, {
      gatewayUrl: env.OPENCLAW_GATEWAY_REUSE_URL,
      gatewayToken: env.OPENCLAW_GATEWAY_REUSE_TOKEN ?? "",
      stubModelUrl: env.OPENCLAW_STUB_MODEL_REUSE_URL ?? "",
    });
    return async () => {};
  }
  // A run waiting on an ask holds one of the Gateway's run slots; OpenClaw's cap, max(8, 4 per CPU),
  // would queue the real Open WebUI suite's ninth waiting chat on a 2-core machine. That suite raises
  // it as docs/OPEN-WEBUI.md tells operators whose people keep more chats waiting; the others keep
  // OpenClaw's default.
  const harness = await startHarness({
    maxConcurrent: env.OPENCLAW_ASKS_OPEN_WEBUI === "1" ? 16 : undefined,
  });
  console.log(
    `[global-gateway] OpenClaw Gateway ready at ${harness.gatewayUrl} in ${harness.gateway.startupMs} ms (stub model ${harness.stubModelUrl})`,
  );
  provideAll(project, harness);
  return harness.stop;
}

function provideAll(project: TestProject, ctx: HarnessContext): void {
  project.provide("gatewayUrl", ctx.gatewayUrl);
  project.provide("gatewayToken", ctx.gatewayToken);
  project.provide("stubModelUrl", ctx.stubModelUrl);
}

// Standalone: keep one harness running across many `vitest` runs (saves the Gateway start-up).
if (import.meta.main) {
  let harness: Awaited<ReturnType<typeof startHarness>> | undefined;
  // A signal during start-up just exits: real-gateway.ts's 'exit' hook kills the Gateway then.
  // (Without a handler, Node would die on the signal and skip that hook.)
  const shutdown = () => void (harness?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
  harness = await startHarness();
  console.log(`export OPENCLAW_GATEWAY_REUSE_URL=${harness.gatewayUrl}`);
  console.log(`export OPENCLAW_GATEWAY_REUSE_TOKEN=${harness.gatewayToken}`);
  console.log(`export OPENCLAW_STUB_MODEL_REUSE_URL=${harness.stubModelUrl}`);
  console.log(
    `# ready in ${harness.gateway.startupMs} ms; Ctrl-C stops the Gateway and the stub model`,
  );
}
