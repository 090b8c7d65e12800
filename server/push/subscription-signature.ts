import { createHmac, timingSafeEqual } from "node:crypto";
import { derivedKey } from "../auth/keys.ts";
import type { PushSubscriptionRecord } from "./push-store.ts";

/**
 * A push subscription is what grants a decision (its approvals carry action tokens), so the stores
 * keep each with a signature of the server's: HMAC-SHA256 with a key of its own derived from
 * AUTH_SECRET, over everything that says where the pushes go and for whom (endpoint, keys, owner,
 * link). A record written into Redis or the SQLite file by anyone else does not verify and is
 * ignored (and removed) by the store.
 */

export function subscriptionKey(authSecret: string): Uint8Array {
  return derivedKey(authSecret, "pushSubscriptions");
}

const signed = ({ endpoint, owner, link, p256dh, auth }: PushSubscriptionRecord) =>
  JSON.stringify(["v1", endpoint, owner, link.kid, link.expiresAt, p256dh, auth]);

export function signSubscription(key: Uint8Array, record: PushSubscriptionRecord): string {
  return createHmac("sha256", key).update(signed(record)).digest("base64url");
}

export function isSignedSubscription(
  key: Uint8Array,
  record: PushSubscriptionRecord,
  signature: unknown,
): boolean {
  if (typeof signature !== "string") return false;
  const expected = Buffer.from(signSubscription(key, record));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
