// The server side of `npm run bench`, in its own process (started by run.ts with --expose-gc and an
// IPC channel): the in-repo fake Gateway and the product server (createApplication, wired as in
// production, without the UI), and beside them a second fake Gateway feeding the bare relay. The load client
// (the tabs, and the clock) lives in the parent; it drives this process with ipc.ts commands.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Application } from "../../server/app.ts";
import { MemoryPresence } from "../../server/broker/presence.ts";
import { type FakeGateway,startFakeGateway } from "../support/fake-gateway.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";
import { startApplication, testConfig } from "../support/tabs.ts";
import { nowMs } from "./clock.ts";
import type { Command, Counts, Heap, Ready, Reply, Request, Target } from "./ipc.ts";
import { type Relay,startRelay } from "./relay.ts";

const authSecret = process.env.BENCH_AUTH_SECRET;
if (!authSecret || !process.send) {
  console.error("server-process.ts is started by test/bench/run.ts (needs BENCH_AUTH_SECRET and an IPC channel)");
  process.exit(2);
}
const gc = (globalThis as { gc?: (options?: { type: "major" }) => void }).gc;
const verbose = process.env.BENCH_VERBOSE === "1";
const BENCH_ENV = { MAX_CONNECTIONS_PER_ADDRESS: "20000" };

const dataDir = mkdtempSync(path.join(tmpdir(), "asks-bench-"));
const logs: string[] = [];
const log = (line: string) => {
  logs.push(line);
  if (logs.length > 200) logs.shift();
  if (verbose) console.error(`[server] ${line}`);
};

let product: { app: Application; presence: MemoryPresence } | null = null;
let relay: Relay | null = null;
/** The cross-instance pair: its Redis, the instance the Gateway events enter, the one the tab views, and the bare relay through that Redis. */
let cross: { redis: TestRedis; idleGateway: FakeGateway; instances: Application[]; relay: Relay | null } | null = null;
const fakes = new Map<Target, FakeGateway>();

async function startProduct(gatewayUrl: string, gatewayToken: string): Promise<{ app: Application; presence: MemoryPresence }> {
  // The bench's 5,000 tabs all come from loopback: above the default cap per address.
  const config = testConfig(gatewayUrl, gatewayToken, dataDir, BENCH_ENV);
  const presence = new MemoryPresence();
  const server = await startApplication(config, authSecret!, log, { presence });
  await connected(server, gatewayUrl);
  return { app: server, presence };
}

async function connected(server: Application, gatewayUrl: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!server.gateway.status.connected) {
    if (Date.now() > deadline) throw new Error(`the product server did not connect to the Gateway at ${gatewayUrl}: ${logs.slice(-5).join(" | ")}`);
    await sleep(20);
  }
}

/**
 * Two product instances as a deployment runs them (REDIS_URL, one Redis). The events of the `cross`
 * fake Gateway reach only the first; the second's Gateway stays idle, so every card it delivers to
 * its tab came from the first through Redis (presence and the Socket.IO adapter).
 */
async function startCross(): Promise<{ viewerUrl: string; relayUrl: string }> {
  const redis = await startRedis({ appendfsync: "everysec" });
  const source = await startFakeGateway({ agents: ["dev"] });
  const idleGateway = await startFakeGateway({ agents: ["dev"] });
  const relaySource = await startFakeGateway({ agents: ["dev"] });
  fakes.set("cross", source);
  fakes.set("cross-relay", relaySource);
  cross = { redis, idleGateway, instances: [], relay: null };
  const env = { ...BENCH_ENV, REDIS_URL: redis.url, AUTH_SECRET: authSecret!, REDIS_KEY_PREFIX: "bench:" };
  for (const gateway of [source, idleGateway]) {
    const instance = await startApplication(testConfig(gateway.url, gateway.token, dataDir, env), authSecret!, log);
    cross.instances.push(instance);
    await connected(instance, gateway.url);
  }
  cross.relay = await startRelay(relaySource.url, relaySource.token, { redisUrl: redis.url });
  return { viewerUrl: cross.instances[1]!.url, relayUrl: cross.relay.url };
}

function fake(target: Target): FakeGateway {
  const gateway = fakes.get(target);
  if (!gateway) throw new Error("start-fake first");
  return gateway;
}

/** The bench counts the viewing tabs to let disconnects settle. */
function productViewers(): number {
  return product?.presence.viewingTabs ?? -1;
}

async function fullGc(): Promise<Heap> {
  if (!gc) throw new Error("run the server process with --expose-gc");
  for (let pass = 0; pass < 4; pass++) {
    gc({ type: "major" });
    await sleep(20);
  }
  const usage = process.memoryUsage();
  return { heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers, rss: usage.rss };
}

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case "start-fake": {
      // Two identical fake Gateways, so the product and the relay each get only their own events.
      fakes.set("product", await startFakeGateway({ agents: ["dev"] }));
      fakes.set("relay", await startFakeGateway({ agents: ["dev"] }));
      product = await startProduct(fake("product").url, fake("product").token);
      relay = await startRelay(fake("relay").url, fake("relay").token);
      return { productUrl: product.app.url, relayUrl: relay.url };
    }
    case "start-cross":
      return startCross();
    case "start-real": {
      product = await startProduct(command.gatewayUrl, command.gatewayToken);
      return { productUrl: product.app.url };
    }
    case "ask": {
      const emittedAt = nowMs();
      const record = fake(command.target).createQuestion({ sessionKey: `agent:dev:openwebui:${command.chat}` });
      return { id: record.id, emittedAt };
    }
    case "cancel": {
      fake(command.target).resolveQuestion(command.askId, { cancel: true });
      return null;
    }
    case "answered": {
      const wanted = new Set(command.ids);
      return fake(command.target).questions.filter((record) => wanted.has(record.id) && record.status === "answered").length;
    }
    case "counts":
      return { productViewers: productViewers(), relaySockets: relay?.sockets() ?? 0 } satisfies Counts;
    case "heap":
      return fullGc();
    case "ping":
      return null;
    case "gateway-status":
      return product?.app.gateway.status ?? null;
    case "stop": {
      await stopAll();
      return null;
    }
  }
}

async function stopAll(): Promise<void> {
  await product?.app.stop();
  await relay?.stop();
  for (const instance of cross?.instances ?? []) await instance.stop();
  await cross?.relay?.stop();
  await cross?.idleGateway.stop();
  await cross?.redis.stop();
  cross = null;
  for (const gateway of fakes.values()) await gateway.stop();
  product = null;
  relay = null;
  fakes.clear();
  rmSync(dataDir, { recursive: true, force: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

process.on("message", (message: Request) => {
  if (verbose) console.error(`[server] <- ${JSON.stringify(message)}`);
  const { id, ...command } = message;
  handle(command).then(
    (result) => process.send!({ id, ok: true, result: result ?? null } satisfies Reply),
    (error: unknown) => {
      const text = error instanceof Error ? error.stack ?? error.message : String(error);
      process.send!({ id, ok: false, error: `${text}\nlast server log lines:\n${logs.slice(-20).join("\n")}` } satisfies Reply);
    },
  );
});
// The parent went away: never linger.
process.on("disconnect", () => {
  stopAll().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
process.send({ ready: true, pid: process.pid } satisfies Ready);
