import type { IncomingMessage } from "node:http";
import { verifyTabToken } from "./tokens.ts";

/** The link a token is: its key id (a device's or the owner links', null for a token without one) and its expiry in epoch ms. */
export type TokenLink = { kid: string | null; expiresAt: number };

/** Who sent an owner-only HTTP request: the owner, and the link whose token it carried. */
export type OwnerRequest = { owner: string; link: TokenLink };

/** Whether the link is an owner link (its key id the owner links' current one): only that mints, revokes and removes. */
export async function isOwnerLink(
  link: TokenLink,
  isOwnerLinkKid: (kid: string) => Promise<boolean>,
): Promise<boolean> {
  return link.kid !== null && (await isOwnerLinkKid(link.kid));
}

export type OwnerRequestOptions = {
  key: Uint8Array;
  owners: ReadonlySet<string>;
  maxTokenDays: number;
  isKnownKid: (kid: string) => Promise<boolean>;
  now: () => number;
};

/**
 * The owner a request's `Authorization: Bearer` dashboard token names, and the link it is, or null: no
 * token, one that does not verify (a revoked link's included), an embed token (bound to one chat), or
 * a user who is not an owner.
 */
export function ownerRequests(
  options: OwnerRequestOptions,
): (request: IncomingMessage) => Promise<OwnerRequest | null> {
  const rules = {
    maxTokenDays: options.maxTokenDays,
    isKnownKid: options.isKnownKid,
    now: options.now,
  };
  return async (request) => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
    const identity = bearer
      ? await verifyTabToken(bearer, options.key, rules).catch(() => null)
      : null;
    if (!identity || identity.chat !== null || !options.owners.has(identity.userId)) return null;
    return { owner: identity.userId, link: { kid: identity.kid, expiresAt: identity.expiresAt } };
  };
}
