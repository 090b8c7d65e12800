import { errorMessage } from "../lib/error-message.ts";
import type { BodyInputOf, HTTP_ROUTES, ReplyOf } from "../lib/http-routes.ts";

type Routes = typeof HTTP_ROUTES;
export type RouteName = keyof Routes;

/** A call's outcome: the reply as its route's schema read it, or what went wrong, in words. */
export type CallResult<R> = { ok: true; reply: R } | { ok: false; message: string };

export type CallOptions<K extends RouteName> = {
  /** The owner's token, sent as `Authorization: Bearer`; a route anyone may call needs none. */
  token?: string;
  /** The id in the route's path. */
  id?: string;
} & (Routes[K]["body"] extends null ? { body?: undefined } : { body: BodyInputOf<Routes[K]> });

/**
 * Calls one route of the HTTP API (lib/http-routes.ts, by its name there) and reads its reply with
 * the route's schema. A refusal says the server's message; a failed request, or a reply the schema
 * does not read, says why. The table and its schemas load with the first call, not with the page:
 * the Devices tab and push are not what a dashboard shows first.
 */
export async function callApi<K extends RouteName>(
  name: K,
  options: CallOptions<K>,
): Promise<CallResult<ReplyOf<Routes[K]>>> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  try {
    const { HTTP_ROUTES, routePath } = await import("../lib/http-routes.ts");
    const route = HTTP_ROUTES[name];
    const response = await fetch(routePath(route, options.id), {
      method: route.method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const body: unknown = await response.json().catch(() => ({}));
    const read = route.reply.safeParse(body);
    if (response.ok && read.success) return { ok: true, reply: read.data as ReplyOf<Routes[K]> };
    const refusal = (body as { error?: { message?: unknown } } | null)?.error?.message;
    if (typeof refusal === "string") return { ok: false, message: refusal };
    return {
      ok: false,
      message: response.ok ? "the server's reply did not read" : `HTTP ${response.status}`,
    };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}
