import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { DeviceName, type DeviceList } from "../../lib/devices.ts";
import { mintDeviceLink } from "./device-links.ts";
import type { DeviceStore } from "./device-store.ts";
import { fail, parseBody, serveJson, type Reply } from "../http/json-routes.ts";
import type { OwnerRequest } from "./owner-request.ts";
import type { Revocations } from "./revocations.ts";

/**
 * The device endpoints (docs/PROTOCOL.md, "Devices"), each for an owner's dashboard token as
 * `Authorization: Bearer`:
 * - `GET /devices`: the owner's devices that still work, and who minted each;
 * - `POST /devices` `{ name }`: a new device link (shown as a QR code by the dashboard);
 * - `DELETE /devices/<kid>`: revokes that device; its link's open sockets are closed, it is refused
 *   from then on, and the push subscriptions made with it are removed.
 * Minting and revoking need an owner link: what a device link or a token without a key id (an Open
 * WebUI session token) minted would outlive its revocation, and neither may undo the owner's devices.
 */

const BODY_LIMIT = 2 * 1024;

export const NewDeviceBody = z.object({ name: DeviceName });

export type DeviceRoutesOptions = {
  store: DeviceStore;
  key: Uint8Array;
  maxTokenDays: number;
  baseUrl: () => string;
  now: () => number;
  ownerOf(request: IncomingMessage): Promise<OwnerRequest | null>;
  /** Whether a key id is the owner links' current one (not a device's, not revoked). */
  isOwnerLinkKid(kid: string): Promise<boolean>;
  /** Revokes a device, and with it what else belongs to its link. */
  revocations: Revocations;
  log: (message: string) => void;
};

export function createDeviceRoutes(options: DeviceRoutesOptions) {
  /** Whether the request's link may mint and revoke devices: a current owner link. */
  const canManage = async ({ link }: OwnerRequest) => link.kid !== null && (await options.isOwnerLinkKid(link.kid));

  /** Why it may not `what`: which kind of link it is, and what to use instead. */
  function refusal({ link }: OwnerRequest, what: string): Reply {
    const which = link.kid === null ? "a token without a key id (such as an Open WebUI session token) cannot be revoked, so it" : "a device link";
    return fail(403, "FORBIDDEN", `${which} cannot ${what}: open the dashboard with an owner link (npm run owner-link)`);
  }

  async function route(request: IncomingMessage, pathname: string): Promise<Reply> {
    const sender = await options.ownerOf(request);
    if (!sender) return fail(403, "FORBIDDEN", "an owner's dashboard token is needed (Authorization: Bearer)");
    const { owner } = sender;
    const method = request.method ?? "GET";
    if (pathname === "/devices" && method === "GET") {
      const devices = (await options.store.list(owner, options.now())).map(({ kid, name, createdAt, expiresAt, mintedBy }) => ({ kid, name, createdAt, expiresAt, mintedBy }));
      const body: DeviceList = { ok: true, devices, canManage: await canManage(sender) };
      return { status: 200, body };
    }
    if (pathname === "/devices" && method === "POST") {
      if (!(await canManage(sender))) return refusal(sender, "mint device links");
      const parsed = await parseBody(request, NewDeviceBody, BODY_LIMIT);
      if (!parsed.ok) return parsed.reply;
      const mintingKid = sender.link.kid!;
      const link = await mintDeviceLink({
        store: options.store,
        key: options.key,
        owner,
        name: parsed.value.name,
        mintedBy: { kind: "owner-link", kid: mintingKid },
        maxTokenDays: options.maxTokenDays,
        baseUrl: options.baseUrl(),
        now: options.now(),
      });
      // The owner links may have been revoked (npm run owner-link -- --revoke) while this one was
      // stored, after that command revoked what they had minted: then this device goes as well.
      if (!(await options.isOwnerLinkKid(mintingKid))) {
        await options.store.revoke(link.kid, owner, options.now());
        return fail(403, "FORBIDDEN", "this owner link was revoked: mint a new one with npm run owner-link");
      }
      return { status: 201, body: { ok: true, ...link } };
    }
    const revoke = /^\/devices\/([A-Za-z0-9_-]{1,80})$/.exec(pathname);
    if (revoke && method === "DELETE") {
      if (!(await canManage(sender))) return refusal(sender, "revoke devices");
      if (!(await options.revocations.revokeDevice(revoke[1]!, owner))) return fail(404, "NOT_FOUND", "no such device of yours");
      return { status: 200, body: { ok: true } };
    }
    return fail(405, "INVALID", `${method} ${pathname} is not a device endpoint`);
  }

  return {
    handles: (request: IncomingMessage) => /^\/devices(\/|$)/.test(new URL(request.url ?? "/", "http://x").pathname),
    handle: serveJson("device endpoint", route, options.log),
  };
}
