import type { Agent } from "node:https";
import webpush, { WebPushError } from "web-push";
import type { Ask, Decision } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import type { ActionClaims } from "../auth/action-tokens.ts";
import type { PushAnnouncements } from "./announcements.ts";
import { askPush, outcomePush, PUSH_DECISIONS, type PushPayload } from "./payload.ts";
import { originOf, type PushStore, type StoredPushSubscription } from "./push-store.ts";
import type { VapidKeys } from "./vapid.ts";

/**
 * Sends Web Push notifications to the owners' subscriptions:
 * - a new ask that no tab shows: one push per subscription (approvals with one action token per
 *   offered decision, minted for that subscription's owner);
 * - when an ask that was pushed ends (answered anywhere, expired): a second push with the same tag and
 *   a one-line outcome, which replaces the first notification.
 * Each is sent once per event even with several instances, which all hear every ask: the announcements
 * decide which instance announces an ask, and whether its ending follows one.
 * A subscription is pushed to only while the link it was made with works (unexpired, not revoked):
 * its approvals carry action tokens. One whose link no longer works is removed, as is one the push
 * service calls gone (404, 410) and one whose pushes failed MAX_FAILURES_IN_A_ROW times in a row (any
 * other refusal, no answer, an unreachable or refused host). Sends run in the background; each is
 * caught and logged, and `idle()` waits for the ones in flight.
 */

export type PushNotifierOptions = {
  store: PushStore;
  /** Which asks were announced: in memory for one process, in Redis across instances. */
  announcements: PushAnnouncements;
  vapid: VapidKeys;
  /** `mailto:` or `https:`: who the push services may contact about this sender. */
  subject: string;
  owners: ReadonlySet<string>;
  clock: Clock;
  dashboardUrl: () => string;
  mintToken(claims: Omit<ActionClaims, "jti">): Promise<string>;
  /** Whether a tab shows the ask now (its chat's newest viewer). */
  isShown(askId: string): Promise<boolean>;
  /** Open WebUI's title of a chat, when known: a notification names the chat by it. */
  chatTitle(chatId: string): Promise<string | undefined>;
  /** Whether a link's key id is still current (an unrevoked owner-link key, an active device). */
  isKnownKid: (kid: string) => Promise<boolean>;
  log: (message: string) => void;
  /** The HTTPS agent for push services (one that trusts a private CA: a self-hosted push service, the tests' stand-in). */
  agent?: Agent;
};

const GONE = new Set([404, 410]);
/** A subscription whose pushes failed this many times in a row is removed (a success in between starts the count again). */
export const MAX_FAILURES_IN_A_ROW = 5;
const DEFAULT_TTL_SECONDS = 3600;
const SEND_TIMEOUT_MS = 15_000;

export class PushNotifier {
  private readonly inFlight = new Set<Promise<void>>();

  private readonly options: PushNotifierOptions;

  constructor(options: PushNotifierOptions) {
    this.options = options;
  }

  /** Every change of every ask (the broker's dashboard feed): a new pending ask is announced once. */
  changed(ask: Ask): void {
    if (ask.status !== "pending") return;
    this.track(this.announceUnlessShown(ask));
  }

  /** The ask ended: a pushed one gets its outcome push, under the same tag. */
  ended(ask: Ask): void {
    this.track(this.announceOutcome(ask));
  }

