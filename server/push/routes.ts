import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import * as z from "zod/mini";
import { errorMessage } from "../../lib/error-message.ts";
import { HTTP_ROUTES, PushEndpoint, PushSubscriptionBody } from "../../lib/http-routes.ts";
import { type AnswerAck, fail, type TabAnswer } from "../../lib/protocol.ts";
import { type ActionClaims, ActionTokenError, verifyActionToken } from "../auth/action-tokens.ts";
import { isOwnerLink, type OwnerRequest } from "../auth/owner-request.ts";
import type { Tab } from "../broker/ports.ts";
import { jsonApi, route } from "../http/json-api.ts";
import { refusedPushHost } from "./endpoint-host.ts";
import { originOf, type PushStore } from "./push-store.ts";

/**
 * The push endpoints (docs/PROTOCOL.md, "Push"):
 * - `GET /push/key`: the VAPID public key a browser subscribes with;
 * - `POST /push/subscriptions`, `DELETE /push/subscriptions` (an owner's token as `Authorization:
 *   Bearer`): opt in or out with a PushSubscription. Opting in needs a token with a key id (an owner
 *   or device link): the subscription's notifications decide approvals, so it must end with a link
 *   that can be revoked. Its endpoint must be a public push service (endpoint-host.ts);
 * - `GET /push/subscriptions`, `DELETE /push/subscriptions/<id>`: the owner's subscriptions, for the
 *   Devices tab, and removing one (an owner link only);
 * - `POST /push/actions`: a notification's button, sent by the service worker with the action token it
 *   got in the push. The token is checked (signature, expiry, bound to this ask and this decision),
 *   claimed once, and the decision goes through the broker like every answer (one winner).
 * Bodies are JSON, at most 8 KiB, validated with zod; a bad one changes nothing (http/json-api.ts).
 */

const BODY_LIMIT = 8 * 1024;

/** A subscription to store: its endpoint also on a public host, unless the tests' loopback push service is allowed. */
export function subscribeBody(allowPrivateEndpoints: boolean) {
  if (allowPrivateEndpoints) return PushSubscriptionBody;
  return z.extend(PushSubscriptionBody, {
    endpoint: PushEndpoint.check(
      z.superRefine((url: string, context) => {
        // zod goes on after a failed check: a URL that does not parse was already refused above.
        if (!URL.canParse(url)) return;
        const refused = refusedPushHost(new URL(url));
        if (refused)
          context.addIssue({ code: "custom", message: `is not a public push service: ${refused}` });
      }),
    ),
  });
}

/** How the Devices tab names a subscription: a digest of its endpoint, whose path is a capability. */
export const subscriptionId = (endpoint: string) =>
  createHash("sha256").update(endpoint).digest("base64url").slice(0, 22);

export type PushRoutesOptions = {
  store: PushStore;
  /** PUSH_ALLOW_PRIVATE_ENDPOINTS: subscriptions to loopback and private hosts are taken (tests only). */
  allowPrivateEndpoints: boolean;
  publicKey: string;
  tokenKey: Uint8Array;
  now: () => number;
  /** The owner a request's bearer token names, or null when it is not a valid owner's dashboard token. */
  ownerOf: (request: IncomingMessage) => Promise<OwnerRequest | null>;
  /** Whether a link's key id is still current: an action sent to a revoked link's subscription is refused. */
  isKnownKid: (kid: string) => Promise<boolean>;
  /** Whether a key id is the owner links' current one: only an owner link removes subscriptions from the list. */
  isOwnerLinkKid: (kid: string) => Promise<boolean>;
  owners: ReadonlySet<string>;
  answer: (tab: Tab, askId: string, answer: TabAnswer) => Promise<AnswerAck>;
  log: (message: string) => void;
};

