// Starts the real product (`node server/main.ts`: Next.js pages + Socket.IO on one port) as a child
// process for end-to-end tests, against a given Gateway, with a throwaway DATA_DIR.
//
// The production build (`npm run build`, `.next/`) must exist. `npm test` builds first (that build is
// also the run's type-check); when `.next/BUILD_ID` is missing, or older than any file the pages are
// built from, this helper builds once (guarded by a lock directory so parallel test files build only
// once). Set E2E_SKIP_BUILD=1 to use whatever build is there.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { decodeJwt } from "jose";
import { mintActToken, mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import type { ReplyClaim } from "../../server/broker/ports.ts";
import { freePort } from "./real-gateway.ts";
import { TEST_REPLY } from "./replies.ts";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export type AppServerOptions = {
  gatewayUrl: string;
  gatewayToken: string;
  /** Extra or overriding environment (e.g. OPENWEBUI_ORIGINS, OWNER_USERS). */
  env?: Record<string, string>;
  /** Wait until /healthz reports the Gateway connected (asked with an owner token). Default true. */
  waitForGateway?: boolean;
  /** How long to wait for "is running on". Default 60 s. */
  startTimeoutMs?: number;
};

export type AppServer = {
  url: string;
  port: number;
  dataDir: string;
  authSecret: string;
  /** A signed tab token (HS256, AUTH_SECRET): `chat` makes it an embed token for that one chat. */
  /**
   * With `chat`, an embed token of `reply` (by default one reply shared by every embed token: live);
   * `null` mints one as the first filter did, with no reply.
   */
  mintToken(userId: string, chat?: string, reply?: ReplyClaim | null): Promise<string>;
  /**
   * The act token the server would give the filter for the reply a widget's token names (its user,
   * chat and reply), or null for a token that names no reply: what the browser's stand-in for the
   * filter's relay hands the widget (test/support/browser.ts).
   */
  actTokenFor(widgetToken: string): Promise<string | null>;
  /** The token of an owner link printed by `npm run owner-link` for this server (revocable: it may mint devices and turn on push). */
  ownerLink(): Promise<string>;
  /** The recent output lines of the server (stdout and stderr). */
  logs(): string[];
  /** SIGKILL, as a crash or an OOM kill does: no goodbye to tabs or the Gateway; the data folder stays. */
  kill(): Promise<void>;
  /** Starts the server again (after `kill`, or killing it first), on the same port, data folder and secret. */
  startAgain(): Promise<void>;
  stop(): Promise<void>;
};

const BUILD_INPUTS = [
  "app",
  "components",
  "client",
  "lib",
  "next.config.js",
  "postcss.config.mjs",
  "tsconfig.json",
  "package.json",
];
const STOP_GRACE_MS = 5_000;

function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target))
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

function buildIsCurrent(): boolean {
  const buildId = path.join(PROJECT_ROOT, ".next", "BUILD_ID");
  if (!existsSync(buildId)) return false;
  if (process.env.E2E_SKIP_BUILD === "1") return true;
  const built = statSync(buildId).mtimeMs;
  return BUILD_INPUTS.every((input) => newestMtime(path.join(PROJECT_ROOT, input)) <= built);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Makes sure a current production build exists, building at most once at a time. */
export async function ensureBuild(): Promise<void> {
  if (buildIsCurrent()) return;
  const lock = path.join(PROJECT_ROOT, ".next-build.lock");
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Someone else is building: wait for them, then check again.
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${lock}; remove it if no build is running`);
      await sleep(1000);
      if (buildIsCurrent()) return;
    }
  }
  try {
    if (buildIsCurrent()) return;
    const next = path.join(PROJECT_ROOT, "node_modules", "next", "dist", "bin", "next");
    // `next build` rewrites tsconfig.json with values it suggests; a test run must not change the repo.
    const tsconfigPath = path.join(PROJECT_ROOT, "tsconfig.json");
    const tsconfig = readFileSync(tsconfigPath, "utf8");
    try {
      const result = spawnSync(process.execPath, [next, "build"], {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          NEXT_TELEMETRY_DISABLED: "1",
          PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`,
        },
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      });
      if (result.status !== 0) {
        throw new Error(
          `next build failed (exit ${result.status}):\n${(result.stdout ?? "").slice(-4000)}\n${(result.stderr ?? "").slice(-4000)}`,
        );
      }
    } finally {
      if (readFileSync(tsconfigPath, "utf8") !== tsconfig) writeFileSync(tsconfigPath, tsconfig);
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export async function startAppServer(options: AppServerOptions): Promise<AppServer> {
  await ensureBuild();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      lastError = error;
      if (!/EADDRINUSE/.test(String(error))) throw error;
    }
  }
  throw lastError;
}

