// Several instances as separate processes on one Redis and the real Gateway, one killed with SIGKILL
// (no goodbye, no cleanup): the tab showing a card reconnects to a survivor and gets the card again,
// and asks keep arriving on the survivors. Measures the failover time.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  gatewayOperator,
  newChat,
  requestQuestion,
  sessionKeyOf,
  TEST_AGENT,
  waitAnswer,
} from "../support/on-gateway.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import { openTab, type Tab, TEST_AUTH_SECRET, TEST_OWNER } from "../support/tabs.ts";

type Instance = { url: string; child: ChildProcess; output: string[] };

const GATEWAY_FAILOVER_LIMIT_MS = 10_000;

let redis: TestRedis;
let requester: OperatorConnection;
const instances: Instance[] = [];
const tabs: Tab[] = [];
const dirs: string[] = [];

function startInstance(): Promise<Instance> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "asks-instance-"));
  dirs.push(dataDir);
  const child = spawn(process.execPath, [path.resolve("test/support/instance-process.ts")], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      AGENT_ID: TEST_AGENT,
      OWNER_USERS: TEST_OWNER,
      OPENCLAW_GATEWAY_URL: inject("gatewayUrl"),
      OPENCLAW_GATEWAY_TOKEN: inject("gatewayToken"),
      REDIS_URL: redis.url,
      AUTH_SECRET: TEST_AUTH_SECRET,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr }).on("line", (line) => output.push(line));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`instance did not start in 60 s: ${output.join("\n")}`)),
      60_000,
    );
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited with ${code}: ${output.join("\n")}`));
    });
    createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      const instance = { url: (JSON.parse(line) as { url: string }).url, child, output };
      instances.push(instance);
      resolve(instance);
    });
  });
}

async function healthy(instance: Instance): Promise<boolean> {
  const response = await fetch(`${instance.url}/healthz`).catch(() => null);
  return response !== null && ((await response.json()) as { status: string }).status === "ok";
}

function kill(instance: Instance): Promise<void> {
  instance.child.removeAllListeners("exit");
  const exited = new Promise<void>((resolve) => instance.child.once("exit", () => resolve()));
  process.kill(instance.child.pid!, "SIGKILL");
  return exited;
}

async function open(instance: Instance, chatId: string): Promise<Tab> {
  const tab = await openTab(
    instance.url,
    await mintTabToken(secretKey(TEST_AUTH_SECRET), { userId: TEST_OWNER, ttlSeconds: 3600 }),
  );
  tabs.push(tab);
  expect(await tab.send("chat:view", { chatId })).toEqual({ ok: true });
  return tab;
}

beforeAll(async () => {
  redis = await startRedis();
  requester = await gatewayOperator("requester");
  await Promise.all([startInstance(), startInstance(), startInstance()]);
  // Each is connected to the Gateway (and Redis) once /healthz says ok.
  for (const instance of instances) {
    await vi.waitFor(
      async () => {
        if (!(await healthy(instance)))
          throw new Error(`instance never became healthy: ${instance.output.join("\n")}`);
      },
      { timeout: 30_000, interval: 100 },
    );
  }
}, 120_000);

afterAll(async () => {
  for (const tab of tabs) tab.close();
  for (const instance of instances) {
    if (instance.child.exitCode === null && instance.child.signalCode === null)
      await kill(instance);
  }
  await requester?.stop();
  await redis?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("an instance killed with SIGKILL", () => {
  it("the tab that showed its card reconnects to a survivor and gets the card again; new asks are served by the survivors at once", async () => {
    const [doomed, survivor, other] = instances as [Instance, Instance, Instance];
    const chatId = newChat();
    const tab = await open(doomed, chatId);
    const { id } = await requestQuestion(requester, sessionKeyOf(chatId));
    await tab.waitForShow((ask) => ask.id === id);
    // The other survivors took the ask in too.
    const disconnected = new Promise<void>((resolve) =>
      tab.socket.once("disconnect", () => resolve()),
    );

    const killedAt = performance.now();
    await kill(doomed);
    await disconnected;
    // What a tab does when its socket drops: connect again (the load balancer picks a survivor) and view its chat.
    const again = await open(survivor, chatId);
    await again.waitForShow((ask) => ask.id === id);
    const cardBackMs = performance.now() - killedAt;

    // The Gateway link: every instance holds its own, so a new ask is served by a survivor.
    const { id: next } = await requestQuestion(requester, sessionKeyOf(chatId));
    await again.waitForShow((ask) => ask.id === next);
    const newAskMs = performance.now() - killedAt;
    console.info(
      `failover after SIGKILL: card back on a survivor ${Math.round(cardBackMs)} ms after the kill; a new ask shown ${Math.round(newAskMs)} ms after it`,
    );
    expect(newAskMs).toBeLessThan(GATEWAY_FAILOVER_LIMIT_MS);

    // Answered on the survivor: the requester gets exactly that answer, and every survivor ends it.
    const waiting = waitAnswer(requester, id);
    expect(
      await again.send("ask:answer", {
        askId: id,
        answer: { type: "questions", answers: { db: ["SQLite"] } },
      }),
    ).toEqual({ ok: true, status: "answered" });
    expect(await waiting).toMatchObject({
      status: "answered",
      answers: { answers: { db: ["SQLite"] } },
    });
    const dashboard = await open(other, newChat());
    await expect
      .poll(async () => (await dashboard.list("answered")).map((ask) => ask.id), {
        timeout: 10_000,
      })
      .toContain(id);
  }, 90_000);
});
