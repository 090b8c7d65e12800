import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { mintDeviceLink } from "./device-links.ts";
import type { DeviceStore } from "./device-store.ts";
import type { OwnerRequest } from "../http/owner-request.ts";

/**
 * The device endpoints (docs/PROTOCOL.md, "Devices"), each for an owner's dashboard token as
 * `Authorization: Bearer`:
 * - `GET /devices`: the owner's devices that still work;
 * - `POST /devices` `{ name }`: a new device link (shown as a QR code by the dashboard);
 * - `DELETE /devices/<kid>`: revokes that device; its link is refused from its next connect on, and
 *   the push subscriptions made with it are removed.
 */

const BODY_LIMIT = 2 * 1024;

export const NewDeviceBody = z.object({ name: z.string().trim().min(1, "must name the device").max(60) });

type Reply = { status: number; body: object };

const fail = (status: number, code: string, message: string): Reply => ({ status, body: { ok: false, error: { code, message } } });

export type DeviceRoutesOptions = {
  store: DeviceStore;
  key: Uint8Array;
  maxTokenDays: number;
  baseUrl: () => string;
  now: () => number;
  ownerOf(request: IncomingMessage): Promise<OwnerRequest | null>;
  /** A device was revoked: what else belongs to it goes too. */
  onRevoke(kid: string): void;
  log: (message: string) => void;
};

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new RangeError("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export function createDeviceRoutes(options: DeviceRoutesOptions) {
  async function route(request: IncomingMessage, pathname: string): Promise<Reply> {
    const owner = (await options.ownerOf(request))?.owner;
    if (!owner) return fail(403, "FORBIDDEN", "an owner's dashboard token is needed (Authorization: Bearer)");
    const method = request.method ?? "GET";
    if (pathname === "/devices" && method === "GET") {
      const devices = options.store.list(owner, options.now()).map(({ kid, name, createdAt, expiresAt }) => ({ kid, name, createdAt, expiresAt }));
      return { status: 200, body: { ok: true, devices } };
    }
    if (pathname === "/devices" && method === "POST") {
      let raw: unknown;
      try {
        raw = await readJson(request);
      } catch {
        return fail(400, "INVALID", "body is not JSON (or is too large)");
      }
      const parsed = NewDeviceBody.safeParse(raw);
      if (!parsed.success) return fail(400, "INVALID", parsed.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; "));
      const link = await mintDeviceLink({ store: options.store, key: options.key, owner, name: parsed.data.name, maxTokenDays: options.maxTokenDays, baseUrl: options.baseUrl(), now: options.now() });
      return { status: 201, body: { ok: true, ...link } };
    }
    const revoke = /^\/devices\/([A-Za-z0-9_-]{1,80})$/.exec(pathname);
    if (revoke && method === "DELETE") {
      if (!options.store.revoke(revoke[1]!, owner, options.now())) return fail(404, "NOT_FOUND", "no such device of yours");
      options.onRevoke(revoke[1]!);
      return { status: 200, body: { ok: true } };
    }
    return fail(405, "INVALID", `${method} ${pathname} is not a device endpoint`);
  }

  return {
    handles: (request: IncomingMessage) => /^\/devices(\/|$)/.test(new URL(request.url ?? "/", "http://x").pathname),
    handle(request: IncomingMessage, response: ServerResponse): void {
      const { pathname } = new URL(request.url ?? "/", "http://x");
      route(request, pathname).then(
        ({ status, body }) => response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body)),
        (error: unknown) => {
          options.log(`device endpoint ${pathname} failed: ${error instanceof Error ? error.message : String(error)}`);
          if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ ok: false, error: { code: "INTERNAL", message: "internal error" } }));
        },
      );
    },
  };
}