type ServerProcess = {
  /** Resolves once the server printed "is running on"; rejects if it exits first. */
  running: Promise<void>;
  exited: () => boolean;
  exit: Promise<void>;
  kill(signal: NodeJS.Signals): void;
};

/** Spawns `node server/main.ts`, collecting its output lines into `lines`. */
function spawnServer(env: NodeJS.ProcessEnv, lines: string[]): ServerProcess {
  const child = spawn(process.execPath, ["server/main.ts"], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error("could not spawn server/main.ts");
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const running = new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line) continue;
        lines.push(line);
        if (lines.length > 500) lines.shift();
        if (line.includes("is running on")) resolve();
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    void exit.then(() =>
      reject(new Error(`server/main.ts exited before it was running:\n${lines.join("\n")}`)),
    );
  });
  running.catch(() => {});
  return { running, exited: () => exited, exit, kill: (signal) => child.kill(signal) };
}

async function startOnce(options: AppServerOptions): Promise<AppServer> {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), "openclaw-asks-e2e-"));
  // Several instances of one deployment share theirs (options.env).
  const authSecret = options.env?.AUTH_SECRET ?? randomBytes(32).toString("hex");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    AUTH_SECRET: authSecret,
    OWNER_USERS: "owner",
    OPENCLAW_GATEWAY_URL: options.gatewayUrl,
    OPENCLAW_GATEWAY_TOKEN: options.gatewayToken,
    AGENT_ID: "dev",
    OPENWEBUI_ORIGINS: "",
    ...options.env,
  };
  const url = `http://127.0.0.1:${port}`;
  const key = secretKey(authSecret);
  const owner = (env.OWNER_USERS ?? "owner").split(",")[0]!.trim();
  const lines: string[] = [];
  let server = spawnServer(env, lines);

  const kill = async () => {
    if (server.exited()) return;
    server.kill("SIGKILL");
    await server.exit;
  };
  const stop = async () => {
    if (!server.exited()) {
      server.kill("SIGTERM");
      const stopped = await Promise.race([
        server.exit.then(() => true),
        sleep(STOP_GRACE_MS).then(() => false),
      ]);
      if (!stopped) await kill();
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const ready = async () => {
    await withTimeout(
      server.running,
      options.startTimeoutMs ?? 60_000,
      () => `server/main.ts did not print "is running on":\n${lines.join("\n")}`,
    );
    if (options.waitForGateway ?? true)
      await waitForGateway(
        url,
        await mintTabToken(key, { userId: owner, ttlSeconds: 600 }),
        30_000,
      );
  };
  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    port,
    dataDir,
    authSecret,
    mintToken: (userId, chat, reply = TEST_REPLY) =>
      mintTabToken(key, {
        userId,
        chat,
        reply: chat ? (reply ?? undefined) : undefined,
        ttlSeconds: 3600,
      }),
    actTokenFor: async (widgetToken) => {
      const { sub, chat, msg, mts } = decodeJwt(widgetToken);
      if (typeof sub !== "string" || typeof chat !== "string") return null;
      if (typeof msg !== "string" || typeof mts !== "number") return null;
      return mintActToken(key, {
        userId: sub,
        chat,
        reply: { msg, mts },
        ttlSeconds: 3600,
        now: Date.now(),
      });
    },
    ownerLink: () => printedOwnerLink({ ...env, PUBLIC_URL: url }),
    logs: () => [...lines],
    kill,
    startAgain: async () => {
      await kill();
      server = spawnServer(env, lines);
      await ready();
    },
    stop,
  };
}

/** Runs `npm run owner-link` (the server's own environment: its DATA_DIR or Redis) and resolves with the printed link's token. */
async function printedOwnerLink(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, ["server/owner-link.ts"], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const token = /\?token=(\S+)$/m.exec(output)?.[1];
  if (code !== 0 || !token) throw new Error(`npm run owner-link failed (exit ${code}): ${output}`);
  return token;
}

/** /healthz gives the Gateway's status to an owner's token only. */
async function waitForGateway(url: string, ownerToken: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/healthz`, {
        headers: { authorization: `Bearer ${ownerToken}` },
      });
      const body = (await response.json()) as { gateway?: { connected?: boolean } };
      if (body.gateway?.connected) return;
      last = JSON.stringify(body);
    } catch (error) {
      last = String(error);
    }
    await sleep(200);
  }
  throw new Error(
    `the server did not connect to the Gateway within ${timeoutMs} ms (last /healthz: ${last})`,
  );
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms)),
      ),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
