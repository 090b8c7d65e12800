import type { Socket } from "socket.io-client";
import type { TabAnswer } from "../../lib/protocol.ts";
import { mintActToken, mintTabToken, secretKey } from "../../server/auth/tokens.ts";
import { TEST_REPLY } from "../support/replies.ts";
import { nowMs } from "./clock.ts";
import type { Counts, Heap, Target } from "./ipc.ts";
import type { ServerProcess } from "./server-link.ts";
import { round, summarize, type Summary } from "./stats.ts";
import { type BenchTab,openIdleTab, openMany, openTab, strays } from "./tabs.ts";

/**
 * The figures measured against the fake Gateway, product and bare relay side by side in one server
 * process, with the tabs here in the load client (times: clock.ts, one clock for both processes):
 *   delivery  the fake Gateway emits `question.requested` (stamped in the server process, asked for
 *             over IPC) → server → `ask:show` on the viewing tab (stamped here)
 *   handoff   a newer tab's `chat:view` → `ask:show` there and `ask:close` on the old tab
 *   answer    `ask:answer` → `question.resolve` at the fake Gateway → its answer → the ack
 *   crossInstance  as delivery, but the event enters instance A and the viewing tab sits on instance
 *             B (two product instances on one local Redis); against the bare relay through that Redis,
 *             single-instance delivery beside it
 *   memory    server heap per connected, viewing tab
 * Samples alternate product/relay (the order flips every pair) so both see the same noise; each
 * sample waits for the previous one to finish, with a short random pause between them.
 */

/** One round: n samples of the product path and n of its baseline (and of an extra one), interleaved. */
export type Round = {
  product: Summary;
  baseline: Summary;
  p99Ratio: number;
  /** Information: a second baseline sampled in the same round (handoff, answer: the matching relay). */
  info?: { baseline: Summary; p99Ratio: number };
  /** Delivery only: the same samples timed from the load client's request to the tab (see delivery). */
  roundTrip?: { product: Summary; baseline: Summary };
};
/** The median round (by ratio) and every round. */
export type Comparison = Round & { rounds: Round[] };
export type Level = Comparison & { tabs: number };
/** Every sample in run order (for --raw), by figure. */
export type RawSamples = Record<string, number[]>;
export type FakeResults = {
  levels: Level[];
  /** Baseline: the bare relay's delivery timed from the load client; info: the relay doing the same tab-to-tab hop. */
  handoff: Comparison;
  /** The same handoff at the largest level of idle tabs, when that is not the main level (issue 29.7). */
  handoffAtLargest: Level | null;
  /** Baseline: the bare relay forwarding the same answer; info: the bare relay's delivery timed from the load client. */
  answer: Comparison;
  /** Delivery from one instance to a tab on another (one Redis); baseline: the bare relay through that Redis in the same rounds; info: single-instance delivery. */
  crossInstance: Comparison;
  memory: { tabs: number; heapBeforeBytes: number; heapAfterBytes: number; heapPerTabBytes: number; externalPerTabBytes: number; rssPerTabBytes: number };
  ipc: Summary;
  /** Tabs the product and the relay each had besides the idle ones (the viewing tabs of the figures). */
  measurementTabs: number;
  raw: RawSamples;
};

export type FakeOptions = {
  server: ServerProcess;
  authSecret: string;
  samples: number;
  rounds: number;
  warmup: number;
  /** Idle-tab counts for the delivery figure, largest first; memory is taken at the first. */
  levels: number[];
  /** The level whose delivery figure is the headline one, and at which handoff and answer run. */
  mainLevel: number;
  progress(message: string): void;
};

/** The product and its bare relay, side by side (the cross-instance pair is measured on its own). */
type Side = Exclude<Target, "cross" | "cross-relay">;

const PAIRS = 20;
const ANSWER_TABS = 20;
const CONNECT_CONCURRENCY = 100;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A short random pause between samples, so they never phase-lock with periodic work (pings, timers). */
const pause = () => sleep(1 + Math.random() * 2);

