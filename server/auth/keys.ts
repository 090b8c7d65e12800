import { createHmac } from "node:crypto";

/**
 * Every key the server derives from AUTH_SECRET, each for one purpose: HMAC-SHA256 of the purpose's
 * label, keyed with the secret, so a key that leaks from one use (a marker in Redis, the filter's
 * valve) gives nothing for another. The labels are fixed: changing one changes its key, and so
 * invalidates what was signed or sealed with it (push links, subscriptions, the kept VAPID pair).
 * Tab tokens are signed with the secret itself (`secretKey` in tokens.ts), as they always were.
 */
const LABELS = {
  /** Push notifications' Allow/Deny links (action-tokens.ts). */
  pushActions: "openclaw-asks push action tokens v1",
  /**
   * What the Open WebUI filter's `auth_secret` valve holds (`filterSecret`): it signs the widget tokens
   * the filter mints, good for one chat only (auth/tokens.ts), and keys the filter's signed requests.
   * Anyone who can read Open WebUI's valves holds it; it mints no owner link and no device link.
   */
  openWebuiValve: "openclaw-asks open-webui valve v1",
  /** The Open WebUI filter's signed requests (http/filter-route.ts), derived from the valve's secret as the filter does. */
  openWebuiFilter: "openclaw-asks open-webui filter v1",
  /** The kept VAPID private key's encryption (push/vapid.ts). */
  vapidPrivateKey: "openclaw-asks vapid private key v1",
  /** The stores' signatures of push subscriptions (push/subscription-signature.ts). */
  pushSubscriptions: "openclaw-asks push subscriptions v1",
  /** Which deployment a Redis key prefix belongs to (store/deployment-marker.ts): not a key, a marker. */
  deploymentMarker: "openclaw-asks deployment marker v1",
} as const;

export type KeyPurpose = keyof typeof LABELS;

export function derivedKey(authSecret: string, purpose: KeyPurpose): Buffer {
  return createHmac("sha256", authSecret).update(LABELS[purpose]).digest();
}

/** The Open WebUI filter's secret, as its `auth_secret` valve holds it: 64 hex characters. */
export function filterSecret(authSecret: string): string {
  return derivedKey(authSecret, "openWebuiValve").toString("hex");
}
