// The real Open WebUI, from PyPI, for tests: a pinned release in a virtual environment outside the
// clone (cached like the Gateway), started on a free loopback port with a throwaway data directory
// and settings that keep it offline, with an admin, our filter and one OpenAI-compatible connection
// (the real Gateway's /v1, as OpenClaw's docs connect Open WebUI).
import type { ChildProcess } from "node:child_process";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { errorMessage } from "../../lib/error-message.ts";
import { freePort } from "./real-gateway.ts";

/** The Open WebUI releases the suite runs on: the newest (the default) and the one before it. */
export const OPEN_WEBUI_RELEASES = ["0.12.4", "0.11.0"] as const;
/** The release this run uses: OPENCLAW_ASKS_OPEN_WEBUI_VERSION picks one of OPEN_WEBUI_RELEASES. */
export const OPEN_WEBUI_VERSION = openWebuiRelease(process.env.OPENCLAW_ASKS_OPEN_WEBUI_VERSION);

function openWebuiRelease(wanted: string | undefined): (typeof OPEN_WEBUI_RELEASES)[number] {
  if (!wanted) return OPEN_WEBUI_RELEASES[0];
  const release = OPEN_WEBUI_RELEASES.find((candidate) => candidate === wanted);
  if (!release) {
    throw new Error(
      `OPENCLAW_ASKS_OPEN_WEBUI_VERSION=${wanted}: the suite runs on ${OPEN_WEBUI_RELEASES.join(" or ")}`,
    );
  }
  return release;
}
/**
 * open-webui depends on torch through sentence-transformers and accelerate; with no torch in the
 * venv pip would fetch a multi-GB CUDA build. This release's CPU build for Python 3.11 lies on
 * this kind of machine's disk, so pip takes it from there when it is asked for first.
 */
export const TORCH_VERSION = "2.13.0";
export const FILTER_PATH = path.resolve(
  import.meta.dirname,
  "../../integrations/open-webui/openclaw_asks_filter.py",
);
export const FILTER_ID = "openclaw_asks";

export function openWebuiCacheDir(): string {
  return (
    process.env.OPEN_WEBUI_CACHE_DIR ??
    path.join(homedir(), ".cache", `open-webui-${OPEN_WEBUI_VERSION}`)
  );
}

const venvDir = (cacheDir: string) => path.join(cacheDir, "venv");
const openWebuiBin = (cacheDir: string) => path.join(venvDir(cacheDir), "bin", "open-webui");

/** The open-webui version installed in the cache's venv, from its dist-info folder, or null. */
export function installedOpenWebuiVersion(cacheDir = openWebuiCacheDir()): string | null {
  const lib = path.join(venvDir(cacheDir), "lib");
  if (!existsSync(openWebuiBin(cacheDir)) || !existsSync(lib)) return null;
  for (const python of readdirSync(lib)) {
    const sitePackages = path.join(lib, python, "site-packages");
    if (!existsSync(sitePackages)) continue;
    const distInfo = readdirSync(sitePackages).find((name) =>
      /^open_webui-.+\.dist-info$/.test(name),
    );
    if (distInfo) return distInfo.slice("open_webui-".length, -".dist-info".length);
  }
  return null;
}

/**
 * Installs the pinned open-webui into `cacheDir`/venv with the system python3 (3.11 or 3.12:
 * open-webui 0.11 and 0.12 require >=3.11,<3.13). Returns what failed, or null.
 */
export function installOpenWebui(
  cacheDir = openWebuiCacheDir(),
  log: (line: string) => void = console.log,
): string | null {
  const python = path.join(venvDir(cacheDir), "bin", "python");
  const steps: [string, string[]][] = [
    ["python3", ["-m", "venv", "--clear", venvDir(cacheDir)]],
    [
      python,
      ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", `torch==${TORCH_VERSION}`],
    ],
    [
      python,
      [
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--quiet",
        `open-webui==${OPEN_WEBUI_VERSION}`,
      ],
    ],
  ];
  for (const [command, args] of steps) {
    log(`$ ${command} ${args.join(" ")}`);
    const result = spawnSync(command, args, { stdio: "inherit" });
    if (result.status !== 0)
      return `${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`;
  }
  const installed = installedOpenWebuiVersion(cacheDir);
  return installed === OPEN_WEBUI_VERSION
    ? null
    : `found ${installed ?? "nothing"} in ${venvDir(cacheDir)} after installing`;
}

