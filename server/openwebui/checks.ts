import { errorMessage } from "../../lib/error-message.ts";
import type { EndpointState } from "../gateway/openai-endpoint.ts";
import { type ModelSettings, OpenWebuiError, OpenWebuiUnreachable } from "./admin-api.ts";

/**
 * What `npm run connect-openwebui` concludes from Open WebUI's answers, as pure functions: which
 * releases are supported, what a refused key means, and whether Open WebUI's own tools would make
 * every reply of a chat on OpenClaw fail. Line numbers are in the installed open-webui packages.
 */

/** The Open WebUI release lines OpenClaw Asks is built and tested on (the README says the same). */
export const SUPPORTED_RELEASES = ["0.11", "0.12"] as const;

/** The routes the command calls with the key, for an API key endpoint allow-list. */
const KEY_ROUTES =
  "/api/v1/users/user/status, /api/v1/functions, /api/v1/models, /openai, /api/models";

// Open WebUI's refusals (constants.py ERROR_MESSAGES, the same in 0.11.0 and 0.12.4): the status
// alone does not tell them apart.
/** 403 from get_current_user_by_api_key when API keys are off, or off for the key's user (utils/auth.py:523-533 in 0.12.4). */
const API_KEYS_OFF = /use of api key is not enabled/i;
/** ACCESS_PROHIBITED: 403 from the API key endpoint restrictions (utils/auth.py:538-547); 401 from get_admin_user/get_verified_user (:567-572, :622-627). */
const NO_PERMISSION = /do not have permission to access this resource/i;
/** ACTION_PROHIBITED: 403 from /api/v1/users/user/status when ENABLE_USER_STATUS is off (routers/users.py:572-576). */
const RESTRICTED = /restricted as a security measure/i;

export function releaseLine(version: string): string | null {
  return SUPPORTED_RELEASES.some((line) => version === line || version.startsWith(`${line}.`))
    ? null
    : `! Open WebUI ${version} is not a release OpenClaw Asks supports (${SUPPORTED_RELEASES.map((line) => `${line}.x`).join(", ")}): connecting anyway, each step below is checked, but chats are untested there`;
}

/** Whether `error` is /api/v1/users/user/status turned off (ENABLE_USER_STATUS=false): the key's user is then not told. */
export function isUserStatusOff(error: unknown): boolean {
  return (
    error instanceof OpenWebuiError && error.status === 403 && RESTRICTED.test(error.detail ?? "")
  );
}

/** Why Open WebUI refused a call made with the key: one line, naming what to change. */
export function refusalReason(error: OpenWebuiError): string | null {
  const detail = error.detail ?? "";
  if (error.status === 403 && API_KEYS_OFF.test(detail))
    return "API keys are turned off in this Open WebUI (or for this key's user): turn on Admin Panel → Settings → Authentication → API Keys, or set ENABLE_API_KEYS=true; this command takes an API key, not a password, since Open WebUI's sign-in may ask for a second factor";
  if (error.status === 403 && NO_PERMISSION.test(detail))
    return `this Open WebUI lets API keys call only the endpoints it lists (API key endpoint restrictions, ENABLE_API_KEYS_ENDPOINT_RESTRICTIONS): add ${KEY_ROUTES} to its allowed endpoints (API_KEYS_ALLOWED_ENDPOINTS), or turn the restrictions off`;
  if (error.status === 401 && NO_PERMISSION.test(detail))
    return "the key is not an admin's (401): connecting needs an admin's API key (Open WebUI → Settings → Account → API keys)";
  if (error.status === 401) return "Open WebUI refused the API key (401): give an admin's API key";
  if (error.status === 403)
    return `Open WebUI refused this call (403${detail ? `: ${detail}` : ""}): give an admin's API key`;
  return null;
}

/** Why a call to Open WebUI failed, for a step's line. */
export function reason(error: unknown): string {
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

export function endpointRefusal(state: EndpointState, base: string): string {
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

// --- the tools Open WebUI sends with a chat's request ---------------------------------------------

/** `openclaw`, `openclaw/<agent>`, ... after a connection's optional `<prefix>.`: the filter's `_OPENCLAW_MODEL`. */
const OPENCLAW_MODEL = /^(?:[^/]+\.)?openclaw(?:$|[/:._-])/;

/** Whether the filter acts on `model` (and its base model), as its `_acts_on` decides with these valves. */
export function filterActsOn(
  model: string,
  settings: ModelSettings | null,
  valves: Record<string, unknown>,
): boolean {
  const wanted = new Set(
    (typeof valves.model_ids === "string" ? valves.model_ids : "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  );
  return [model, settings?.base_model_id]
    .filter((id): id is string => Boolean(id))
    .some((id) => (wanted.size > 0 ? wanted.has(id) : OPENCLAW_MODEL.test(id)));
}

const atLeast = (version: string, major: number, minor: number, patch: number) => {
  const [x = 0, y = 0, z = 0] = version.split(/[.+-]/).map((part) => Number(part) || 0);
  return x !== major ? x > major : y !== minor ? y > minor : z >= patch;
};

/**
 * Whether every reply of a chat on `model` would fail on Open WebUI's own `ask_user`: sent since
 * 0.11.1 (tools/builtin.py:525-634) with every request of a browser tab, unless the model's
 * capability `builtin_tools` is off or its function calling `legacy` (utils/middleware.py:2078-2082
 * in 0.12.4), or its `builtinTools.user_input` is off (utils/tools.py:621-623, 699-700); the
 * Gateway's /v1 refuses a caller's tool named like one of its own ("client tool name conflict").
 * The filter drops it in its `request` hook, which Open WebUI calls since 0.11.2, on the models it
 * acts on. Returns the line to print: `ok` false when every reply would fail.
 */
export function toolsVerdict(options: {
  version: string;
  model: string;
  settings: ModelSettings | null;
  valves: Record<string, unknown>;
}): { ok: boolean; line: string } {
  const { version, model, settings } = options;
  const meta = settings?.meta;
  const sendsAskUser =
    atLeast(version, 0, 11, 1) &&
    meta?.capabilities?.builtin_tools !== false &&
    meta?.builtinTools?.user_input !== false &&
    settings?.params?.function_calling !== "legacy";
  if (!sendsAskUser)
    return { ok: true, line: `✓ Open WebUI sends no ask_user of its own with ${model}` };
  if (!atLeast(version, 0, 11, 2))
    return {
      ok: false,
      line: `✗ Open WebUI ${version} sends its own ask_user with every request of ${model}, which the Gateway refuses, and calls no filter's request hook (0.11.2+) to drop it: every reply would fail. Turn off Ask User in Admin Panel → Settings → Models → ${model} → Builtin Tools, or update Open WebUI`,
    };
  if (!filterActsOn(model, settings, options.valves))
    return {
      ok: false,
      line: `✗ Open WebUI sends its own ask_user with every request of ${model}, which the Gateway refuses, and the filter does not act on ${model} (its model_ids valve): every reply would fail. Add ${model} to model_ids, or turn off Ask User in Admin Panel → Settings → Models → ${model} → Builtin Tools`,
    };
  return {
    ok: true,
    line: `✓ Open WebUI's own ask_user is dropped from ${model}'s requests by the filter (the agent's questions are OpenClaw's); its other built-in tools stay`,
  };
}
