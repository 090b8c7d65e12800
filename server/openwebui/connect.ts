import { io } from "socket.io-client";
import { errorMessage } from "../../lib/error-message.ts";
import { mintTabToken, secretKey } from "../auth/tokens.ts";
import {
  enableEndpoint,
  type EndpointState,
  endpointState,
  openaiBaseUrl,
} from "../gateway/openai-endpoint.ts";
import {
  type InstalledFunction,
  type OpenaiConfig,
  OpenWebuiAdmin,
  OpenWebuiError,
  OpenWebuiUnreachable,
} from "./admin-api.ts";
import { isUserStatusOff, refusalReason, releaseLine, toolsVerdict } from "./checks.ts";
import { OWN_VALVES, VALVE_DEFAULTS } from "./filter-valves.ts";

/**
 * `npm run connect-openwebui`: connects an Open WebUI to this server and its Gateway through Open
 * WebUI's admin API, in three stages. First it checks, writing nothing: Open WebUI answers, the key is
 * an admin's, the routes exist, the Gateway's /v1 is on (or can be turned on). Then it writes: the
 * filter (installed, or updated when older), its valves, its switches, and with `--add-connection` the
 * OpenAI connection and the Gateway's endpoint; a failed write of the filter undoes the filter's.
 * Last it checks the chain and says what works and what is left. It never prints a secret or a key.
 */

export const FILTER_ID = "openclaw_asks";
const FILTER_NAME = "OpenClaw Asks";
/** The header that would pin every reply to one session, overriding the filter's `user` (one session per reply). */
const SESSION_HEADER = "x-openclaw-session-key";

export type ConnectOptions = {
  openWebuiUrl: string;
  apiKey: string;
  /** Where browsers reach this server, and whether it was given (`--asks-url`, `PUBLIC_URL`) rather than guessed from HOST and PORT. */
  asksUrl: { url: string; explicit: boolean };
  authSecret: string;
  gatewayUrl: string;
  gatewayToken: string | undefined;
  agentId: string;
  addConnection: boolean;
  /** The filter to install: its source, and the version its front matter states. */
  filter: { content: string; version: string };
  print: (line: string) => void;
};

/** A refusal: the step that failed and why; nothing was written, or what was is undone. */
export class ConnectRefused extends Error {}

// --- decisions (pure) ------------------------------------------------------------------------------

/** `version: x.y.z` of a function's front matter (its docstring), as Open WebUI reads it. */
export function frontMatterVersion(content: string): string | null {
  return (
    /^\s*version:\s*([0-9][0-9A-Za-z.+-]*)\s*$/m.exec(
      /^\s*"""([\s\S]*?)"""/.exec(content)?.[1] ?? "",
    )?.[1] ?? null
  );
}

