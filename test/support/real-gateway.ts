// Starts a real, throwaway OpenClaw Gateway (the pinned npm release) for tests.
// Also the single source of truth for where that release is cached, so the
// installer (test/setup/ensure-test-deps.ts) and the harness always agree.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const OPENCLAW_VERSION = "2026.9.6";

/** Cache folder for the pinned Gateway, outside the repo: `$OPENCLAW_TEST_CACHE_DIR`, else `${XDG_CACHE_HOME:-~/.cache}/openclaw-<version>`. */
export function openclawCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPENCLAW_TEST_CACHE_DIR) return env.OPENCLAW_TEST_CACHE_DIR;
  const cacheRoot = env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cacheRoot, `openclaw-${OPENCLAW_VERSION}`);
}

export function openclawBin(cacheDir: string = openclawCacheDir()): string {
  return join(cacheDir, "node_modules", ".bin", "openclaw");
}

/** The installed openclaw version in the cache, or null when absent or unreadable. */
export function installedOpenclawVersion(cacheDir: string = openclawCacheDir()): string | null {
  if (!existsSync(openclawBin(cacheDir))) return null;
  try {
    const pkg = JSON.parse(
      readFileSync(join(cacheDir, "node_modules", "openclaw", "package.json"), "utf8"),
    ) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : null;
  } catch {
    return null;
  }
}

/** A free loopback TCP port (released before returning; a small race is handled by retrying the start). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error("no free port"))));
    });
  });
}

export type StartRealGatewayOptions = {
  /** Base URL of an OpenAI-compatible model server (the stub): writes a config with agent `agentId` on model `stub/scripted` and starts without `--dev`. */
  stubModelUrl?: string;
  /** Agent id of the configured default agent (only with `stubModelUrl`). Default `dev`, as `--dev` uses. */
  agentId?: string;
  /** More agents to configure (only with `stubModelUrl`): the test harness gives each test file its own. */
  moreAgents?: string[];
  /** How long to wait for `[gateway] ready`. Default 60 s (about 5-25 s seen; more on a loaded machine). */
  readyTimeoutMs?: number;
  /** Log lines kept for diagnostics. Default 200. */
  keepLogLines?: number;
  /** The Gateway's run cap, `agents.defaults.maxConcurrent` (only with `stubModelUrl`). Default: OpenClaw's. */
  maxConcurrent?: number;
};

export type RealGateway = {
  url: string;
  token: string;
  port: number;
  home: string;
  pid: number;
  /** Milliseconds from spawn to `[gateway] ready`. */
  startupMs: number;
  /** The most recent Gateway output lines (ANSI colours stripped). */
  logs(): string[];
  stop(): Promise<void>;
  /**
   * Kills the Gateway with SIGKILL and starts it again on the same port, home and token: what the
   * server sees when the Gateway crashes and comes back. `pid` and `startupMs` are the new process's.
   */
  restart(): Promise<void>;
};

const READY_MARKER = "[gateway] ready";
const STOP_GRACE_MS = 3_000;

// Every live Gateway process group, so a dying test process never leaves one behind.
const liveGroups = new Map<number, string>();
let exitHandlerInstalled = false;
function trackGroup(pid: number, home: string): void {
  liveGroups.set(pid, home);
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on("exit", () => {
    for (const [groupPid, groupHome] of liveGroups) {
      killGroup(groupPid, "SIGKILL");
      rmSync(groupHome, { recursive: true, force: true });
    }
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Group already gone.
  }
}

/** The harness's own OpenClaw plugin: asks for approval before its marker tool runs (see its index.js). */
export const APPROVAL_TEST_PLUGIN_ID = "asks-approval-test";
export const APPROVAL_TEST_PLUGIN_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "plugins",
  APPROVAL_TEST_PLUGIN_ID,
);

