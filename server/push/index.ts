import type { IncomingMessage } from "node:http";
import type { Agent } from "node:https";
import path from "node:path";
import type { Clock } from "../../lib/clock.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { Config } from "../config.ts";
import type { OwnerRequest } from "../http/owner-request.ts";
import { actionTokenKey, mintActionToken } from "./action-tokens.ts";
import { PushNotifier } from "./notifier.ts";
import { PushStore } from "./push-store.ts";
import { createPushRoutes } from "./routes.ts";
import { loadVapidKeys } from "./vapid.ts";

/** Web Push, wired: the keys, the store, the notifier fed by the broker's events, and the endpoints. */

export type PushOptions = {
  config: Config;
  authSecret: string;
  clock: Clock;
  log: (message: string) => void;
  broker: AskBroker;
  /** Where the dashboard is, for a notification's tap (the server's own URL unless PUBLIC_URL says otherwise). */
  dashboardUrl: () => string;
  ownerOf(request: IncomingMessage): Promise<OwnerRequest | null>;
  agent?: Agent;
};

export function createPush(options: PushOptions) {
  const { config, clock, log } = options;
  const vapid = loadVapidKeys({ dataDir: config.DATA_DIR, publicKey: config.VAPID_PUBLIC_KEY, privateKey: config.VAPID_PRIVATE_KEY });
  const store = new PushStore(path.join(config.DATA_DIR, "push.sqlite"));
  const tokenKey = actionTokenKey(options.authSecret);
  const notifier = new PushNotifier({
    store,
    vapid,
    subject: config.VAPID_SUBJECT,
    owners: config.owners,
    clock,
    dashboardUrl: options.dashboardUrl,
    mintToken: (claims) => mintActionToken(tokenKey, claims),
    isShown: async (askId) => (await options.broker.shownTo(askId)) !== null,
    log,
    agent: options.agent,
  });
  const routes = createPushRoutes({
    store,
    publicKey: vapid.publicKey,
    tokenKey,
    now: () => clock.now(),
    ownerOf: options.ownerOf,
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
      store.close();
    },
  };
}
