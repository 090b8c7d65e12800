import * as z from "zod/mini";
import { cleanName } from "./display-text.ts";

/**
 * What the dashboard's Devices tab and push opt-in read and send (docs/PROTOCOL.md, "Devices" and
 * "Push"): device links, who minted each, the owner's push subscriptions, and each endpoint's reply
 * (an error is an `AckError`, lib/protocol.ts), as the route table (lib/http-routes.ts) names them:
 * the server reads the bodies with these schemas and the dashboard the replies. zod/mini, which the
 * bundler keeps to what is used: the dashboard's bundle carries these schemas.
 */

export const DEVICE_NAME_MAX_CHARACTERS = 60;

/**
 * A device's name as the owner gave it, cleaned as every name shown is (lib/display-text.ts); then
 * 1-60 characters (code points). So a device cannot
 * look like another in the list by hidden or reordering characters.
 */
export const DeviceName = z.pipe(
  z.pipe(z.string().check(z.maxLength(1000)), z.transform(cleanName)),
  z.string().check(
    z.minLength(1, "must name the device"),
    z.refine(
      (name) => [...name].length <= DEVICE_NAME_MAX_CHARACTERS,
      `must be at most ${DEVICE_NAME_MAX_CHARACTERS} characters`,
    ),
  ),
);

/**
 * Which link minted a device link: an owner link (its key id: `npm run owner-link -- --revoke` ends
 * the devices minted through owner links), `npm run owner-link -- --device` on the server itself, or
 * unrecorded (a device minted by a version that did not record it, treated as an owner link's).
 */
export const DeviceMinter = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("owner-link"), kid: z.string().check(z.minLength(1)) }),
  z.object({ kind: z.literal("command-line") }),
  z.object({ kind: z.literal("unrecorded") }),
]);
export type DeviceMinter = z.infer<typeof DeviceMinter>;

/** One device of `GET /devices`. */
export const DeviceSummary = z.object({
  kid: z.string(),
  name: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  mintedBy: DeviceMinter,
});
export type DeviceSummary = z.infer<typeof DeviceSummary>;

/**
 * `GET /devices`: the owner's working devices, newest first, and whether this token may mint and
 * revoke them (an owner link may; a device link or a token without a key id may not).
 */
export const DeviceList = z.object({
  ok: z.literal(true),
  devices: z.array(DeviceSummary),
  canManage: z.boolean(),
});
export type DeviceList = z.infer<typeof DeviceList>;

/**
 * `POST /devices`: the new device link (`<base>/?device=1&token=<token>`, shown as a QR code), its key
 * id, its name as stored and its expiry.
 */
export const DeviceLink = z.object({
  url: z.string(),
  kid: z.string(),
  name: z.string(),
  expiresAt: z.number(),
});
export type DeviceLink = z.infer<typeof DeviceLink>;

/** `GET /push/key`: the VAPID public key (base64url) a browser subscribes with. */
export const PushKey = z.object({ ok: z.literal(true), publicKey: z.string() });
export type PushKey = z.infer<typeof PushKey>;

/** `DELETE /push/subscriptions`: whether the owner had that subscription to remove. */
export const PushUnsubscribed = z.object({ ok: z.literal(true), removed: z.boolean() });
export type PushUnsubscribed = z.infer<typeof PushUnsubscribed>;

/**
 * One of `GET /push/subscriptions`: named by a digest of its endpoint (whose path is a capability),
 * with its push service's origin, the key id of the link it was made with (a device's, or the owner
 * links'), when it was first stored, and how many pushes to it failed in a row.
 */
export const PushSubscriptionSummary = z.object({
  id: z.string(),
  service: z.string(),
  linkKid: z.string(),
  createdAt: z.number(),
  failures: z.number(),
});
export type PushSubscriptionSummary = z.infer<typeof PushSubscriptionSummary>;

/** `GET /push/subscriptions`: the owner's, oldest first, and whether this token may remove them (an owner link). */
export const PushSubscriptionList = z.object({
  ok: z.literal(true),
  subscriptions: z.array(PushSubscriptionSummary),
  canManage: z.boolean(),
});
export type PushSubscriptionList = z.infer<typeof PushSubscriptionList>;