export function compareVersions(a: string, b: string): number {
  const parts = (version: string) =>
    version.split(/[.+-]/).map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

export type FilterPlan =
  | { action: "install" }
  | { action: "update"; from: string }
  | { action: "keep"; version: string; newer: boolean };

export function planFilter(
  installed: Pick<InstalledFunction, "content" | "meta"> | null,
  ours: string,
): FilterPlan {
  if (installed === null) return { action: "install" };
  const version =
    (typeof installed.meta.manifest?.version === "string"
      ? installed.meta.manifest.version
      : null) ??
    frontMatterVersion(installed.content) ??
    "0";
  const order = compareVersions(version, ours);
  return order < 0
    ? { action: "update", from: version }
    : { action: "keep", version, newer: order > 0 };
}

export type ValvePlan = { valves: Record<string, unknown>; set: string[]; kept: string[] };

/**
 * The valves to save: `auth_secret` is always this server's; `asks_url` this server's unless it was
 * only guessed and the admin set another; every other valve as it is, those not at their default
 * named as kept.
 */
export function planValves(
  current: Record<string, unknown> | null,
  desired: { asksUrl: ConnectOptions["asksUrl"]; authSecret: string },
): ValvePlan {
  const valves: Record<string, unknown> = { ...(current ?? {}) };
  const set: string[] = [];
  const kept: string[] = [];
  const isDefault = (name: string) =>
    valves[name] === undefined || valves[name] === VALVE_DEFAULTS[name];
  if (desired.asksUrl.explicit || isDefault("asks_url")) {
    if (valves.asks_url !== desired.asksUrl.url) set.push("asks_url");
    valves.asks_url = desired.asksUrl.url;
  } else if (valves.asks_url !== desired.asksUrl.url) {
    kept.push("asks_url");
  }
  if (valves.auth_secret !== desired.authSecret) set.push("auth_secret");
  valves.auth_secret = desired.authSecret;
  for (const name of Object.keys(valves))
    if (!OWN_VALVES.includes(name as (typeof OWN_VALVES)[number]) && !isDefault(name))
      kept.push(name);
  return { valves, set, kept };
}

/** The OpenAI connection to this Gateway's /v1 in Open WebUI's config (its index), and whether it pins sessions. */
export function findConnection(
  config: OpenaiConfig,
  base: string,
): { index: number; pinsSessions: boolean } | null {
  const normal = (url: string) => url.replace(/\/+$/, "").toLowerCase();
  const index = config.OPENAI_API_BASE_URLS.findIndex((url) => normal(url) === normal(base));
  if (index < 0) return null;
  const headers = config.OPENAI_API_CONFIGS[String(index)]?.headers;
  const pinsSessions =
    typeof headers === "object" &&
    headers !== null &&
    Object.keys(headers).some((name) => name.toLowerCase() === SESSION_HEADER);
  return { index, pinsSessions };
}

// --- the run ---------------------------------------------------------------------------------------

/** Connects Open WebUI; resolves true when the whole chain works, false when something is left to do. Rejects with ConnectRefused. */
export async function connectOpenWebui(options: ConnectOptions): Promise<boolean> {
  const { print } = options;
  const admin = new OpenWebuiAdmin(options.openWebuiUrl, options.apiKey);
  const gatewayBase = openaiBaseUrl(options.gatewayUrl);
  print(`Connecting Open WebUI at ${admin.url} to OpenClaw Asks at ${options.asksUrl.url}`);

  // 1. Checks: nothing is written until they pass.
  const version = await step("reach Open WebUI", () => admin.version());
  // An unsupported release is connected anyway, flagged: every route and setting used is checked below.
  const release = releaseLine(version);
  const user = await step("check the API key", () =>
    admin.sessionUser().catch((error: unknown) => {
      if (isUserStatusOff(error)) return null; // Then /openai/config, admins only, tells.
      throw error;
    }),
  );
  if (user && user.role !== "admin")
    throw new ConnectRefused(
      `✗ check the API key: it is ${user.name ?? user.id}'s, whose role is ${user.role}; connecting needs an admin's key (Open WebUI → Settings → Account → API keys)`,
    );
  const functions = await step("find the Functions API", () => admin.listFunctions());
  const openai = await step("find the OpenAI connections API", () => admin.openaiConfig());
  print(
    `✓ Open WebUI ${version}; the key is an admin's${user ? ` (${user.name ?? user.id})` : ""}`,
  );
  if (release) print(release);
  const endpoint = await endpointState(options.gatewayUrl, options.gatewayToken);
  if (endpoint !== "on" && !(endpoint === "off" && options.addConnection))
    throw new ConnectRefused(endpointRefusal(endpoint, gatewayBase));
  const installed = functions.some((item) => item.id === FILTER_ID)
    ? await step("read the installed filter", () => admin.getFunction(FILTER_ID))
    : null;
  const current = installed
    ? await step("read the filter's valves", () => admin.valves(FILTER_ID))
    : null;

  // 2. The filter, all or nothing.
  const filterPlan = planFilter(installed, options.filter.version);
  const valvePlan = planValves(current, {
    asksUrl: options.asksUrl,
    authSecret: options.authSecret,
  });
  await writeFilter(admin, options, installed, current, filterPlan, valvePlan);
  print(filterLine(filterPlan, options.filter.version));
  print(
    `✓ valves: ${valvePlan.set.length ? `${valvePlan.set.join(", ")} set` : "asks_url and auth_secret already this server's"}${valvePlan.kept.length ? `; kept as you set them: ${valvePlan.kept.join(", ")}` : ""}`,
  );
  print(
    "✓ filter on, for every chat: it acts only on OpenClaw's models (ids starting with openclaw), or on its model_ids valve",
  );

  // 3. The connection to the Gateway's /v1.
  let left = release !== null;
  let connection = findConnection(openai, gatewayBase);
  if (connection === null && options.addConnection) {
    await step("add the OpenAI connection", () =>
      admin.updateOpenaiConfig({
        ...openai,
        ENABLE_OPENAI_API: true,
        OPENAI_API_BASE_URLS: [...openai.OPENAI_API_BASE_URLS, gatewayBase],
        OPENAI_API_KEYS: [...openai.OPENAI_API_KEYS, options.gatewayToken ?? ""],
      }),
    );
    connection = { index: openai.OPENAI_API_BASE_URLS.length, pinsSessions: false };
    print(`✓ OpenAI connection added: ${gatewayBase}, with the Gateway token`);
  } else if (connection === null) {
    left = true;
    print(
      `! no OpenAI connection to this Gateway (${gatewayBase}): run again with --add-connection, or add it in Admin Panel → Settings → Connections with the Gateway token as its key`,
    );
  } else {
    print(`✓ OpenAI connection to the Gateway: ${gatewayBase}`);
  }
  if (connection?.pinsSessions) {
    left = true;
    print(
      `! that connection sets ${SESSION_HEADER}: every reply of a chat then shares one Gateway session (the model gets the history twice, and the filter's one session per reply is overridden). Remove the header in Admin Panel → Settings → Connections`,
    );
  }
  if (endpoint === "off") {
    await enableEndpoint(options.gatewayUrl, options.gatewayToken).then(
      () =>
        print(
          "✓ the Gateway's /v1 endpoint turned on (gateway.http.endpoints.chatCompletions.enabled)",
        ),
      (error: unknown) => {
        throw new ConnectRefused(
          `✗ turn on the Gateway's /v1 endpoint: ${errorMessage(error)}. Set gateway.http.endpoints.chatCompletions.enabled: true in the Gateway's config and run this again`,
        );
      },
    );
  } else {
    print("✓ the Gateway's /v1 endpoint is on");
  }

  // 4. The whole chain.
  const model = `openclaw/${options.agentId}`;
  const models = await admin.modelIds().catch(() => [] as string[]);
  if (models.includes(model)) print(`✓ Open WebUI lists ${model}: chat with it`);
  else {
    left = true;
    print(
      `! Open WebUI does not list ${model}${models.some((id) => id.startsWith("openclaw")) ? ` (it lists ${models.filter((id) => id.startsWith("openclaw")).join(", ")}: is AGENT_ID right?)` : ""}`,
    );
  }
  // What decides the tools Open WebUI sends: one it adds that the Gateway refuses fails every reply.
  const tools = await admin.modelSettings(model).then(
    (settings) => toolsVerdict({ version, model, settings, valves: valvePlan.valves }),
    (error: unknown) => {
      left = true;
      return { ok: true, line: `! could not read ${model}'s settings: ${reason(error)}` };
    },
  );
  print(tools.line);
  const accepted = await widgetTokenAccepted(options.asksUrl.url, options.authSecret);
  if (accepted === true)
    print(
      `✓ OpenClaw Asks at ${options.asksUrl.url} accepts a widget token signed with these valves`,
    );
  else {
    left = true;
    print(`! OpenClaw Asks at ${options.asksUrl.url} ${accepted}`);
  }
  if (!tools.ok)
    throw new ConnectRefused(
      `✗ not connected: every reply of a chat on ${model} would fail (the step marked ✗ above)`,
    );
  print(
    left
      ? "Connected, with the steps above marked ! left to do."
      : "Connected: a question, secret request or approval of an OpenClaw chat now shows as a card in its reply.",
  );
  return !left;

  async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new ConnectRefused(`✗ ${what}: ${reason(error)}`);
    }
  }
}