export type OpenWebui = {
  url: string;
  /** The admin's session token (Open WebUI's own JWT), for the API and the browser's localStorage. */
  adminToken: string;
  admin: { id: string; email: string; password: string };
  /** Everything Open WebUI printed, for failure messages. */
  log(): string;
  /** Adds our filter through the Functions API, active and global, with these valves. */
  installFilter(valves: Record<string, unknown>): Promise<void>;
  /** A user's interface settings, as Settings → Interface saves them (e.g. `richTextInput`); the admin's by default. */
  setInterfaceSettings(ui: Record<string, unknown>, token?: string): Promise<void>;
  /** Adds a user (role `user`) as an admin does in Admin Panel → Users, and signs them in. */
  addUser(name: string): Promise<{ id: string; token: string }>;
  /** Lets every user chat with a model of a connection (only admins see one with no access set, utils/models.py:521). */
  shareModel(modelId: string, name: string): Promise<void>;
  /** A chat as Open WebUI stores it (`GET /api/v1/chats/<id>`), read with its user's token. */
  storedChat(chatId: string, token?: string): Promise<unknown>;
  /** Renames a chat, as its user does in the sidebar. */
  renameChat(chatId: string, title: string, token?: string): Promise<void>;
  /** A new API key of the admin's (Settings → Account → API keys). */
  createApiKey(): Promise<string>;
  /** The admin API with the admin's session token: `GET /api/v1/functions/`, `/openai/config`, ... */
  api(method: string, route: string, body?: unknown): Promise<unknown>;
  /** Restarts it as an upgrade does (SIGTERM, then `open-webui serve` again): same port, data and secret. */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

export type StartOpenWebuiOptions = {
  /** An OpenAI-compatible base URL ending in /v1 (the Gateway's); its /models become Open WebUI's models. */
  openaiBaseUrl: string;
  /** That connection's API key (the Gateway's token). */
  openaiApiKey: string;
  /** Open WebUI's WEBUI_SECRET_KEY (its session tokens are signed with it). */
  secretKey?: string;
  startTimeoutMs?: number;
  /** A free loopback port to serve on, when the caller needs the origin before Open WebUI is up. Default: one picked here. */
  port?: number;
};

const sessionSchema = z.object({ id: z.string(), token: z.string() });
/**
 * An admin who has seen this release's changelog: otherwise its modal covers the chat on the admin's
 * first page load (0.12.4 routes/(app)/+layout.svelte:400-401) and takes every click.
 */
const SEEN_CHANGELOG = { showChangelog: false };

/** Starts Open WebUI and signs up its first user, who becomes the admin. Stop it with `stop()`. */
export async function startOpenWebui(options: StartOpenWebuiOptions): Promise<OpenWebui> {
  const cacheDir = openWebuiCacheDir();
  if (installedOpenWebuiVersion(cacheDir) !== OPEN_WEBUI_VERSION) {
    throw new Error(
      `open-webui ${OPEN_WEBUI_VERSION} is not installed in ${cacheDir}: run node test/setup/ensure-test-deps.ts --open-webui`,
    );
  }
  const port = options.port ?? (await freePort());
  const dataDir = mkdtempSync(path.join(tmpdir(), "open-webui-data-"));
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    WEBUI_SECRET_KEY: options.secretKey ?? randomBytes(32).toString("hex"),
    // env.py:1127-1131: no Hugging Face downloads, no version check.
    OFFLINE_MODE: "true",
    HF_HUB_OFFLINE: "1",
    // config.py:984, retrieval.py:142-162: an engine other than '' loads no local embedding model.
    RAG_EMBEDDING_ENGINE: "openai",
    RAG_EMBEDDING_MODEL: "",
    // No telemetry (Scarf, chroma's posthog, OpenTelemetry).
    SCARF_NO_ANALYTICS: "true",
    DO_NOT_TRACK: "true",
    ANONYMIZED_TELEMETRY: "false",
    ENABLE_OTEL: "false",
    // Only the one connection: no Ollama, no web search, no background tasks or extras that call it.
    ENABLE_OLLAMA_API: "false",
    ENABLE_OPENAI_API: "true",
    OPENAI_API_BASE_URLS: options.openaiBaseUrl,
    OPENAI_API_KEYS: options.openaiApiKey,
    ENABLE_WEB_SEARCH: "false",
    ENABLE_TITLE_GENERATION: "false",
    ENABLE_TAGS_GENERATION: "false",
    ENABLE_FOLLOW_UP_GENERATION: "false",
    ENABLE_AUTOCOMPLETE_GENERATION: "false",
    ENABLE_SEARCH_QUERY_GENERATION: "false",
    ENABLE_RETRIEVAL_QUERY_GENERATION: "false",
    ENABLE_EVALUATION_ARENA_MODELS: "false",
    ENABLE_CODE_INTERPRETER: "false",
    ENABLE_IMAGE_GENERATION: "false",
    ENABLE_VERSION_UPDATE_CHECK: "false",
    // Admins may make API keys (config.py:2420), as `npm run connect-openwebui` takes one.
    ENABLE_API_KEYS: "true",
  };
  /** One `open-webui serve`: its process, and a promise that settles when it exits. */
  const serve = () => {
    const child: ChildProcess = spawn(
      openWebuiBin(cacheDir),
      ["serve", "--host", "127.0.0.1", "--port", String(port)],
      {
        env,
        cwd: dataDir,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    let hasExited = false;
    const exited = new Promise<void>((resolve) =>
      child.once("exit", () => {
        hasExited = true;
        resolve();
      }),
    );
    return { child, exited, hasExited: () => hasExited };
  };
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-200_000);
  };
  let server = serve();

  /** Ends the running `open-webui serve`, as its service manager does: SIGTERM, then SIGKILL. */
  async function end(): Promise<void> {
    const { child, exited } = server;
    // Open WebUI runs uvicorn in its own process group (detached): end that group by its id.
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      const killTimer = setTimeout(() => child.pid && tryKill(-child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(killTimer);
    }
  }

  async function stop(): Promise<void> {
    await end();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const healthy = () =>
    waitForHealth(
      url,
      () => server.hasExited(),
      options.startTimeoutMs ?? 180_000,
      () => output,
    );

  try {
    await healthy();
    const email = "admin@openclaw-asks.test";
    const password = randomBytes(12).toString("hex");
    const session = sessionSchema.parse(
      await api(url, "", "POST", "/api/v1/auths/signup", { name: "Admin", email, password }),
    );
    const adminToken = session.token;
    await api(url, adminToken, "POST", "/api/v1/users/user/settings/update", {
      ui: SEEN_CHANGELOG,
    });
    return {
      url,
      adminToken,
      admin: { id: session.id, email, password },
      log: () => output,
      async installFilter(valves) {
        const content = readFileSync(FILTER_PATH, "utf8");
        await api(url, adminToken, "POST", "/api/v1/functions/create", {
          id: FILTER_ID,
          name: "OpenClaw Asks",
          content,
          meta: { description: "OpenClaw Asks widget" },
        });
        await api(
          url,
          adminToken,
          "POST",
          `/api/v1/functions/id/${FILTER_ID}/valves/update`,
          valves,
        );
        const toggled = z
          .object({ is_active: z.boolean() })
          .parse(await api(url, adminToken, "POST", `/api/v1/functions/id/${FILTER_ID}/toggle`));
        if (!toggled.is_active) throw new Error("the filter did not become active");
        const global = z
          .object({ is_global: z.boolean() })
          .parse(
            await api(url, adminToken, "POST", `/api/v1/functions/id/${FILTER_ID}/toggle/global`),
          );
        if (!global.is_global) throw new Error("the filter did not become global");
      },
      async setInterfaceSettings(ui, token = adminToken) {
        await api(url, token, "POST", "/api/v1/users/user/settings/update", {
          ui: { ...SEEN_CHANGELOG, ...ui },
        });
      },
      async addUser(name) {
        const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}@openclaw-asks.test`;
        const password = randomBytes(12).toString("hex");
        await api(url, adminToken, "POST", "/api/v1/auths/add", {
          name,
          email,
          password,
          role: "user",
        });
        return sessionSchema.parse(
          await api(url, "", "POST", "/api/v1/auths/signin", { email, password }),
        );
      },
      async shareModel(modelId, name) {
        // Once per Open WebUI: the first test that needs it shares it (each may run alone).
        const shared = await api(
          url,
          adminToken,
          "GET",
          `/api/v1/models/model?id=${encodeURIComponent(modelId)}`,
        ).catch(() => null);
        if (shared) return;
        // The `user *` read grant is what the admin's "Public" visibility saves (models/access_grants.py:104-110).
        await api(url, adminToken, "POST", "/api/v1/models/create", {
          id: modelId,
          name,
          meta: {},
          params: {},
          access_grants: [{ principal_type: "user", principal_id: "*", permission: "read" }],
        });
      },
      storedChat(chatId, token = adminToken) {
        return api(url, token, "GET", `/api/v1/chats/${encodeURIComponent(chatId)}`);
      },
      async renameChat(chatId, title, token = adminToken) {
        await api(url, token, "POST", `/api/v1/chats/${encodeURIComponent(chatId)}`, {
          chat: { title },
        });
      },
      async createApiKey() {
        return z
          .object({ api_key: z.string() })
          .parse(await api(url, adminToken, "POST", "/api/v1/auths/api_key")).api_key;
      },
      api: (method, route, body) => api(url, adminToken, method, route, body),
      async restart() {
        await end();
        server = serve();
        await healthy();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(
      `Open WebUI did not start: ${errorMessage(error)}\n--- its output ---\n${output.slice(-4000)}`,
    );
  }
}

async function api(
  base: string,
  token: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

async function waitForHealth(
  url: string,
  hasExited: () => boolean,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error("the process exited during startup");
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(
    `no healthy answer from ${url}/health within ${timeoutMs} ms (last output: ${output().slice(-300)})`,
  );
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}
