// The real Gateway killed (SIGKILL) and started again while asks wait (issue 29 point 2): the runs
// that raised them are gone, so each card closes with a record that says so, not "Expired"; the
// store and the dashboard say the same, and once the Gateway is back new asks show as usual. This
// file starts a Gateway of its own: restarting the run's shared one would end other files' asks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_RESTARTED } from "../../lib/outcomes.ts";
import { connectOperator, type OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  requestApproval,
  requestQuestion,
  sessionKeyOf,
  TEST_AGENT,
  useTabs,
} from "../support/on-gateway.ts";
import { type RealGateway, startRealGateway } from "../support/real-gateway.ts";
import { startTestServer, type TestServer, waitConnected } from "../support/tabs.ts";

let gateway: RealGateway;
let server: TestServer;
const operators: OperatorConnection[] = [];
const { tab } = useTabs({ server: () => server });

const operator = async (displayName: string) => {
  const connection = await connectOperator({ url: gateway.url, token: gateway.token, displayName });
  operators.push(connection);
  return connection;
};

beforeAll(async () => {
  gateway = await startRealGateway();
  server = await startTestServer({
    gatewayUrl: gateway.url,
    gatewayToken: gateway.token,
    env: { AGENT_ID: TEST_AGENT },
  });
  await waitConnected(server);
}, 240_000);

afterAll(async () => {
  await server?.dispose();
  for (const connection of operators) await connection.stop().catch(() => {});
  await gateway?.stop();
});

describe("the real Gateway restarts while asks wait", () => {
  it("closes each card with the run gone with the Gateway, and shows new asks once it is back", async () => {
    const chatId = newChat();
    const requester = await operator("requester");
    const watcher = await operator("watcher");
    const viewer = await tab(chatId);
    const approval = requestApproval(requester, watcher, "plugin", {
      pluginId: "deploy-kit",
      title: "Deploy to production",
      description: "Pushes the current build to prod",
      toolName: "deploy",
      sessionKey: sessionKeyOf(chatId),
      timeoutMs: 600_000,
    });
    const question = await requestQuestion(requester, sessionKeyOf(chatId));
    const shownApproval = await viewer.waitForShow((ask) => ask.kind === "approval");
    await viewer.waitForShow((ask) => ask.id === question.id);

    await gateway.restart();

    for (const id of [shownApproval.id, question.id]) {
      const close = await viewer.waitForClose(id);
      expect(close).toMatchObject({ reason: "cancelled", summary: GATEWAY_RESTARTED.summary });
      expect(await server.store.get(id)).toMatchObject({
        status: "cancelled",
        resolution: { summary: GATEWAY_RESTARTED.summary },
      });
    }
    await approval.decision.catch(() => {}); // its connection went with the Gateway

    await waitConnected(server, 120_000);
    const again = await operator("requester again");
    const next = await requestQuestion(again, sessionKeyOf(chatId));
    expect((await viewer.waitForShow((ask) => ask.id === next.id)).status).toBe("pending");
  }, 300_000);
});
