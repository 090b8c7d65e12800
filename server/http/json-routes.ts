import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { errorMessage } from "../../lib/error-message.ts";
import { type AckError, type ErrorCode, fail } from "../../lib/protocol.ts";
import { unavailable } from "../store/store.ts";
import { requestPath } from "./request-target.ts";

/**
 * What the JSON endpoints share, the owner's (`/push/*`, `/devices`: json-api.ts) and the Open WebUI
 * filter's (docs/PROTOCOL.md, "Push", "Devices", "Open WebUI filter"): answers `{ ok: true, ... }` or `{ ok: false, error: { code, message } }` with an HTTP
 * status to match, bodies of bounded size validated with zod at the boundary, a 503 to try again while
 * the Redis several instances share is away, and a logged 500 when a route throws anything else.
 */

export type Reply = { status: number; body: object };

/**
 * The HTTP status of each error code, the codes of the tab protocol's acks: every code has one, so an
 * answer never reads as the client's fault by default. A route answers another only where the code
 * alone says too little: 413 and 405 (`INVALID`: a body too large, no such endpoint), the filter's 401.
 */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ALREADY_RESOLVED: 409,
  EXPIRED: 410,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  GATEWAY_ERROR: 502,
  UNAVAILABLE: 503,
};

/** A refusal answered with its code's status, or with `status` where the code alone says too little. */
export const refused = (error: AckError, status = HTTP_STATUS[error.error.code]): Reply => ({
  status,
  body: error,
});

export type ParsedBody<T> = { ok: true; value: T } | { ok: false; reply: Reply };

/** The request's body, at most `limit` bytes, or the reply refusing a larger one. */
export async function readBody(
  request: IncomingMessage,
  limit: number,
): Promise<{ ok: true; body: Buffer } | { ok: false; reply: Reply }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return { ok: false, reply: refused(fail("INVALID", "body too large"), 413) };
    chunks.push(chunk as Buffer);
  }
  return { ok: true, body: Buffer.concat(chunks) };
}

/** The request's JSON body (at most `limit` bytes) as `schema` reads it, or the reply refusing it. */
export async function parseBody<S extends z.core.$ZodType>(
  request: IncomingMessage,
  schema: S,
  limit: number,
): Promise<ParsedBody<z.infer<S>>> {
  const read = await readBody(request, limit);
  return read.ok ? parseJson(read.body, schema) : read;
}

/** A JSON body as `schema` reads it, or the reply refusing it. */
export function parseJson<S extends z.core.$ZodType>(
  body: Buffer,
  schema: S,
): ParsedBody<z.infer<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString("utf8"));
  } catch {
    return { ok: false, reply: refused(fail("INVALID", "body is not JSON")) };
  }
  const parsed = z.safeParse(schema, raw);
  if (!parsed.success)
    return {
      ok: false,
      reply: refused(
        fail(
          "INVALID",
          parsed.error.issues
            .map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`)
            .join("; "),
        ),
      ),
    };
  return { ok: true, value: parsed.data };
}

/**
 * Serves `route`'s reply as JSON. A route that meets the shared store away is answered 503: nothing was
 * done, and the same request works once Redis is back. One that throws anything else is logged (as
 * `<what> <path>`) and answered 500.
 */
export function serveJson(
  what: string,
  route: (request: IncomingMessage, pathname: string) => Promise<Reply>,
  log: (message: string) => void,
) {
  const send = (response: ServerResponse, { status, body }: Reply) => {
    if (!response.headersSent)
      response
        .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
        .end(JSON.stringify(body));
  };
  return (request: IncomingMessage, response: ServerResponse): void => {
    const pathname = requestPath(request.url);
    route(request, pathname).then(
      (reply) => send(response, reply),
      (error: unknown) => {
        const away = unavailable(error, (why) => `${why}: nothing was done; try again in a moment`);
        if (away) return send(response, refused(away));
        log(`${what} ${pathname} failed: ${errorMessage(error)}`);
        send(response, refused(fail("INTERNAL", "internal error")));
      },
    );
  };
}
