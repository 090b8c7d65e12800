import { randomBytes } from "node:crypto";
import type { OwnerLinkKeyStore } from "../store/store.ts";
import { mintTabToken } from "./tokens.ts";

/**
 * Owner links: the dashboard URL printed at start and by `npm run owner-link`. Each carries the
 * store's current key id (`kid`) in its header; revoking replaces that id, so every owner link minted
 * before stops working at once while embed tokens and Open WebUI session tokens (which carry no kid)
 * are unaffected. The id is read from the store at every check, so a revocation made by the
 * `owner-link` command while the server runs refuses the next connect, and the server's periodic
 * check of its sockets' links (link-check.ts) closes the sockets already open.
 */

export type OwnerLink = { url: string; owner: string; hours: number };

const newKid = () => randomBytes(12).toString("base64url");

/** The current key id, made on first use. */
async function currentKid(store: OwnerLinkKeyStore): Promise<string> {
  const kid = await store.ownerLinkKid();
  if (kid) return kid;
  const created = newKid();
  await store.setOwnerLinkKid(created);
  return created;
}

/** Every owner link minted so far stops working. */
export function revokeOwnerLinks(store: OwnerLinkKeyStore): Promise<void> {
  return store.setOwnerLinkKid(newKid());
}

/** The check `verifyTabToken` runs on a token with a kid. */
export function isCurrentOwnerLinkKid(store: OwnerLinkKeyStore): (kid: string) => Promise<boolean> {
  return async (kid) => kid === (await store.ownerLinkKid());
}

export async function mintOwnerLink(options: {
  store: OwnerLinkKeyStore;
  key: Uint8Array;
  owner: string;
  hours: number;
  baseUrl: string;
}): Promise<OwnerLink> {
  const { store, key, owner, hours, baseUrl } = options;
  const token = await mintTabToken(key, {
    userId: owner,
    ttlSeconds: hours * 3600,
    kid: await currentKid(store),
  });
  return { url: `${baseUrl.replace(/\/$/, "")}/?token=${token}`, owner, hours };
}

export function describeOwnerLink(link: OwnerLink): string {
  return `Dashboard (owner "${link.owner}", valid ${link.hours} h): ${link.url}`;
}
