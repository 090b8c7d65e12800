import { createHash } from "node:crypto";
import { SECRET_NOT_RECEIVED_MESSAGE } from "../../lib/answers.ts";
import type { Ask } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { endedAsText, RUN_STOPPED } from "../../lib/outcomes.ts";
import { PromptScanner } from "../../lib/prompts/index.ts";
import type { CloseReason } from "../../lib/protocol.ts";
import { type ChatKeyPattern, textPromptContinuation } from "../../lib/session-key.ts";
import { askFromTextPrompt } from "../../lib/sources/text-prompt.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { Subscribable } from "../events.ts";

/**
 * Watches assistant text of the agent's sessions for `OpenClaw needs input:` prompts (docs/ARCHITECTURE.md#text-prompts):
 * one PromptScanner per run, fed cumulative snapshots (or deltas when a frame has none); when the
 * run's reply ends with a prompt, it becomes a text-prompt Ask on the session's chat.
 */

/** What a run of the agent's sessions did, as the Gateway adapter tells it. */
export type RunUpdate = {
  sessionKey: string;
  runId: string;
  /** A run this service started by answering a prompt, not the user writing to the session. */
  ownRun: boolean;
} & (
  | { state: "started" }
  /** `snapshot`: the whole reply so far (it may replace what came before); otherwise the next piece. */
  | { state: "text"; text: string; snapshot: boolean }
  /** The reply is complete; `text` is its final snapshot when the frame carried one. */
  | { state: "final"; text: string | null }
  | { state: "stopped" }
);

export type RunEvents = { "run:update": [update: RunUpdate] };

/** What the watcher needs from the Gateway: the runs, and a way to tell a session something. */
export interface AgentRuns extends Subscribable<RunEvents> {
  /** Tells the session of a text prompt something without asking in chat (at most once per ask). */
  notify: (ask: Ask, message: string) => Promise<void>;
}

// Runs that never end (a dropped final) must not pile up.
const MAX_TRACKED_RUNS = 1000;

type RunState = { sessionKey: string; scanner: PromptScanner };

export type ChatWatcherOptions = {
  broker: AskBroker;
  runs: AgentRuns;
  chatKeys: ChatKeyPattern;
  agentId: string;
  clock: Clock;
  timeoutMs: number;
  log: (message: string) => void;
};

/** Stable across replays of the same reply, so a prompt seen twice is one ask. */
export function textPromptId(sessionKey: string, runId: string, prompt: string): string {
  return `prompt:${createHash("sha256").update(`${sessionKey}\n${runId}\n${prompt}`).digest("hex").slice(0, 32)}`;
}

export class ChatWatcher {
  private readonly runs = new Map<string, RunState>();
  private readonly options: ChatWatcherOptions;
  private readonly unsubscribe: (() => void)[];

  constructor(options: ChatWatcherOptions) {
    this.options = options;
    this.unsubscribe = [
      options.runs.on("run:update", (update) =>
        this.settle(this.handle(update), `watching run ${update.runId}`),
      ),
      options.broker.on("ask:ended", (ask, reason) =>
        this.settle(this.endedUnanswered(ask, reason), `notifying about ask ${ask.id}`),
      ),
    ];
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  /** Scans synchronously, in arrival order; only what it leads to (ending or asking) waits. */
  private handle(update: RunUpdate): Promise<void> {
    let run = this.runs.get(update.runId);
    let closing = Promise.resolve();
    if (!run) {
      run = this.startRun(update);
      // A run this service did not start means the user wrote to the session instead of answering.
      if (!update.ownRun) closing = this.closeOpenPrompts(update.sessionKey, update.runId);
    }
    switch (update.state) {
      case "started":
        return closing;
      case "text":
        if (update.snapshot) run.scanner.pushSnapshot(update.text);
        else run.scanner.push(update.text);
        return closing;
      case "final": {
        if (update.text !== null) run.scanner.pushSnapshot(update.text);
        this.runs.delete(update.runId);
        const { prompt } = run.scanner.end();
        const sessionKey = run.sessionKey;
        return prompt ? closing.then(() => this.ask(prompt, sessionKey, update.runId)) : closing;
      }
      case "stopped":
        this.runs.delete(update.runId);
        return closing.then(() => this.closeStoppedRunApprovals(update.runId));
    }
  }

  /**
   * A text-prompt secret that timed out or had no tab: the agent is told once, without asking in chat.
   * (When the user wrote instead, the agent reads that message; a cancel already told it.)
   */
  private async endedUnanswered(ask: Ask, reason: CloseReason): Promise<void> {
    if (ask.source !== "text-prompt" || ask.kind !== "secret" || reason !== "ended-as-text") return;
    // A `/v1` reply's session is nobody's once its reply ended: nothing sent there reaches the agent.
    if (ask.textPrompt?.continues === "chat") return;
    await this.options.runs.notify(ask, SECRET_NOT_RECEIVED_MESSAGE);
  }

  private settle(work: Promise<void>, what: string): void {
    work.catch((error: unknown) => this.options.log(`${what} failed: ${errorMessage(error)}`));
  }

  private startRun(update: RunUpdate): RunState {
    if (this.runs.size >= MAX_TRACKED_RUNS) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
    const run = { sessionKey: update.sessionKey, scanner: new PromptScanner() };
    this.runs.set(update.runId, run);
    return run;
  }

  /** A stopped run's tool calls will never run: their approvals are moot. */
  private async closeStoppedRunApprovals(runId: string): Promise<void> {
    const { broker } = this.options;
    await Promise.all(
      broker.pendingAsks
        .filter((ask) => ask.kind === "approval" && ask.runId === runId)
        .map((ask) => broker.end(ask.id, RUN_STOPPED)),
    );
  }

  private async closeOpenPrompts(sessionKey: string, runId: string): Promise<void> {
    const { broker } = this.options;
    const open = broker.pendingAsks.filter(
      (ask) => ask.source === "text-prompt" && ask.sessionKey === sessionKey && ask.runId !== runId,
    );
    await Promise.all(
      open.map((ask) => broker.end(ask.id, endedAsText(ask, "answered-elsewhere"))),
    );
  }

  private async ask(prompt: string, sessionKey: string, runId: string): Promise<void> {
    const { broker, chatKeys, agentId, clock, timeoutMs } = this.options;
    const id = textPromptId(sessionKey, runId, prompt);
    const chat = chatKeys.chatOf(sessionKey);
    const continues = textPromptContinuation(sessionKey, runId);
    await broker.receive(
      askFromTextPrompt(prompt, {
        id,
        sessionKey,
        runId,
        agentId,
        chatId: chat?.chatId ?? null,
        replyId: chat?.replyId ?? null,
        continues,
        now: clock.now(),
        timeoutMs,
      }),
    );
  }
}
