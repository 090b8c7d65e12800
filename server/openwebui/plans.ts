import type { InstalledFunction, OpenaiConfig } from "./admin-api.ts";
import { OWN_VALVES, VALVE_DEFAULTS } from "./filter-valves.ts";

/** `npm run connect-openwebui`'s decisions about the filter, its valves and the connection (pure). */

/** The Gateway's session header: it overrides the filter's OpenAI `user` (docs/OPEN-WEBUI.md#a-gateway-that-ignores-user). */
export const SESSION_HEADER = "x-openclaw-session-key";

/**
 * The session header's value `--session-header` sets on the connection, for a Gateway that no longer
 * routes `/v1` sessions by the OpenAI `user` (openclaw/openclaw PR 126616). Open WebUI fills in its
 * templates per request (utils/headers.py:116-167 in 0.12.4): a reply gets the session
 * `agent:<agent>:openai-user:openwebui:<chat>:<reply>:<user>`, one per reply as with the filter's
 * `user`; a task (`{{TASK}}` set), a temporary chat (`temporary:…`) and a request that names no chat get
 * keys that map to no chat, so no reply start vouches for them; the last two kept apart per user.
 * The key names the agent, so it pins every model of the connection to that one.
 */
export function replySessionHeader(agentId: string): string {
  return `agent:${agentId.toLowerCase()}:openai-user:openwebui{{TASK}}:{{CHAT_ID}}:{{MESSAGE_ID}}:{{USER_ID}}`;
}

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
 * The valves to save: `auth_secret` is always this server's filter secret (one that held AUTH_SECRET
 * itself is replaced); `asks_url` this server's unless it was
 * only guessed and the admin set another; every other valve as it is, those not at their default
 * named as kept.
 */
export function planValves(
  current: Record<string, unknown> | null,
  desired: { asksUrl: { url: string; explicit: boolean }; filterSecret: string },
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
  if (valves.auth_secret !== desired.filterSecret) set.push("auth_secret");
  valves.auth_secret = desired.filterSecret;
  for (const name of Object.keys(valves))
    if (!OWN_VALVES.includes(name as (typeof OWN_VALVES)[number]) && !isDefault(name))
      kept.push(name);
  return { valves, set, kept };
}

/**
 * How a connection's own headers name the Gateway's session: not at all (the filter's `user` does),
 * per reply (`replySessionHeader`), or another way, which overrides the filter's one session per reply.
 */
export type SessionHeaderState = "none" | "per-reply" | "other";

/** The OpenAI connection to this Gateway's /v1 in Open WebUI's config (its index), and its session header. */
export function findConnection(
  config: OpenaiConfig,
  base: string,
  agentId: string,
): { index: number; sessionHeader: SessionHeaderState } | null {
  const normal = (url: string) => url.replace(/\/+$/, "").toLowerCase();
  const index = config.OPENAI_API_BASE_URLS.findIndex((url) => normal(url) === normal(base));
  if (index < 0) return null;
  const values = Object.entries(connectionHeaders(config, index))
    .filter(([name]) => name.toLowerCase() === SESSION_HEADER)
    .map(([, value]) => value);
  const sessionHeader: SessionHeaderState =
    values.length === 0
      ? "none"
      : values.length === 1 && values[0] === replySessionHeader(agentId)
        ? "per-reply"
        : "other";
  return { index, sessionHeader };
}

function connectionHeaders(config: OpenaiConfig, index: number): Record<string, unknown> {
  const headers = config.OPENAI_API_CONFIGS[String(index)]?.headers;
  return typeof headers === "object" && headers !== null && !Array.isArray(headers)
    ? (headers as Record<string, unknown>)
    : {};
}

/** The config with the connection's session header set to `replySessionHeader` (any other spelling of it dropped). */
export function withReplySessionHeader(
  config: OpenaiConfig,
  index: number,
  agentId: string,
): OpenaiConfig {
  const others = Object.fromEntries(
    Object.entries(connectionHeaders(config, index)).filter(
      ([name]) => name.toLowerCase() !== SESSION_HEADER,
    ),
  );
  const key = String(index);
  return {
    ...config,
    OPENAI_API_CONFIGS: {
      ...config.OPENAI_API_CONFIGS,
      [key]: {
        ...config.OPENAI_API_CONFIGS[key],
        headers: { ...others, [SESSION_HEADER]: replySessionHeader(agentId) },
      },
    },
  };
}

/**
 * The agents other than `agentId` among Open WebUI's models (`openclaw/<agent>`, after a connection's
 * optional `<prefix>.`): a session header that names one agent would run their chats as that one.
 * `openclaw` and `openclaw/default` name the Gateway's default agent, left to the operator.
 */
export function otherAgents(modelIds: readonly string[], agentId: string): string[] {
  const agents = modelIds
    .map((id) => /^(?:[^/]+\.)?openclaw[/:]([^/:]+)$/i.exec(id)?.[1]?.toLowerCase())
    .filter((agent): agent is string => agent !== undefined);
  return [...new Set(agents)].filter(
    (agent) => agent !== agentId.toLowerCase() && agent !== "default",
  );
}