  /** Resolves once every push started so far has been sent or has failed. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Every send is caught here, logged, and counted in flight until it settles. */
  private track(work: Promise<void>): void {
    const tracked: Promise<void> = work
      .catch((error: unknown) => this.options.log(`push failed: ${errorMessage(error)}`))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async announceUnlessShown(ask: Ask): Promise<void> {
    if (!(await this.options.announcements.claim(ask, this.options.clock.now()))) return;
    // The broker announces a new ask after routing it: a tab that shows it is known by now.
    if (await this.options.isShown(ask.id)) return;
    const subscriptions = await this.liveSubscriptions();
    if (subscriptions.length === 0) return;
    // Ended meanwhile: nothing to announce.
    if (!(await this.options.announcements.markPushed(ask.id))) return;
    const now = this.options.clock.now();
    const ttl =
      ask.expiresAt === null
        ? DEFAULT_TTL_SECONDS
        : Math.max(1, Math.floor((ask.expiresAt - now) / 1000));
    const chatTitle = ask.chatId === null ? undefined : await this.options.chatTitle(ask.chatId);
    await this.deliver(
      ask,
      async (subscription) =>
        askPush(ask, {
          now,
          dashboardUrl: this.options.dashboardUrl(),
          chatTitle,
          tokens: await this.tokensFor(ask, subscription),
        }),
      ttl,
      subscriptions,
    );
  }

  private async announceOutcome(ask: Ask): Promise<void> {
    if (!(await this.options.announcements.ended(ask.id))) return;
    const subscriptions = await this.liveSubscriptions();
    await this.deliver(
      ask,
      () => Promise.resolve(outcomePush(ask, this.options.dashboardUrl())),
      DEFAULT_TTL_SECONDS,
      subscriptions,
    );
  }

  /** The owners' subscriptions whose link still works; the others are removed on the way. */
  private async liveSubscriptions(): Promise<StoredPushSubscription[]> {
    const now = this.options.clock.now();
    const live: StoredPushSubscription[] = [];
    // The subscriptions made with one link (every owner link's share one key id) ask about it once.
    const known = new Map<string, boolean>();
    const isKnown = async (kid: string): Promise<boolean> => {
      let answer = known.get(kid);
      if (answer === undefined) known.set(kid, (answer = await this.options.isKnownKid(kid)));
      return answer;
    };
    for (const subscription of await this.options.store.subscriptions(this.options.owners)) {
      const { kid, expiresAt } = subscription.link;
      if (expiresAt > now && (await isKnown(kid))) {
        live.push(subscription);
        continue;
      }
      await this.options.store.forget(subscription.endpoint);
      this.options.log(
        `push subscription removed, its link ${expiresAt > now ? "was revoked" : "expired"}: ${originOf(subscription.endpoint)}`,
      );
    }
    return live;
  }

  /** The subscription's action tokens: for its owner, naming its link, expiring with the ask or the link, whichever is first. */
  private async tokensFor(
    ask: Ask,
    subscription: StoredPushSubscription,
  ): Promise<Partial<Record<Decision, string>>> {
    if (ask.kind !== "approval" || ask.expiresAt === null) return {};
    const tokens: Partial<Record<Decision, string>> = {};
    const { owner, link } = subscription;
    for (const decision of PUSH_DECISIONS) {
      if (!ask.approval.decisions.includes(decision)) continue;
      tokens[decision] = await this.options.mintToken({
        askId: ask.id,
        decision,
        owner,
        kid: link.kid,
        expiresAt: Math.min(ask.expiresAt, link.expiresAt),
      });
    }
    return tokens;
  }

  private async deliver(
    ask: Ask,
    payloadFor: (subscription: StoredPushSubscription) => Promise<PushPayload>,
    ttl: number,
    subscriptions: StoredPushSubscription[],
  ): Promise<void> {
    const vapidDetails = {
      subject: this.options.subject,
      publicKey: this.options.vapid.publicKey,
      privateKey: this.options.vapid.privateKey,
    };
    const urgency = ask.kind === "approval" || ask.status !== "pending" ? "high" : "normal";
    await Promise.all(
      subscriptions.map(async (subscription) => {
        const payload = JSON.stringify(await payloadFor(subscription));
        try {
          await webpush.sendNotification(
            {
              endpoint: subscription.endpoint,
              keys: { p256dh: subscription.p256dh, auth: subscription.auth },
            },
            payload,
            {
              vapidDetails,
              TTL: ttl,
              urgency,
              contentEncoding: "aes128gcm",
              timeout: SEND_TIMEOUT_MS,
              ...(this.options.agent ? { agent: this.options.agent } : {}),
            },
          );
        } catch (error) {
          await this.failed(subscription, error);
          return;
        }
        if (subscription.failures > 0)
          await this.options.store.clearFailures(subscription.endpoint);
      }),
    );
  }

  /** A push to it failed: gone (404, 410) removes it at once, anything else once it has failed too often in a row. */
  private async failed(subscription: StoredPushSubscription, error: unknown): Promise<void> {
    const service = originOf(subscription.endpoint);
    if (error instanceof WebPushError && GONE.has(error.statusCode)) {
      await this.options.store.forget(subscription.endpoint);
      this.options.log(`push subscription gone (${error.statusCode}), removed: ${service}`);
      return;
    }
    const why = error instanceof WebPushError ? `HTTP ${error.statusCode}` : errorMessage(error);
    const failures = await this.options.store.countFailure(subscription.endpoint);
    if (failures < MAX_FAILURES_IN_A_ROW) {
      this.options.log(
        `push to ${service} failed (${failures} of ${MAX_FAILURES_IN_A_ROW} in a row): ${why}`,
      );
      return;
    }
    await this.options.store.forget(subscription.endpoint);
    this.options.log(
      `push subscription removed after ${failures} failed pushes in a row: ${service} (${why})`,
    );
  }
}
