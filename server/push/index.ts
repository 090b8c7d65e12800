import type { IncomingMessage } from "node:http";
import type { Agent } from "node:https";
import type { Clock } from "../../lib/clock.ts";
import { actionTokenKey, mintActionToken } from "../auth/action-tokens.ts";
import type { OwnerRequest } from "../auth/owner-request.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { Config } from "../config.ts";
import type { PushBackend } from "../store/backend.ts";
import { publicPushAgent } from "./endpoint-host.ts";
import { PushNotifier } from "./notifier.ts";
import { createPushRoutes } from "./routes.ts";

/**
 * Web Push, wired: the keys, the store, the notifier fed by the broker's events, and the endpoints.
 * The keys, the store and the announcements are the backend's (shared by the instances with Redis).
 */

export type PushOptions = {
  config: Config;
  authSecret: string;
  clock: Clock;
  log: (message: string) => void;
  broker: AskBroker;
  /** Where the dashboard is, for a notification's tap (the server's own URL unless PUBLIC_URL says otherwise). */
  dashboardUrl: () => string;
  ownerOf: (request: IncomingMessage) => Promise<OwnerRequest | null>;
  /** Whether a link's key id is still current: a subscription made with a revoked link is pushed to no more. */
  isKnownKid: (kid: string) => Promise<boolean>;
  /** Whether a key id is the owner links' current one (not a device's). */
  isOwnerLinkKid: (kid: string) => Promise<boolean>;
  /** The HTTPS agent for a push service on loopback (the tests'), taken with PUSH_ALLOW_PRIVATE_ENDPOINTS only. */
  agent?: Agent;
  /** Its store and announcements are closed with the backend, not here. */
  backend: PushBackend;
};

export async function createPush(options: PushOptions) {
  const { config, clock, log } = options;
  const { store, announcements } = options.backend;
  const vapid = await options.backend.vapidKeys();
  const tokenKey = actionTokenKey(options.authSecret);
  const allowPrivateEndpoints = config.PUSH_ALLOW_PRIVATE_ENDPOINTS === "1";
  // Public push services only, unless the tests' loopback one is allowed; its kept-alive sockets end on close.
  const publicAgent = allowPrivateEndpoints ? null : publicPushAgent();
  const notifier = new PushNotifier({
    store,
    announcements,
    vapid,
    subject: config.VAPID_SUBJECT,
    owners: config.owners,
    clock,
    dashboardUrl: options.dashboardUrl,
    mintToken: (claims) => mintActionToken(tokenKey, claims),
    isShown: async (askId) => (await options.broker.shownTo(askId)) !== null,
    chatTitle: async (chatId) => (await options.broker.chatTitles([chatId])).get(chatId),
    isKnownKid: options.isKnownKid,
    log,
    agent: publicAgent ?? options.agent,
  });
  const routes = createPushRoutes({
    store,
    publicKey: vapid.publicKey,
    tokenKey,
    now: () => clock.now(),
    allowPrivateEndpoints,
    ownerOf: options.ownerOf,
    isKnownKid: options.isKnownKid,
    isOwnerLinkKid: options.isOwnerLinkKid,
    owners: config.owners,
    answer: (tab, askId, answer) => options.broker.answer(tab, askId, answer),
    log,
  });
  // A new ask is announced once routed (no tab shows it: push); an ended one may replace its push.
  const unsubscribe = [
    options.broker.on("ask:changed", (ask) => notifier.changed(ask)),
    options.broker.on("ask:ended", (ask) => notifier.ended(ask)),
  ];
  return {
    notifier,
    routes,
    store,
    async close() {
      for (const stop of unsubscribe) stop();
      await notifier.idle();
      publicAgent?.destroy();
    },
  };
}
