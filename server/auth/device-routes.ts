import type { IncomingMessage } from "node:http";
import { HTTP_ROUTES } from "../../lib/http-routes.ts";
import { fail } from "../../lib/protocol.ts";
import { jsonApi, route } from "../http/json-api.ts";
import { mintDeviceLink } from "./device-links.ts";
import type { DeviceStore } from "./device-store.ts";
import { isOwnerLink, type OwnerRequest } from "./owner-request.ts";
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

export type DeviceRoutesOptions = {
  store: DeviceStore;
  key: Uint8Array;
  maxTokenDays: number;
  baseUrl: () => string;
  now: () => number;
  ownerOf: (request: IncomingMessage) => Promise<OwnerRequest | null>;
  /** Whether a key id is the owner links' current one (not a device's, not revoked). */
  isOwnerLinkKid: (kid: string) => Promise<boolean>;
  /** Revokes a device, and with it what else belongs to its link. */
  revocations: Revocations;
  log: (message: string) => void;
};

/** Why a token that is not an owner link may not `what`: which kind of link it is, and what to use instead. */
function refusal(what: string) {
  return ({ link }: OwnerRequest) => {
    const which =
      link.kid === null
        ? "a token without a key id (such as an Open WebUI session token) cannot be revoked, so it"
        : "a device link";
    return `${which} cannot ${what}: open the dashboard with an owner link (npm run owner-link)`;
  };
}

export function createDeviceRoutes(options: DeviceRoutesOptions) {
  const list = route(HTTP_ROUTES.devices, {
    access: "owner",
    async handle({ sender: { owner, link } }) {
      const devices = (await options.store.list(owner, options.now())).map(
        ({ kid, name, createdAt, expiresAt, mintedBy }) => ({
          kid,
          name,
          createdAt,
          expiresAt,
          mintedBy,
        }),
      );
      return { ok: true, devices, canManage: await isOwnerLink(link, options.isOwnerLinkKid) };
    },
  });

  const mint = route(HTTP_ROUTES.mintDevice, {
    access: { link: "owner-link", refusal: refusal("mint device links") },
    created: true,
    async handle({ sender: { owner, link: minting }, body }) {
      const link = await mintDeviceLink({
        store: options.store,
        key: options.key,
        owner,
        name: body.name,
        mintedBy: { kind: "owner-link", kid: minting.kid },
        maxTokenDays: options.maxTokenDays,
        baseUrl: options.baseUrl(),
        now: options.now(),
      });
      // The owner links may have been revoked (npm run owner-link -- --revoke) while this one was
      // stored, after that command revoked what they had minted: then this device goes as well. It
      // was never handed out, so nothing else of its link is there to end.
      if (!(await options.isOwnerLinkKid(minting.kid))) {
        await options.store.revoke(link.kid, owner, options.now());
        return fail(
          "FORBIDDEN",
          "this owner link was revoked: mint a new one with npm run owner-link",
        );
      }
      return { ok: true, ...link };
    },
  });

  const revoke = route(HTTP_ROUTES.revokeDevice, {
    access: { link: "owner-link", refusal: refusal("revoke devices") },
    async handle({ sender: { owner }, param: kid }) {
      if (!(await options.revocations.revokeDevice(kid, owner)))
        return fail("NOT_FOUND", "no such device of yours");
      return { ok: true };
    },
  });

  return jsonApi({
    name: "device endpoint",
    paths: /^\/devices(\/|$)/,
    routes: [list, mint, revoke],
    bodyLimit: BODY_LIMIT,
    ownersOnly: true,
    ownerOf: options.ownerOf,
    isOwnerLinkKid: options.isOwnerLinkKid,
    log: options.log,
  });
}