export function stubGatewayConfig(
  home: string,
  stubModelUrl: string,
  agentId: string,
  moreAgents: string[] = [],
  maxConcurrent?: number,
): object {
  const workspace = join(home, "workspace");
  const entries: Record<string, object> = {
    [agentId]: { default: true, workspace },
    // A second agent, so tests can prove sessions of other agents are never touched.
    other: { workspace: join(home, "workspace-other") },
  };
  for (const agent of moreAgents) {
    if (agent in entries) throw new Error(`agent "${agent}" is configured twice`);
    entries[agent] = { workspace: join(home, `workspace-${agent}`) };
  }
  return {
    agents: {
      defaults: {
        workspace,
        skipBootstrap: true,
        model: "stub/scripted",
        ...(maxConcurrent === undefined ? {} : { maxConcurrent }),
      },
      entries,
    },
    models: {
      providers: {
        stub: {
          baseUrl: `${stubModelUrl.replace(/\/+$/, "")}/v1`,
          apiKey: "stub",
          api: "openai-completions",
          models: [
            {
              id: "scripted",
              name: "Scripted",
              reasoning: false,
              input: ["text"],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: 128000,
              maxTokens: 4096,
            },
          ],
        },
      },
    },
    // The OpenAI-compatible endpoint Open WebUI connects to (docs/gateway/openai-http-api.md in the
    // openclaw package), off by default.
    gateway: {
      mode: "local",
      bind: "loopback",
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
    // Approvals from their real sources: the test plugin's `before_tool_call`, and host exec that
    // asks (a live run's `exec {host: "gateway", ask: "always"}` raises `exec.approval.requested`).
    plugins: {
      load: { paths: [APPROVAL_TEST_PLUGIN_DIR] },
      entries: { [APPROVAL_TEST_PLUGIN_ID]: { enabled: true } },
    },
    tools: { exec: { mode: "ask", host: "gateway" } },
    // Keep the file log inside the throwaway HOME instead of the shared /tmp/openclaw.
    logging: { file: join(home, "openclaw.log") },
  };
}

/** Starts a real Gateway on a free loopback port with a throwaway HOME and a random token. */
export async function startRealGateway(opts: StartRealGatewayOptions = {}): Promise<RealGateway> {
  const bin = openclawBin();
  if (!existsSync(bin)) {
    throw new Error(
      `OpenClaw ${OPENCLAW_VERSION} is not installed at ${bin}; run: node test/setup/ensure-test-deps.ts`,
    );
  }
  // A port picked by freePort() can be taken before the Gateway binds it: retry with another.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(bin, opts);
    } catch (error) {
      lastError = error;
      if (!/EADDRINUSE|already in use/i.test(String(error))) throw error;
    }
  }
  throw lastError;
}

async function startOnce(bin: string, opts: StartRealGatewayOptions): Promise<RealGateway> {
  const port = await freePort();
  const token = randomBytes(24).toString("hex");
  const home = await mkdtemp(join(tmpdir(), "openclaw-test-home-"));

  const args = [
    "gateway",
    "run",
    "--allow-unconfigured",
    "--auth",
    "token",
    "--port",
    String(port),
    "--bind",
    "loopback",
  ];
  if (opts.stubModelUrl) {
    const config = stubGatewayConfig(
      home,
      opts.stubModelUrl,
      opts.agentId ?? "dev",
      opts.moreAgents,
      opts.maxConcurrent,
    );
    await mkdir(join(home, "workspace"), { recursive: true });
    await mkdir(join(home, ".openclaw"), { recursive: true });
    await writeFile(join(home, ".openclaw", "openclaw.json"), JSON.stringify(config, null, 2));
  } else {
    args.splice(2, 0, "--dev");
  }

  const env = {
    ...gatewayEnv(process.env),
    HOME: home,
    OPENCLAW_GATEWAY_TOKEN: token,
    // openclaw's bin is `#!/usr/bin/env node` and it spawns `node` workers: this Node (24) first.
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
  };

  const launch = () =>
    spawnGateway(bin, args, env, home, {
      keep: opts.keepLogLines ?? 200,
      // About 5 s here when quiet, 25 s on a cold machine; far longer while other suites load both cores.
      readyTimeoutMs: opts.readyTimeoutMs ?? 180_000,
    });
  const removeHome = () => rm(home, { recursive: true, force: true, maxRetries: 3 });
  let running: Running;
  try {
    running = await launch();
  } catch (error) {
    await removeHome();
    throw error;
  }
  const gateway: RealGateway = {
    url: `ws://127.0.0.1:${port}`,
    token,
    port,
    home,
    pid: running.pid,
    startupMs: running.startupMs,
    logs: () => running.logs(),
    async stop() {
      await running.stop();
      await removeHome();
    },
    async restart() {
      await running.kill();
      running = await launch();
      gateway.pid = running.pid;
      gateway.startupMs = running.startupMs;
    },
  };
  return gateway;
}

