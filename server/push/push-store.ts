import { z } from "zod";
import { isSignedSubscription } from "./subscription-signature.ts";

/**
 * The push store: each owner's push subscriptions, each with the link it was made with, and the action
 * tokens already redeemed (kept until their expiry, so a replay is refused). One process keeps it in
 * its own SQLite file under DATA_DIR (0600); several instances share it in Redis, so a subscription
 * made on one is pushed to by any and a token redeemed on one is a replay on every other.
 *
 * Every subscription is stored signed by the server (subscription-signature.ts); one that does not
 * verify (written by someone else with access to Redis or the file, or by an earlier version) or does
 * not read is removed when it is read, and logged then, once. An owner keeps at most
 * MAX_SUBSCRIPTIONS_PER_OWNER: storing one more removes their oldest. Each counts the pushes to it
 * that failed in a row (the notifier removes it after a few). The two stores: sqlite-push-store.ts
 * and redis-push-store.ts.
 */

/** The link an owner subscribed with: its key id (a device's, or the owner links') and its expiry (epoch ms). */
export type SubscriptionLink = { kid: string; expiresAt: number };

export type PushSubscriptionRecord = {
  owner: string;
  /** Its notifications carry action tokens, so it is pushed to only while this link works. */
  link: SubscriptionLink;
  endpoint: string;
  p256dh: string;
  auth: string;
};

/** A subscription as the store hands it back: verified, with when it was first stored and how many pushes to it failed in a row. */
export type StoredPushSubscription = PushSubscriptionRecord & {
  createdAt: number;
  failures: number;
};

/** Subscriptions per owner; a browser has one per site, so this is many devices, and bounds what one ask costs. */
export const MAX_SUBSCRIPTIONS_PER_OWNER = 20;

export interface PushStore {
  /**
   * Stores it signed (the same endpoint again replaces it, keeps its creation time and clears its
   * failures); the owner's oldest subscriptions beyond the cap are removed. Returns their endpoints.
   */
  subscribe(record: PushSubscriptionRecord, now: number): Promise<string[]>;
  /** An owner removes one of their own subscriptions; returns whether there was one. */
  unsubscribe(endpoint: string, owner: string): Promise<boolean>;
  /** The subscription is gone (the push service said so, its link ended, its pushes kept failing). */
  forget(endpoint: string): Promise<void>;
  /** The subscriptions made with a revoked device's link. */
  forgetDevice(kid: string): Promise<void>;
  /** These owners' subscriptions, oldest first. */
  subscriptions(owners: ReadonlySet<string>): Promise<StoredPushSubscription[]>;
  /** A push to it failed: how many did in a row now (0 when it is no longer stored). */
  countFailure(endpoint: string): Promise<number>;
  /** A push to it went through: its failures are forgotten. */
  clearFailures(endpoint: string): Promise<void>;
  /** Claims a token id once: true for the first redemption, false for every replay (atomic, even across instances). */
  redeem(jti: string, expiresAt: number, now: number): Promise<boolean>;
  /** Undoes a redemption whose decision was not taken (the store went away meanwhile): the token works again. */
  release(jti: string): Promise<void>;
  close(): void;
}

/** `signingKey` signs and checks the stored subscriptions; `log` says which were removed as unsigned or unreadable. */
export type PushStoreOptions = { signingKey: Uint8Array; log: (message: string) => void };

/** A stored subscription's fields, however each store keeps them; `signature` is checked after. */
const StoredSubscription = z.object({
  owner: z.string().min(1),
  link: z.object({ kid: z.string().min(1), expiresAt: z.number() }),
  endpoint: z.string().min(1),
  p256dh: z.string().min(1),
  auth: z.string().min(1),
  createdAt: z.number(),
  failures: z.number().int().nonnegative(),
  signature: z.unknown().optional(),
});

/** Reads a stored subscription back: what does not read or verify is reported (to be removed) with why. */
export function verifiedSubscription(
  key: Uint8Array,
  fields: unknown,
): { ok: true; subscription: StoredPushSubscription } | { ok: false; why: string } {
  const parsed = StoredSubscription.safeParse(fields);
  if (!parsed.success)
    return {
      ok: false,
      why: `does not read (${parsed.error.issues[0]?.path.join(".") || "record"})`,
    };
  const { signature, ...subscription } = parsed.data;
  if (!isSignedSubscription(key, subscription, signature))
    return { ok: false, why: "is not signed by this server" };
  return { ok: true, subscription };
}

/** An endpoint's origin only: its path is the subscription's capability. */
export function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return "(an unparsable endpoint)";
  }
}

/** The line logged for a stored subscription removed because it did not read or verify. */
export const removedUnverifiedLine = (endpoint: string, why: string) =>
  `push subscription for ${originOf(endpoint)} ${why}: ignored and removed`;