export async function runFakePhases(options: FakeOptions): Promise<FakeResults> {
  const { server, progress } = options;
  const key = secretKey(options.authSecret);
  // Each tab's user opens its chat from the widget, with an embed token for that chat (the only kind
  // of non-owner token that may view a chat nobody has opened yet).
  const token = (userId: string, chat: string) => mintTabToken(key, { userId, chat, reply: TEST_REPLY, ttlSeconds: 4 * 3600 });
  /** The act token of each answering tab's chat, as the filter hands it to the page that sent the reply. */
  const answerActs: Record<string, string> = {};
  for (let k = 0; k < ANSWER_TABS; k++)
    answerActs[`answer-${k}`] = await mintActToken(key, { userId: `answerer-${k}`, chat: `answer-${k}`, reply: TEST_REPLY, ttlSeconds: 4 * 3600, now: Date.now() });
  const { productUrl, relayUrl } = await server.call<{ productUrl: string; relayUrl: string }>({ cmd: "start-fake" });
  const url = (target: Side) => (target === "product" ? productUrl : relayUrl);
  const tokenFor = async (target: Side, userId: string, chat: string) => (target === "product" ? token(userId, chat) : null);
  const targets: Side[] = ["product", "relay"];

  // --- measurement tabs ------------------------------------------------------------------------
  const live = { product: await openTab(productUrl, await token("viewer", "live"), "live"), relay: await openTab(relayUrl, null, "live") };
  type Pair = { chat: string; tabs: [BenchTab, BenchTab]; viewer: 0 | 1; askId: string };
  const pairs: Record<Side, Pair[]> = { product: [], relay: [] };
  const answerTabs: Record<Side, BenchTab[]> = { product: [], relay: [] };
  for (const target of targets) {
    for (let k = 0; k < PAIRS; k++) {
      const chat = `handoff-${k}`;
      const older = await openTab(url(target), await tokenFor(target, `pair-${k}`, chat), chat);
      const newer = await openTab(url(target), await tokenFor(target, `pair-${k}`, chat), chat);
      const shown = newer.next("ask:show");
      const { id } = await server.call<{ id: string }>({ cmd: "ask", target, chat });
      await shown;
      pairs[target].push({ chat, tabs: [older, newer], viewer: 1, askId: id });
    }
    for (let k = 0; k < ANSWER_TABS; k++) answerTabs[target].push(await openTab(url(target), await tokenFor(target, `answerer-${k}`, `answer-${k}`), `answer-${k}`));
  }
  const measurementTabs = 1 + 2 * PAIRS + ANSWER_TABS;

  // --- one sample of each figure -----------------------------------------------------------------
  /**
   * Delivery is timed two ways in every sample: from the fake Gateway's emit (the figure) and from
   * the load client's IPC request that makes it emit (a round trip from the load client and back,
   * shaped like the handoff and answer figures, which start and end here too).
   */
  const roundTrips: Record<Side, number[]> = { product: [], relay: [] };
  const deliverySample = async (target: Target, tab: BenchTab = live[target as Side]): Promise<{ oneWay: number; roundTrip: number }> => {
    const shown = tab.next("ask:show");
    const sentAt = nowMs();
    const sent = server.call<{ id: string; emittedAt: number }>({ cmd: "ask", target, chat: tab.chat });
    const arrival = await shown;
    const { id, emittedAt } = await sent;
    if (arrival.payload.id !== id) throw new Error(`${target}: ask:show carried ${arrival.payload.id}, expected ${id}`);
    const closed = target === "product" || target === "cross" ? tab.next("ask:close", (payload) => payload.askId === id) : null;
    await server.call({ cmd: "cancel", target, askId: id });
    await closed;
    return { oneWay: arrival.at - emittedAt, roundTrip: arrival.at - sentAt };
  };
  const delivery = async (target: Side): Promise<number> => {
    const { oneWay, roundTrip } = await deliverySample(target);
    roundTrips[target].push(roundTrip);
    return oneWay;
  };
  /** Cross-instance delivery: the event enters the first instance, the card reaches a tab on the second (Redis between). */
  let crossTab: BenchTab | null = null;
  const crossDelivery = async (): Promise<number> => (await deliverySample("cross", crossTab!)).oneWay;
  /** The bare relay through the same Redis (one PUBLISH between its event and its emit): the floor under crossDelivery. */
  let crossRelayTab: BenchTab | null = null;
  const crossRelayDelivery = async (): Promise<number> => (await deliverySample("cross-relay", crossRelayTab!)).oneWay;
  /** The bare relay timed like handoff and answer: from the load client and back to a tab here. */
  const relayRoundTrip = async (): Promise<number> => (await deliverySample("relay")).roundTrip;

  const pairTurn: Record<Side, number> = { product: 0, relay: 0 };
  const handoff = async (target: Side): Promise<number> => {
    const pair = pairs[target][pairTurn[target]++ % PAIRS]!;
    const older = pair.tabs[pair.viewer];
    const newer = pair.tabs[1 - pair.viewer]!;
    const shown = newer.next("ask:show", (payload) => payload.id === pair.askId);
    const closed = older.next("ask:close", (payload) => payload.askId === pair.askId && payload.reason === "handed-off");
    const t0 = nowMs();
    const ack = newer.send("chat:view", { chatId: pair.chat });
    const [show, close] = await Promise.all([shown, closed]);
    await ack;
    pair.viewer = pair.viewer === 0 ? 1 : 0;
    return Math.max(show.at, close.at) - t0;
  };

  const answerTurn: Record<Side, number> = { product: 0, relay: 0 };
  const answeredIds: Record<Side, string[]> = { product: [], relay: [] };
  const answer = async (target: Side): Promise<number> => {
    const tab = answerTabs[target][answerTurn[target]++ % ANSWER_TABS]!;
    const shown = tab.next("ask:show");
    const { id } = await server.call<{ id: string }>({ cmd: "ask", target, chat: tab.chat });
    await shown;
    // A person reads a card before answering it: the answer is timed from a quiet start, not while the
    // server is still storing the card it has just shown (work the bare relay does not have).
    await pause();
    const closed = target === "product" ? tab.next("ask:close", (payload) => payload.askId === id && payload.reason === "answered") : null;
    const t0 = nowMs();
    const answer: TabAnswer = { type: "questions", answers: { db: ["SQLite"] } };
    // A widget answers with its reply's act token (docs/SECURITY.md#a-stored-token-never-acts), which the server checks.
    await tab.send("ask:answer", target === "product" ? { askId: id, answer, act: answerActs[tab.chat]! } : { askId: id, answer });
    const ms = nowMs() - t0;
    await closed;
    answeredIds[target].push(id);
    return ms;
  };

  /** n samples of each sampler, interleaved, the order rotating every turn (a b, b a, ... or a b c, b c a, ...). */
  const interleave = async (n: number, samplers: (() => Promise<number>)[]): Promise<number[][]> => {
    const out = samplers.map((): number[] => []);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < samplers.length; k++) {
        const j = (i + k) % samplers.length;
        out[j]!.push(await samplers[j]!());
        await pause();
      }
    }
    return out;
  };
  const repeat = async (n: number, sample: () => Promise<number>): Promise<number[]> => {
    const values: number[] = [];
    for (let i = 0; i < n; i++) {
      values.push(await sample());
      await pause();
    }
    return values;
  };

  // --- warm-up: every path compiled before anything counts ----------------------------------------
  progress(`warm-up (${options.warmup} samples of each path)`);
  await interleave(options.warmup, [() => delivery("product"), () => delivery("relay")]);
  await interleave(options.warmup, [() => handoff("product"), () => handoff("relay")]);
  await interleave(options.warmup, [() => answer("product"), () => answer("relay")]);
  const ipcSamples = await repeat(200, async () => {
    const t0 = nowMs();
    await server.call({ cmd: "ping" });
    return nowMs() - t0;
  });

  // --- memory: heap with only the measurement tabs, then with N idle viewing tabs more ------------
  const maxTabs = options.levels[0]!;
  const heapBefore = await server.call<Heap>({ cmd: "heap" });
  progress(`connecting ${maxTabs} idle tabs to the product server`);
  const idle: Record<Side, Socket[]> = { product: [], relay: [] };
  const connectIdle = async (target: Side, count: number) => {
    const tokens = target === "product" ? await Promise.all(Array.from({ length: count }, (_, i) => token(`user-${i}`, `idle-${i}`))) : null;
    const started = nowMs();
    idle[target] = await openMany(0, count, CONNECT_CONCURRENCY, (i) => openIdleTab(url(target), tokens?.[i] ?? null, `idle-${i}`));
    progress(`  ${count} ${target} tabs connected and viewing in ${round((nowMs() - started) / 1000, 1)} s`);
  };
  await connectIdle("product", maxTabs);
  await settle(server, { productViewers: measurementTabs + maxTabs, relaySockets: measurementTabs });
  const heapAfter = await server.call<Heap>({ cmd: "heap" });
  const memory = {
    tabs: maxTabs,
    heapBeforeBytes: heapBefore.heapUsed,
    heapAfterBytes: heapAfter.heapUsed,
    heapPerTabBytes: Math.round((heapAfter.heapUsed - heapBefore.heapUsed) / maxTabs),
    externalPerTabBytes: Math.round((heapAfter.external - heapBefore.external) / maxTabs),
    rssPerTabBytes: Math.round((heapAfter.rss - heapBefore.rss) / maxTabs),
  };
  progress(`connecting ${maxTabs} idle tabs to the bare relay`);
  await connectIdle("relay", maxTabs);

  const raw: RawSamples = {};
  /**
   * `rounds` rounds of n samples of each side, interleaved; every round is summarised on its own and
   * the round with the median ratio is the figure (with an even count, the worse of the middle two),
   * so one burst of load from elsewhere on the machine moves one round, not the result.
   */
  const compare = async (name: string, n: number, product: () => Promise<number>, baseline: () => Promise<number>, info?: () => Promise<number>): Promise<Comparison> => {
    const rounds: Round[] = [];
    for (let r = 0; r < options.rounds; r++) {
      roundTrips.product = [];
      roundTrips.relay = [];
      const [first = [], second = [], third = []] = await interleave(n, info ? [product, baseline, info] : [product, baseline]);
      const round_: Round = { product: summarize(first), baseline: summarize(second), p99Ratio: 0 };
      round_.p99Ratio = round(round_.product.p99Ms / round_.baseline.p99Ms, 2);
      if (info) {
        const summary = summarize(third);
        round_.info = { baseline: summary, p99Ratio: round(round_.product.p99Ms / summary.p99Ms, 2) };
        raw[`${name}#${r}:info`] = third;
      }
      if (roundTrips.product.length === n && roundTrips.relay.length === n) {
        round_.roundTrip = { product: summarize(roundTrips.product), baseline: summarize(roundTrips.relay) };
      }
      rounds.push(round_);
      raw[`${name}#${r}:product`] = first;
      raw[`${name}#${r}:baseline`] = second;
    }
    const byRatio = [...rounds].sort((x, y) => x.p99Ratio - y.p99Ratio);
    return { ...byRatio[Math.floor(byRatio.length / 2)]!, rounds };
  };

  // --- delivery at every level, largest first (idle tabs are closed between levels) ---------------
  const levels: Level[] = [];
  let handoffResult: Comparison | null = null;
  let handoffAtLargest: Level | null = null;
  const largest = Math.max(...options.levels);
  let answerResult: Comparison | null = null;
  let crossResult: Comparison | null = null;
  for (const level of options.levels) {
    for (const target of targets) {
      const extra = idle[target].splice(level);
      for (const socket of extra) socket.close();
    }
    await settle(server, { productViewers: measurementTabs + level, relaySockets: measurementTabs + level });
    await server.call<Heap>({ cmd: "heap" }); // start each level from a collected heap, not mid-way to a GC
    progress(`delivery with ${level} idle tabs on each server (${options.rounds} rounds of ${options.samples} asks each)`);
    await interleave(Math.min(50, options.warmup), [() => delivery("product"), () => delivery("relay")]);
    levels.push({ tabs: level, ...(await compare(`delivery@${level}`, options.samples, () => delivery("product"), () => delivery("relay"))) });
    if (level === largest && level !== options.mainLevel) {
      progress(`handoff with ${level} idle tabs (${options.rounds} rounds of ${options.samples} each)`);
      handoffAtLargest = { tabs: level, ...(await compare(`handoff@${level}`, options.samples, () => handoff("product"), relayRoundTrip, () => handoff("relay"))) };
    }
    if (level === options.mainLevel) {
      progress(`handoff and answer with ${level} idle tabs (${options.rounds} rounds of ${options.samples} each)`);
      handoffResult = await compare(`handoff@${level}`, options.samples, () => handoff("product"), relayRoundTrip, () => handoff("relay"));
      answerResult = await compare(`answer@${level}`, options.samples, () => answer("product"), () => answer("relay"), relayRoundTrip);
      progress(`cross-instance delivery: two instances on one Redis, the tab on the second (${options.rounds} rounds of ${options.samples}, against the bare relay through that Redis)`);
      const { viewerUrl, relayUrl } = await server.call<{ viewerUrl: string; relayUrl: string }>({ cmd: "start-cross" });
      crossTab = await openTab(viewerUrl, await token("viewer", "cross-live"), "cross-live");
      crossRelayTab = await openTab(relayUrl, null, "cross-relay-live");
      await interleave(Math.min(50, options.warmup), [crossDelivery, () => delivery("product"), crossRelayDelivery]);
      // The target is the relay through the same Redis (crossing it is its floor); single-instance delivery beside it.
      crossResult = await compare(`crossInstance@${level}`, options.samples, crossDelivery, crossRelayDelivery, () => delivery("product"));
    }
  }
  if (!handoffResult || !answerResult || !crossResult) throw new Error(`the main level ${options.mainLevel} is not one of the levels ${options.levels.join(", ")}`);

  // --- honesty checks ----------------------------------------------------------------------------
  for (const target of targets) {
    const answered = await server.call<number>({ cmd: "answered", target, ids: answeredIds[target] });
    if (answered !== answeredIds[target].length) {
      throw new Error(`${target}: the fake Gateway holds ${answered} of ${answeredIds[target].length} answered questions: answers were lost`);
    }
  }
  if (strays.shows > 0) throw new Error(`${strays.shows} ask:show reached idle tabs that view other chats`);
  if (strays.disconnects.length > 0) throw new Error(`${strays.disconnects.length} idle tabs were disconnected: ${strays.disconnects.slice(0, 3).join("; ")}`);

  for (const target of targets) for (const socket of idle[target]) socket.close();
  crossTab?.close();
  crossRelayTab?.close();
  for (const tab of [live.product, live.relay, ...pairs.product.flatMap((pair) => pair.tabs), ...pairs.relay.flatMap((pair) => pair.tabs), ...answerTabs.product, ...answerTabs.relay]) tab.close();
  return { levels, handoff: handoffResult, handoffAtLargest, answer: answerResult, crossInstance: crossResult, memory, ipc: summarize(ipcSamples), measurementTabs, raw };
}

/** Waits until both servers have seen every (dis)connect the load client made. */
async function settle(server: ServerProcess, expected: Counts): Promise<void> {
  const deadline = Date.now() + 60_000;
  let counts: Counts = { productViewers: -1, relaySockets: -1 };
  while (Date.now() < deadline) {
    counts = await server.call<Counts>({ cmd: "counts" });
    const productOk = counts.productViewers === -1 || counts.productViewers === expected.productViewers;
    if (productOk && counts.relaySockets === expected.relaySockets) {
      if (counts.productViewers === -1) await sleep(2_000); // the broker's viewers were not readable: give it time
      return;
    }
    await sleep(100);
  }
  throw new Error(`tabs did not settle: the servers have ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
}