type Running = {
  pid: number;
  startupMs: number;
  logs(): string[];
  /** SIGTERM, then SIGKILL soon after: its 20-60 s drain is not needed. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash or an OOM kill would: the Gateway gets no chance to end its runs. */
  kill(): Promise<void>;
};

/** Spawns the Gateway and resolves once it is ready; a start that fails is stopped and throws. */
async function spawnGateway(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  home: string,
  { keep, readyTimeoutMs }: { keep: number; readyTimeoutMs: number },
): Promise<Running> {
  const startedAt = Date.now();
  // detached: its own process group, so stop() can kill the Gateway and its worker children together.
  const child = spawn(process.execPath, [bin, ...args], {
    env,
    cwd: home,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn the OpenClaw Gateway");
  trackGroup(pid, home);

  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let exitInfo = "";
  child.once("exit", (code, signal) => (exitInfo = `exited (code ${code}, signal ${signal})`));

  // Keep draining its output (and keep the ring buffer) so a full pipe never blocks the Gateway.
  const ready = new Promise<void>((resolve) => {
    const onLine = (line: string) => {
      if (line.includes(READY_MARKER)) resolve();
    };
    child.stdout?.on("data", collectLines(lines, keep, onLine));
    child.stderr?.on("data", collectLines(lines, keep, onLine));
  });

  const signalled = async (signals: NodeJS.Signals[]): Promise<void> => {
    if (!liveGroups.has(pid)) return;
    for (const signal of signals) {
      killGroup(pid, signal);
      await Promise.race([exited, delay(STOP_GRACE_MS)]);
    }
    liveGroups.delete(pid);
  };
  const stop = () => signalled(["SIGTERM", "SIGKILL"]);

  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready.then(() => "ready" as const),
    exited.then(() => "exited" as const),
    new Promise<"timeout">(
      (resolve) => (timer = setTimeout(() => resolve("timeout"), readyTimeoutMs)),
    ),
  ]);
  clearTimeout(timer);
  if (outcome !== "ready") {
    await stop();
    const why = outcome === "timeout" ? `not ready after ${readyTimeoutMs} ms` : exitInfo;
    throw new Error(`OpenClaw Gateway ${why}. Last log lines:\n${lines.slice(-40).join("\n")}`);
  }
  return {
    pid,
    startupMs: Date.now() - startedAt,
    logs: () => [...lines],
    stop,
    kill: () => signalled(["SIGKILL"]),
  };
}

// Drop the developer's OpenClaw/XDG settings (the Gateway must only see the throwaway HOME) and
// the test runner's markers: started from Vitest with VITEST/NODE_ENV=test inherited, OpenClaw
// takes its own test-mode paths and printed nothing, not even `[gateway] ready`, for 60 s.
function gatewayEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = { ...parent };
  for (const key of Object.keys(env)) {
    if (/^(OPENCLAW_|XDG_|VITEST)/.test(key) || key === "TEST" || key === "NODE_ENV")
      Reflect.deleteProperty(env, key);
  }
  return env;
}

function collectLines(
  lines: string[],
  keep: number,
  onLine: (line: string) => void,
): (chunk: Buffer) => void {
  let partial = "";
  return (chunk) => {
    const parts = (partial + chunk.toString("utf8")).split("\n");
    partial = parts.pop() ?? "";
    for (const raw of parts) {
      const line = raw.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
      lines.push(line);
      if (lines.length > keep) lines.shift();
      onLine(line);
    }
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