export function createPushRoutes(options: PushRoutesOptions) {
  const key = route(HTTP_ROUTES.pushKey, {
    access: "anyone",
    handle: async () => ({ ok: true, publicKey: options.publicKey }),
  });

  const act = route(HTTP_ROUTES.pushAction, {
    access: "anyone",
    async handle({ body: { askId, decision, token } }) {
      let claims: ActionClaims;
      try {
        claims = await verifyActionToken(options.tokenKey, token, options.now());
      } catch (error) {
        if (error instanceof ActionTokenError)
          return fail(error.code === "EXPIRED" ? "EXPIRED" : "FORBIDDEN", error.message);
        throw error;
      }
      if (claims.askId !== askId || claims.decision !== decision)
        return fail("FORBIDDEN", "this action token is for another ask or decision");
      if (!options.owners.has(claims.owner))
        return fail("FORBIDDEN", "the owner this action was sent to is no longer an owner");
      if (!(await options.isKnownKid(claims.kid)))
        return fail("FORBIDDEN", "the link this notification was sent to was revoked");
      if (!(await options.store.redeem(claims.jti, claims.expiresAt, options.now())))
        return fail("ALREADY_RESOLVED", "this action was already used");
      const tab: Tab = {
        id: `push:${claims.jti.slice(0, 8)}`,
        userId: claims.owner,
        isOwner: true,
        chatClaim: null,
        reply: null,
      };
      const ack = await options.answer(tab, askId, { type: "decision", decision });
      if (ack.ok || ack.error.code !== "UNAVAILABLE") return ack;
      // Nothing was decided (Redis went away after the token was claimed): the token is good again, so
      // the notification's button works once Redis is back.
      await options.store
        .release(claims.jti)
        .catch((error: unknown) =>
          options.log(`push action token could not be released: ${errorMessage(error)}`),
        );
      return fail(
        "UNAVAILABLE",
        "Nothing was decided: the server cannot reach the store its instances share (Redis). Try again in a moment.",
      );
    },
  });

  const subscribe = route(HTTP_ROUTES.subscribe, {
    access: {
      link: "revocable",
      refusal: () =>
        "a token without a key id (such as an Open WebUI session token) cannot be revoked, so it cannot subscribe to push: open the dashboard with an owner link or a device link",
    },
    body: subscribeBody(options.allowPrivateEndpoints),
    created: true,
    async handle({ sender: { owner, link }, body: { endpoint, keys } }) {
      const evicted = await options.store.subscribe(
        {
          owner,
          link: { kid: link.kid, expiresAt: link.expiresAt },
          endpoint,
          p256dh: keys.p256dh,
          auth: keys.auth,
        },
        options.now(),
      );
      for (const oldest of evicted)
        options.log(
          `push subscription removed, its owner has more than the most kept: ${originOf(oldest)}`,
        );
      return { ok: true };
    },
  });

  const unsubscribe = route(HTTP_ROUTES.unsubscribe, {
    access: "owner",
    handle: async ({ sender, body }) => ({
      ok: true,
      removed: await options.store.unsubscribe(body.endpoint, sender.owner),
    }),
  });

  const list = route(HTTP_ROUTES.subscriptions, {
    access: "owner",
    async handle({ sender: { owner, link } }) {
      const subscriptions = (await options.store.subscriptions(new Set([owner]))).map(
        ({ endpoint, link: made, createdAt, failures }) => ({
          id: subscriptionId(endpoint),
          service: originOf(endpoint),
          linkKid: made.kid,
          createdAt,
          failures,
        }),
      );
      return {
        ok: true,
        subscriptions,
        canManage: await isOwnerLink(link, options.isOwnerLinkKid),
      };
    },
  });

  const remove = route(HTTP_ROUTES.removeSubscription, {
    access: {
      link: "owner-link",
      refusal: () =>
        "only an owner link removes push subscriptions from the list (a browser turns its own off with DELETE /push/subscriptions): open the dashboard with an owner link (npm run owner-link)",
    },
    async handle({ sender: { owner }, param: id }) {
      const subscription = (await options.store.subscriptions(new Set([owner]))).find(
        (candidate) => subscriptionId(candidate.endpoint) === id,
      );
      if (!subscription || !(await options.store.unsubscribe(subscription.endpoint, owner)))
        return fail("NOT_FOUND", "no such push subscription of yours");
      return { ok: true };
    },
  });

  return jsonApi({
    name: "push endpoint",
    paths: /^\/push\//,
    routes: [key, act, subscribe, unsubscribe, list, remove],
    bodyLimit: BODY_LIMIT,
    ownerOf: options.ownerOf,
    isOwnerLinkKid: options.isOwnerLinkKid,
    log: options.log,
  });
}
