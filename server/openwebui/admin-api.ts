import { z } from "zod";
import { errorMessage } from "../../lib/error-message.ts";
import { MAX_ANSWER_BYTES, readCapped } from "./safety.ts";

/**
 * The few routes of Open WebUI's admin API that connecting it takes (open-webui 0.11 and 0.12:
 * routers/users.py, routers/functions.py, routers/models.py, routers/openai.py, main.py), each reply
 * parsed with a schema at the boundary.
 * Every call carries the admin's key as `Authorization: Bearer`; nothing here prints it or the
 * configuration's own keys.
 */

/** Open WebUI answered, but not with what was asked: `status` says how (401/403: the key; 404: no such route). */
export class OpenWebuiError extends Error {
  readonly status: number;
  /** Open WebUI's `detail`, when it gave one: it tells apart refusals that share a status. */
  readonly detail: string | null;
  constructor(status: number, message: string, detail: string | null = null) {
    super(message);
    this.status = status;
    this.detail = detail;
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
/** Open WebUI's models; an OpenAI connection's carry its index (`urlIdx`, routers/openai.py:629 in 0.12.4). */
const Models = z.object({
  data: z.array(z.object({ id: z.string(), urlIdx: z.number().optional() }).passthrough()),
});
export type ListedModel = { id: string; urlIdx?: number };
/** A model's own settings (Admin Panel → Settings → Models), as far as they decide the tools Open WebUI sends. */
export const ModelSettings = z.object({
  id: z.string(),
  base_model_id: z.string().nullish(),
  params: z.object({ function_calling: z.string().nullish() }).passthrough().nullish(),
  meta: z
    .object({
      capabilities: z.record(z.string(), z.unknown()).nullish(),
      builtinTools: z.record(z.string(), z.unknown()).nullish(),
    })
    .passthrough()
    .nullish(),
});
export type ModelSettings = z.infer<typeof ModelSettings>;

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
  /**
   * Whose key it is, with its role. Not `GET /api/v1/auths/`: in 0.12 that takes a browser session
   * only (routers/auths.py:178-182, utils/auth.py:763-766 `get_human_user`) and answers an API key 403.
   * `GET /api/v1/users/user/status` takes any verified user's key and answers the user itself, role
   * included, on both releases (0.12.4 routers/users.py:568-579, 0.11.0 routers/users.py:519-530); it
   * answers 403 "restricted" when ENABLE_USER_STATUS is off (config.py:2110 in 0.12.4).
   */
  sessionUser = () => this.call("GET", "/api/v1/users/user/status", SessionUser);
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
  /** A model's own settings, or null when it has none (404: a connection's model as it comes; routers/models.py:789-835 in 0.12.4, :515-560 in 0.11.0). */
  modelSettings = (id: string) =>
    this.call("GET", `/api/v1/models/model?id=${encodeURIComponent(id)}`, ModelSettings).catch(
      (error: unknown) => {
        if (error instanceof OpenWebuiError && error.status === 404) return null;
        throw error;
      },
    );
  /** The models Open WebUI offers the admin, each with its connection's index where it has one. */
  models = (): Promise<ListedModel[]> =>
    this.call("GET", "/api/models", Models).then((reply) =>
      reply.data.map(({ id, urlIdx }) => (urlIdx === undefined ? { id } : { id, urlIdx })),
    );

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
    const text = await readCapped(response);
    if (text === null)
      throw new OpenWebuiError(
        response.status,
        `${method} ${route} answered more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB: is ${this.url} Open WebUI?`,
      );
    if (!response.ok)
      throw new OpenWebuiError(
        response.status,
        `${method} ${route} answered ${response.status}: ${detailOf(text) ?? (text.slice(0, 120) || "(no detail)")}`,
        detailOf(text),
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

/** Open WebUI's error body is `{ detail }`, cut short; anything else is no detail (it could echo a request). */
function detailOf(text: string): string | null {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === "string") return detail.slice(0, 200);
  } catch {
    // Not JSON.
  }
  return null;
}
