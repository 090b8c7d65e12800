import type { InstalledFunction, OpenaiConfig } from "./admin-api.ts";
import { OWN_VALVES, VALVE_DEFAULTS } from "./filter-valves.ts";

/** `npm run connect-openwebui`'s decisions about the filter, its valves and the connection (pure). */

/** The header that would pin every reply to one session, overriding the filter's `user` (one session per reply). */
export const SESSION_HEADER = "x-openclaw-session-key";

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
