import * as z from "zod/mini";
import type { AskStatus, Decision } from "./ask.ts";
import {
  DeviceLink,
  DeviceList,
  DeviceName,
  PushKey,
  PushSubscriptionList,
  PushUnsubscribed,
} from "./devices.ts";

/**
 * The owner's HTTP API (`/push/*`, `/devices`: docs/PROTOCOL.md, "Push" and "Devices") as one table:
 * each route's method, path, body schema and the schema of its successful reply. The server declares
 * its handlers on these (server/http/json-api.ts), the dashboard calls them through
 * client/http-api.ts, which parses each reply with its route's schema. The pages import this file:
 * zod/mini (what is used, and small) and no module that loads zod's full build (lib/ask.ts does).
 */

export type HttpMethod = "GET" | "POST" | "DELETE";

export type HttpRoute<B, R extends { ok: true }> = {
  method: HttpMethod;
  /** The path; a route with an id in it ends in `:id`. */
  path: string;
  /** What the id in the path may be (a route without one has none). */
  param?: RegExp;
  /** The JSON body's schema; null for a route that reads none. */
  body: z.ZodMiniType<B> | null;
  /** The successful reply (`{ ok: true, ... }`); a refusal is an `AckError` (lib/protocol.ts). */
  reply: z.ZodMiniType<R>;
};

/** Any route of the table, whatever its body and reply. */
export type AnyHttpRoute = HttpRoute<unknown, { ok: true }>;
/** The body a route's handler reads (after its schema), and the one a caller sends. */
export type BodyOf<S extends AnyHttpRoute> = S["body"] extends null
  ? undefined
  : z.output<NonNullable<S["body"]>>;
export type BodyInputOf<S extends AnyHttpRoute> = S["body"] extends null
  ? undefined
  : z.input<NonNullable<S["body"]>>;
export type ReplyOf<S extends AnyHttpRoute> = z.output<S["reply"]>;

/** A route of the table, its schemas' own types kept (a route without a body has `body: null`). */
export const httpRoute = <const S extends AnyHttpRoute>(declared: S): S => declared;

/** The path of a route, its id filled in (`/devices/:id` with `k1` is `/devices/k1`). */
export function routePath(route: Pick<AnyHttpRoute, "path">, id?: string): string {
  return id === undefined ? route.path : route.path.replace(/:id$/, encodeURIComponent(id));
}

const Done = z.object({ ok: z.literal(true) });

/** lib/ask.ts's values, here without its zod: a value it adds or drops fails the type check. */
const DECISIONS = {
  "allow-once": "allow-once",
  "allow-always": "allow-always",
  deny: "deny",
} as const satisfies { [D in Decision]: D };
const ASK_STATUSES = {
  pending: "pending",
  answered: "answered",
  cancelled: "cancelled",
  expired: "expired",
  denied: "denied",
  "ended-as-text": "ended-as-text",
} as const satisfies { [S in AskStatus]: S };

/** Push services are HTTPS (RFC 8030), and web-push speaks nothing else. */
export const PushEndpoint = z.url().check(
  z.maxLength(2048),
  z.refine((url: string) => url.startsWith("https://"), "must be an https:// push service URL"),
);
const Base64Url = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_-]+=*$/, "must be base64url"), z.maxLength(200));
/** A browser's PushSubscription, as `toJSON()` gives it (the server also wants a public host). */
export const PushSubscriptionBody = z.object({
  endpoint: PushEndpoint,
  keys: z.object({ p256dh: Base64Url, auth: Base64Url }),
});

export const HTTP_ROUTES = {
  /** The VAPID public key a browser subscribes with. */
  pushKey: httpRoute({ method: "GET", path: "/push/key", body: null, reply: PushKey }),
  /** A notification's button, sent by the service worker with the action token it got in the push. */
  pushAction: httpRoute({
    method: "POST",
    path: "/push/actions",
    body: z.object({
      askId: z.string().check(z.minLength(1), z.maxLength(300)),
      decision: z.enum(DECISIONS),
      token: z.string().check(z.minLength(1), z.maxLength(4096)),
    }),
    reply: z.object({ ok: z.literal(true), status: z.enum(ASK_STATUSES) }),
  }),
  /** Stores this browser's subscription with the owner (renewed on every visit). */
  subscribe: httpRoute({
    method: "POST",
    path: "/push/subscriptions",
    body: PushSubscriptionBody,
    reply: Done,
  }),
  /** Turns this browser's push off. */
  unsubscribe: httpRoute({
    method: "DELETE",
    path: "/push/subscriptions",
    body: z.object({ endpoint: PushEndpoint }),
    reply: PushUnsubscribed,
  }),
  /** The owner's subscriptions, for the Devices tab. */
  subscriptions: httpRoute({
    method: "GET",
    path: "/push/subscriptions",
    body: null,
    reply: PushSubscriptionList,
  }),
  /** Removes one of the owner's subscriptions, named by its id (an owner link only). */
  removeSubscription: httpRoute({
    method: "DELETE",
    path: "/push/subscriptions/:id",
    param: /^[A-Za-z0-9_-]{22}$/,
    body: null,
    reply: Done,
  }),
  /** The owner's devices that still work, and who minted each. */
  devices: httpRoute({ method: "GET", path: "/devices", body: null, reply: DeviceList }),
  /** A new device link (shown as a QR code). */
  mintDevice: httpRoute({
    method: "POST",
    path: "/devices",
    body: z.object({ name: DeviceName }),
    reply: z.extend(DeviceLink, { ok: z.literal(true) }),
  }),
  /** Revokes a device by its key id. */
  revokeDevice: httpRoute({
    method: "DELETE",
    path: "/devices/:id",
    param: /^[A-Za-z0-9_-]{1,80}$/,
    body: null,
    reply: Done,
  }),
} as const;
