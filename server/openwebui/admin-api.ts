import { z } from "zod";
import { errorMessage } from "../../lib/error-message.ts";

/**
 * The few routes of Open WebUI's admin API that connecting it takes (open-webui 0.11: routers/auths.py,
 * routers/functions.py, routers/openai.py, main.py), each reply parsed with a schema at the boundary.
 * Every call carries the admin's key as `Authorization: Bearer`; nothing here prints it or the
 * configuration's own keys.
 */

/** Open WebUI answered, but not with what was asked: `status` says how (401/403: the key; 404: no such route). */
export class OpenWebuiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Open WebUI could not be reached at all. */
export class OpenWebuiUnreachable extends Error {}

const Version = z.object({ version: z.string() });
const SessionUser = z.object({ id: z.string(), name: z.string().optional(), role: z.string() });
export const InstalledFunction = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  content: z.string(),
  meta: z
    .object({
      description: z.string().nullish(),
      manifest: z.record(z.string(), z.unknown()).nullish(),
    })
    .passthrough(),
  is_active: z.boolean(),
  is_global: z.boolean(),
});
export type InstalledFunction = z.infer<typeof InstalledFunction>;
const FunctionList = z.array(z.object({ id: z.string() }).passthrough());
const Valves = z.record(z.string(), z.unknown()).nullable();
const Toggled = z
  .object({ is_active: z.boolean().optional(), is_global: z.boolean().optional() })
  .passthrough();
export const OpenaiConfig = z.object({
  ENABLE_OPENAI_API: z.boolean().nullish(),
  OPENAI_API_BASE_URLS: z.array(z.string()),
  OPENAI_API_KEYS: z.array(z.string()),
  OPENAI_API_CONFIGS: z.record(z.string(), z.record(z.string(), z.unknown())),
});
export type OpenaiConfig = z.infer<typeof OpenaiConfig>;
const Models = z.object({ data: z.array(z.object({ id: z.string() }).passthrough()) });

export type FunctionForm = {
  id: string;
  name: string;
  content: string;
  meta: { description: string };
};

export class OpenWebuiAdmin {
  readonly url: string;
  private readonly key: string;

  constructor(url: string, key: string) {
    this.url = url.replace(/\/+$/, "");
    this.key = key;
  }

  version = () => this.call("GET", "/api/version", Version).then((reply) => reply.version);
  /** Whose key it is. */
  sessionUser = () => this.call("GET", "/api/v1/auths/", SessionUser);
  listFunctions = () => this.call("GET", "/api/v1/functions/", FunctionList);

  /** An installed function (Open WebUI answers a missing one 401 "not found", routers/functions.py:269-281: look in listFunctions first). */
  getFunction = (id: string) =>
    this.call("GET", `/api/v1/functions/id/${encodeURIComponent(id)}`, InstalledFunction);

  createFunction = (form: FunctionForm) =>
    this.call("POST", "/api/v1/functions/create", InstalledFunction.partial().passthrough(), form);
  updateFunction = (form: FunctionForm) =>
    this.call(
      "POST",
      `/api/v1/functions/id/${encodeURIComponent(form.id)}/update`,
      InstalledFunction.partial().passthrough(),
      form,
    );
  deleteFunction = (id: string) =>
    this.call("DELETE", `/api/v1/functions/id/${encodeURIComponent(id)}/delete`, z.unknown());
  valves = (id: string) =>
    this.call("GET", `/api/v1/functions/id/${encodeURIComponent(id)}/valves`, Valves);
  updateValves = (id: string, valves: Record<string, unknown>) =>
    this.call(
      "POST",
      `/api/v1/functions/id/${encodeURIComponent(id)}/valves/update`,
      Valves,
      valves,
    );
  /** Flips the function's active switch; returns the new state. */
  toggleActive = (id: string) =>
    this.call("POST", `/api/v1/functions/id/${encodeURIComponent(id)}/toggle`, Toggled);
  /** Flips the function's global switch; returns the new state. */
  toggleGlobal = (id: string) =>
    this.call("POST", `/api/v1/functions/id/${encodeURIComponent(id)}/toggle/global`, Toggled);
  openaiConfig = () => this.call("GET", "/openai/config", OpenaiConfig);
  updateOpenaiConfig = (config: OpenaiConfig) =>
    this.call("POST", "/openai/config/update", OpenaiConfig, config);
  /** The model ids Open WebUI offers the admin. */
  modelIds = () =>
    this.call("GET", "/api/models", Models).then((reply) => reply.data.map((model) => model.id));

  private async call<S extends z.ZodType>(
    method: string,
    route: string,
    schema: S,
    body?: unknown,
  ): Promise<z.infer<S>> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${this.key}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      throw new OpenWebuiUnreachable(
        `cannot reach Open WebUI at ${this.url}: ${errorMessage(error instanceof Error && error.cause instanceof Error ? error.cause : error)}`,
      );
    }
    const text = await response.text();
    if (!response.ok)
      throw new OpenWebuiError(
        response.status,
        `${method} ${route} answered ${response.status}: ${detailOf(text)}`,
      );
    let json: unknown;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      throw new OpenWebuiError(
        response.status,
        `${method} ${route} did not answer JSON: is ${this.url} Open WebUI?`,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new OpenWebuiError(
        response.status,
        `${method} ${route} answered an unexpected shape: ${parsed.error.issues[0]?.message ?? "invalid"}`,
      );
    return parsed.data;
  }
}

/** Open WebUI's error body is `{ detail }`; anything else is cut short (it could echo a request). */
function detailOf(text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === "string") return detail.slice(0, 200);
  } catch {
    // Not JSON.
  }
  return text.slice(0, 120) || "(no detail)";
}
