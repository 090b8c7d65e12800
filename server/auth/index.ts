import type { IncomingMessage } from "node:http";
import type { Clock } from "../../lib/clock.ts";
import type { OwnerLinkKeyStore } from "../store/store.ts";
import type { DeviceStore } from "./device-store.ts";
import { filterSecret } from "./keys.ts";
import { isCurrentOwnerLinkKid } from "./owner-links.ts";
import { type OwnerRequest, ownerRequests } from "./owner-request.ts";
import { Revocations } from "./revocations.ts";
import { secretKey } from "./tokens.ts";

/**
 * Authentication, wired: the key tab tokens are signed with, which link key ids still work (the owner
 * links' current one, each active device's), the owner an HTTP request is from, and revocation as an
 * event the transports subscribe to. The stores are the backend's.
 */

export type AuthOptions = {
  authSecret: string;
  /** Keeps the owner links' current key id. */
  store: OwnerLinkKeyStore;
  devices: DeviceStore;
  owners: ReadonlySet<string>;
  maxTokenDays: number;
  clock: Clock;
};

export type Auth = {
  key: Uint8Array;
  /** The Open WebUI filter's key (its `auth_secret` valve): widget tokens only, never a link. */
  embedKey: Uint8Array;
  /** Whether a token's key id still works: the owner links' current one, or an active device's. */
  isKnownKid: (kid: string) => Promise<boolean>;
  /** Whether a key id is the owner links' current one (not a device's, not revoked). */
  isOwnerLinkKid: (kid: string) => Promise<boolean>;
  ownerOf: (request: IncomingMessage) => Promise<OwnerRequest | null>;
  revocations: Revocations;
};

export function createAuth({
  authSecret,
  store,
  devices,
  owners,
  maxTokenDays,
  clock,
}: AuthOptions): Auth {
  const key = secretKey(authSecret);
  const isOwnerLinkKid = isCurrentOwnerLinkKid(store);
  // Owner links share one kid; each device link has its own, revoked alone.
  const isKnownKid = async (kid: string) =>
    (await devices.isActive(kid, clock.now())) || (await isOwnerLinkKid(kid));
  return {
    key,
    embedKey: secretKey(filterSecret(authSecret)),
    isKnownKid,
    isOwnerLinkKid,
    ownerOf: ownerRequests({ key, owners, maxTokenDays, isKnownKid, now: () => clock.now() }),
    revocations: new Revocations({ devices, clock }),
  };
}