function reason(error: unknown): string {
  if (error instanceof OpenWebuiUnreachable) return error.message;
  if (error instanceof OpenWebuiError) {
    const refused = refusalReason(error);
    if (refused) return refused;
    if (error.status === 404)
      return `this Open WebUI has no such route (404): OpenClaw Asks needs Open WebUI 0.11 or later (${error.message})`;
    return error.message;
  }
  return errorMessage(error);
}

function endpointRefusal(state: EndpointState, base: string): string {
  switch (state) {
    case "off":
      return `✗ the Gateway's OpenAI-compatible endpoint is off (${base} does not answer): set gateway.http.endpoints.chatCompletions.enabled: true in the Gateway's config, or run again with --add-connection to have it set`;
    case "token refused":
      return `✗ the Gateway refused OPENCLAW_GATEWAY_TOKEN at ${base}: give its token`;
    case "unreachable":
      return `✗ cannot reach the Gateway at ${base}: is OPENCLAW_GATEWAY_URL right and the Gateway running?`;
    case "on":
      return "";
  }
}

function filterLine(plan: FilterPlan, ours: string): string {
  switch (plan.action) {
    case "install":
      return `✓ filter ${FILTER_ID} installed (version ${ours})`;
    case "update":
      return `✓ filter ${FILTER_ID} updated from ${plan.from} to ${ours}`;
    case "keep":
      return plan.newer
        ? `✓ filter ${FILTER_ID} kept: the installed ${plan.version} is newer than this server's ${ours}`
        : `✓ filter ${FILTER_ID} already at ${ours}`;
  }
}

