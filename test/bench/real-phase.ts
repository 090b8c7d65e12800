import { mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import { connectOperator } from "../support/gateway-client.ts";
import { startRealGateway } from "../support/real-gateway.ts";
import { TEST_REPLY } from "../support/replies.ts";
import { nowMs } from "./clock.ts";
import type { ServerProcess } from "./server-link.ts";
import { summarize, type Summary } from "./stats.ts";
import { openTab } from "./tabs.ts";

/**
 * The figure users will see: `question.request` on a real OpenClaw Gateway → `ask:show` on the tab
 * viewing the chat, through a product server (its own process) connected to that Gateway. The
 * requester and the tab are both here, so one clock takes the whole path. Each question is
 * cancelled (and its `ask:close` awaited) before the next.
 */

export type RealResults = Summary & { gatewayStartupMs: number };

export async function runRealPhase(options: {
  spawnServer: () => Promise<ServerProcess>;
  authSecret: string;
  samples: number;
  warmup: number;
  progress(message: string): void;
}): Promise<RealResults> {
  options.progress("starting a real OpenClaw Gateway");
  const gateway = await startRealGateway();
  let server: ServerProcess | null = null;
  try {
    server = await options.spawnServer();
    const { productUrl } = await server.call<{ productUrl: string }>({ cmd: "start-real", gatewayUrl: gateway.url, gatewayToken: gateway.token });
    const chat = `real-${Date.now()}`;
    const tab = await openTab(productUrl, await mintTabToken(secretKey(options.authSecret), { userId: "viewer", chat, reply: TEST_REPLY, ttlSeconds: 3600 }), chat);
    const requester = await connectOperator({ url: gateway.url, token: gateway.token, displayName: "bench requester" });
    try {
      const sample = async (): Promise<number> => {
        const shown = tab.next("ask:show", () => true, 30_000);
        const t0 = nowMs();
        const request = requester.request<{ id: string }>("question.request", {
          questions: [{ questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }] }],
          sessionKey: `agent:dev:openwebui:${chat}`,
          agentId: "dev",
          timeoutMs: 300_000,
        });
        const arrival = await shown;
        const { id } = await request;
        if (arrival.payload.id !== id) throw new Error(`real Gateway: ask:show carried ${arrival.payload.id}, expected ${id}`);
        const closed = tab.next("ask:close", (payload) => payload.askId === id, 30_000);
        await requester.request("question.resolve", { id, cancel: true });
        await closed;
        return arrival.at - t0;
      };
      options.progress(`real Gateway: ${options.warmup} warm-up and ${options.samples} measured questions`);
      for (let i = 0; i < options.warmup; i++) await sample();
      const values: number[] = [];
      for (let i = 0; i < options.samples; i++) {
        values.push(await sample());
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 10));
      }
      tab.close();
      return { ...summarize(values), gatewayStartupMs: gateway.startupMs };
    } finally {
      await requester.stop().catch(() => {});
    }
  } finally {
    await server?.stop();
    await gateway.stop();
  }
}
