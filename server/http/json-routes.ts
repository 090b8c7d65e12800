import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";

/**
 * What the owner-facing JSON endpoints (`/push/*`, `/devices`) share (docs/PROTOCOL.md, "Push" and
 * "Devices"): answers `{ ok: true, ... }` or `{ ok: false, error: { code, message } }` with an HTTP
 * status to match, bodies of bounded size validated with zod at the boundary, and a logged 500 when a
 * route throws.
 */

export type Reply = { status: number; body: object };

export const fail = (status: number, code: string, message: string): Reply => ({ status, body: { ok: false, error: { code, message } } });

export type ParsedBody<T> = { ok: true; value: T } | { ok: false; reply: Reply };

/** The request's body, at most `limit` bytes, or the reply refusing a larger one. */
export async function readBody(request: IncomingMessage, limit: number): Promise<{ ok: true; body: Buffer } | { ok: false; reply: Reply }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) return { ok: false, reply: fail(413, "INVALID", "body too large") };
    chunks.push(chunk as Buffer);
  }
  return { ok: true, body: Buffer.concat(chunks) };
}

/** The request's JSON body (at most `limit` bytes) as `schema` reads it, or the reply refusing it. */
export async function parseBody<S extends z.ZodType>(request: IncomingMessage, schema: S, limit: number): Promise<ParsedBody<z.infer<S>>> {
  const read = await readBody(request, limit);
  return read.ok ? parseJson(read.body, schema) : read;
}

/** A JSON body as `schema` reads it, or the reply refusing it. */
export function parseJson<S extends z.ZodType>(body: Buffer, schema: S): ParsedBody<z.infer<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString("utf8"));
  } catch {
    return { ok: false, reply: fail(400, "INVALID", "body is not JSON") };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, reply: fail(400, "INVALID", parsed.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ")) };
  return { ok: true, value: parsed.data };
}

/** Serves `route`'s reply as JSON; a route that throws is logged (as `<what> <path>`) and answered 500. */
export function serveJson(what: string, route: (request: IncomingMessage, pathname: string) => Promise<Reply>, log: (message: string) => void) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const { pathname } = new URL(request.url ?? "/", "http://x");
    route(request, pathname).then(
      ({ status, body }) => response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body)),
      (error: unknown) => {
        log(`${what} ${pathname} failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ ok: false, error: { code: "INTERNAL", message: "internal error" } }));
      },
    );
  };
}