/** Installs or updates the filter, its valves and its switches; a failure undoes what this step wrote. */
async function writeFilter(
  admin: OpenWebuiAdmin,
  options: ConnectOptions,
  installed: InstalledFunction | null,
  current: Record<string, unknown> | null,
  plan: FilterPlan,
  valves: ValvePlan,
): Promise<void> {
  const form = {
    id: FILTER_ID,
    name: FILTER_NAME,
    content: options.filter.content,
    meta: {
      description:
        "Shows the OpenClaw agent's questions, secret requests and approvals as cards in the reply.",
    },
  };
  const undo: (() => Promise<unknown>)[] = [];
  try {
    if (plan.action === "install") {
      await admin.createFunction(form);
      undo.push(() => admin.deleteFunction(FILTER_ID));
    } else if (plan.action === "update" && installed) {
      await admin.updateFunction(form);
      undo.push(() =>
        admin.updateFunction({ ...form, name: installed.name, content: installed.content }),
      );
    }
    if (valves.set.length > 0 || plan.action === "install") {
      await admin.updateValves(FILTER_ID, valves.valves);
      if (current) undo.push(() => admin.updateValves(FILTER_ID, current));
    }
    const now = installed ?? { is_active: false, is_global: false };
    if (!now.is_active) {
      await admin.toggleActive(FILTER_ID);
      undo.push(() => admin.toggleActive(FILTER_ID));
    }
    if (!now.is_global) {
      await admin.toggleGlobal(FILTER_ID);
      undo.push(() => admin.toggleGlobal(FILTER_ID));
    }
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => {});
    throw new ConnectRefused(
      `✗ write the filter: ${reason(error)} (what this step had written is undone)`,
    );
  }
}

/** Opens a socket with a widget token signed as the filter signs one: true when accepted, else what went wrong. */
async function widgetTokenAccepted(asksUrl: string, authSecret: string): Promise<true | string> {
  const token = await mintTabToken(secretKey(authSecret), {
    userId: "openclaw-asks-connect-check",
    chat: "openclaw-asks-connect-check",
    reply: { msg: "check", mts: Date.now() },
    ttlSeconds: 60,
  });
  const socket = io(asksUrl, {
    auth: { token },
    transports: ["websocket"],
    reconnection: false,
    timeout: 10_000,
  });
  try {
    return await new Promise<true | string>((resolve) => {
      socket.once("connect", () => resolve(true));
      socket.once("connect_error", (error) =>
        resolve(
          /xhr|websocket|timeout/i.test(error.message)
            ? "does not answer: start it (npm start) and run this again"
            : `refused a widget token signed with auth_secret: ${error.message}`,
        ),
      );
    });
  } finally {
    socket.close();
  }
}
