import { mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import { connectOperator } from "../support/gateway-client.ts";
import { startRealGateway } from "../support/real-gateway.ts";
import { TEST_REPLY } from "../support/replies.ts";
import { nowMs } from "./clock.ts";
import type { ServerProcess } from "./server-link.ts";
import { summarize, type Summary } from "./stats.ts";
import { type BenchTab, openTab } from "./tabs.ts";

/**
 * The figure users will see: `question.request` on a real OpenClaw Gateway → `ask:show` on the tab
 * viewing the chat, through a product server (its own process) connected to that Gateway. The
 * requester and the tab are both here, so one clock takes the whole path. Each question is
 * cancelled (and its `ask:close` awaited) before the next. Then, with `idleTabs` idle tabs opened
 * (each viewing its own chat, as the server writes for each), handoff of a question the real Gateway
 * raised: 100 `chat:view`s of an older tab → `ask:show` there and `ask:close` on the other, paced as
 * a person opens tabs; the slowest is reported with the p99 (issue 29.7: a stall of the event loop).
 */

export type RealResults = Summary & {
  gatewayStartupMs: number;
  handoff: Summary & { idleTabs: number };
};

const HANDOFFS = 100;

export async function runRealPhase(options: {
  spawnServer: () => Promise<ServerProcess>;
  authSecret: string;
  samples: number;
  warmup: number;
  idleTabs: number;
  progress(message: string): void;
}): Promise<RealResults> {
  options.progress("starting a real OpenClaw Gateway");
  const gateway = await startRealGateway();
  let server: ServerProcess | null = null;
  try {
    server = await options.spawnServer();
    const { productUrl } = await server.call<{ productUrl: string }>({ cmd: "start-real", gatewayUrl: gateway.url, gatewayToken: gateway.token });
    const chat = `real-${Date.now()}`;
    const tokenFor = (forChat: string) => mintTabToken(secretKey(options.authSecret), { userId: "viewer", chat: forChat, reply: TEST_REPLY, ttlSeconds: 3600 });
    const tab = await openTab(productUrl, await tokenFor(chat), chat);
    const requester = await connectOperator({ url: gateway.url, token: gateway.token, displayName: "bench requester" });
    try {
      const ask = (inChat: string) =>
        requester.request<{ id: string }>("question.request", {
          questions: [{ questionId: "db", header: "Database", question: "Which database?", options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }] }],
          sessionKey: `agent:dev:openwebui:${inChat}`,
          agentId: "dev",
          timeoutMs: 300_000,
        });
      const sample = async (): Promise<number> => {
        const shown = tab.next("ask:show", () => true, 30_000);
        const t0 = nowMs();
        const request = ask(chat);
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
      const delivery = summarize(values);

      options.progress(`real Gateway: ${options.idleTabs} idle tabs, then ${HANDOFFS} handoffs`);
      const idle: BenchTab[] = [];
      for (let i = 0; i < options.idleTabs; i += 100)
        idle.push(...(await Promise.all(Array.from({ length: Math.min(100, options.idleTabs - i) }, async (_, j) => openTab(productUrl, await tokenFor(`real-idle-${i + j}`), `real-idle-${i + j}`)))));
      const handoffChat = `real-handoff-${Date.now()}`;
      const pair = [await openTab(productUrl, await tokenFor(handoffChat), handoffChat), await openTab(productUrl, await tokenFor(handoffChat), handoffChat)];
      const firstShown = pair[1]!.next("ask:show", () => true, 30_000);
      const { id } = await ask(handoffChat);
      await firstShown;
      const handoffs: number[] = [];
      for (let i = 0; i < HANDOFFS; i++) {
        const [older, newer] = i % 2 === 0 ? [pair[0]!, pair[1]!] : [pair[1]!, pair[0]!];
        const shownThere = older.next("ask:show", (payload) => payload.id === id);
        const closedHere = newer.next("ask:close", (payload) => payload.askId === id && payload.reason === "handed-off");
        const t0 = nowMs();
        await older.send("chat:view", { chatId: handoffChat });
        const [show, close] = await Promise.all([shownThere, closedHere]);
        handoffs.push(Math.max(show.at, close.at) - t0);
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
      }
      await requester.request("question.resolve", { id, cancel: true });
      for (const one of [...pair, ...idle]) one.close();
      return { ...delivery, gatewayStartupMs: gateway.startupMs, handoff: { ...summarize(handoffs), idleTabs: options.idleTabs } };
    } finally {
      await requester.stop().catch(() => {});
    }
  } finally {
    await server?.stop();
    await gateway.stop();
  }
}
