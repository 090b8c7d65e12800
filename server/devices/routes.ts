import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { mintDeviceLink } from "./device-links.ts";
import type { DeviceStore } from "./device-store.ts";
import { fail, parseBody, serveJson, type Reply } from "../http/json-routes.ts";
import type { OwnerRequest } from "../http/owner-request.ts";

/**
 * The device endpoints (docs/PROTOCOL.md, "Devices"), each for an owner's dashboard token as
 * `Authorization: Bearer`:
 * - `GET /devices`: the owner's devices that still work;
 * - `POST /devices` `{ name }`: a new device link (shown as a QR code by the dashboard);
 * - `DELETE /devices/<kid>`: revokes that device; its link's open sockets are closed, it is refused
 *   from then on, and the push subscriptions made with it are removed.
 */

const BODY_LIMIT = 2 * 1024;

export const NewDeviceBody = z.object({ name: z.string().trim().min(1, "must name the device").max(60) });

export type DeviceRoutesOptions = {
  store: DeviceStore;
  key: Uint8Array;
  maxTokenDays: number;
  baseUrl: () => string;
  now: () => number;
  ownerOf(request: IncomingMessage): Promise<OwnerRequest | null>;
  /** A device was revoked: what else belongs to it goes too. */
  onRevoke(kid: string): Promise<void>;
  log: (message: string) => void;
};

export function createDeviceRoutes(options: DeviceRoutesOptions) {
  async function route(request: IncomingMessage, pathname: string): Promise<Reply> {
    const owner = (await options.ownerOf(request))?.owner;
    if (!owner) return fail(403, "FORBIDDEN", "an owner's dashboard token is needed (Authorization: Bearer)");
    const method = request.method ?? "GET";
    if (pathname === "/devices" && method === "GET") {
      const devices = (await options.store.list(owner, options.now())).map(({ kid, name, createdAt, expiresAt }) => ({ kid, name, createdAt, expiresAt }));
      return { status: 200, body: { ok: true, devices } };
    }
    if (pathname === "/devices" && method === "POST") {
      const parsed = await parseBody(request, NewDeviceBody, BODY_LIMIT);
      if (!parsed.ok) return parsed.reply;
      const link = await mintDeviceLink({ store: options.store, key: options.key, owner, name: parsed.value.name, maxTokenDays: options.maxTokenDays, baseUrl: options.baseUrl(), now: options.now() });
      return { status: 201, body: { ok: true, ...link } };
    }
    const revoke = /^\/devices\/([A-Za-z0-9_-]{1,80})$/.exec(pathname);
    if (revoke && method === "DELETE") {
      if (!(await options.store.revoke(revoke[1]!, owner, options.now()))) return fail(404, "NOT_FOUND", "no such device of yours");
      await options.onRevoke(revoke[1]!);
      return { status: 200, body: { ok: true } };
    }
    return fail(405, "INVALID", `${method} ${pathname} is not a device endpoint`);
  }

  return {
    handles: (request: IncomingMessage) => /^\/devices(\/|$)/.test(new URL(request.url ?? "/", "http://x").pathname),
    handle: serveJson("device endpoint", route, options.log),
  };
}
