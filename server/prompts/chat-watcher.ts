import type { ChatEvent } from "@openclaw/gateway-protocol";
import type { Ask } from "../../lib/ask.ts";
import { SECRET_NOT_RECEIVED_MESSAGE, isOwnRun, textPromptNoticeKey } from "../../lib/answers.ts";
import type { Clock } from "../../lib/clock.ts";
import type { CloseReason } from "../../lib/protocol.ts";
import { PromptScanner } from "../../lib/prompts/index.ts";
import type { ChatKeyPattern } from "../../lib/session-key.ts";
import { askFromTextPrompt } from "../../lib/sources/text-prompt.ts";
import { endedAsTextSummary, type AskBroker, type AskResolver } from "../broker/broker.ts";

/**
 * Watches assistant text of the agent's sessions for `OpenClaw needs input:` prompts (DESIGN §7):
 * one PromptScanner per run, fed the Gateway's cumulative snapshots (or deltas when a frame has none);
 * when the run's reply ends with a prompt, it becomes a text-prompt Ask on the session's chat.
 */

// Runs that never end (a dropped final) must not pile up.
const MAX_TRACKED_RUNS = 1000;

type RunState = { sessionKey: string; scanner: PromptScanner };

export type ChatWatcherOptions = {
  broker: AskBroker;
  resolver: AskResolver;
  chatKeys: ChatKeyPattern;
  agentId: string;
  clock: Clock;
  timeoutMs: number;
  log(message: string): void;
};

export class ChatWatcher {
  private readonly runs = new Map<string, RunState>();
  private readonly options: ChatWatcherOptions;

  constructor(options: ChatWatcherOptions) {
    this.options = options;
  }

  handle(event: ChatEvent): void {
    let run = this.runs.get(event.runId);
    if (!run) {
      run = this.startRun(event);
    }
    switch (event.state) {
      case "status":
        return;
      case "delta": {
        const text = messageText(event.message);
        // A replacing frame's deltaText is the whole new reply, not a suffix.
        if (text !== null) run.scanner.pushSnapshot(text);
        else if (event.replace) run.scanner.pushSnapshot(event.deltaText);
        else run.scanner.push(event.deltaText);
        return;
      }
      case "final": {
        const text = messageText(event.message);
        if (text !== null) run.scanner.pushSnapshot(text);
        this.runs.delete(event.runId);
        const { prompt } = run.scanner.end();
        if (prompt) this.ask(prompt, run.sessionKey, event.runId);
        return;
      }
      case "aborted":
      case "error":
        this.runs.delete(event.runId);
        this.closeStoppedRunApprovals(event.runId);
        return;
    }
  }

  /**
   * A text-prompt secret that timed out or had no tab: the agent is told once, without asking in chat.
   * (When the user wrote instead, the agent reads that message; a cancel already told it.)
   */
  endedUnanswered(ask: Ask, reason: CloseReason): void {
    if (ask.kind !== "secret" || reason !== "ended-as-text") return;
    const call = { method: "chat.send" as const, params: { sessionKey: ask.sessionKey, message: SECRET_NOT_RECEIVED_MESSAGE, idempotencyKey: textPromptNoticeKey(ask.id) } };
    this.options.resolver.execute(call).catch((error: unknown) => {
      this.options.log(`could not tell the agent a secret was not received: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  private startRun(event: ChatEvent): RunState {
    // A run this service did not start means the user wrote to the session instead of answering.
    if (!isOwnRun(event.runId)) this.closeOpenPrompts(event.sessionKey, event.runId);
    if (this.runs.size >= MAX_TRACKED_RUNS) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
    const run = { sessionKey: event.sessionKey, scanner: new PromptScanner() };
    this.runs.set(event.runId, run);
    return run;
  }

  /** A stopped run's tool calls will never run: their approvals are moot. */
  private closeStoppedRunApprovals(runId: string): void {
    for (const ask of this.options.broker.pendingAsks) {
      if (ask.kind !== "approval" || ask.runId !== runId) continue;
      this.options.broker.end(ask.id, { status: "cancelled", summary: "The run stopped", reason: "answered-elsewhere" });
    }
  }

  private closeOpenPrompts(sessionKey: string, runId: string): void {
    for (const ask of this.options.broker.pendingAsks) {
      if (ask.source !== "text-prompt" || ask.sessionKey !== sessionKey || ask.runId === runId) continue;
      this.options.broker.end(ask.id, { status: "ended-as-text", summary: endedAsTextSummary(ask), reason: "answered-elsewhere" });
    }
  }

  private ask(prompt: string, sessionKey: string, runId: string): void {
    const { broker, chatKeys, agentId, clock, timeoutMs } = this.options;
    const ask = askFromTextPrompt(prompt, { sessionKey, runId, agentId, chatId: chatKeys.chatIdOf(sessionKey), now: clock.now(), timeoutMs });
    void broker.receive(ask);
  }
}

/** The Gateway's `message` is the cumulative reply: `{content: [{type: "text", text}]}` or a string. */
export function messageText(message: unknown): string | null {
  if (typeof message === "string") return message;
  if (!message || typeof message !== "object") return null;
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.filter((part): part is { type: "text"; text: string } => part?.type === "text" && typeof part.text === "string");
  return texts.length > 0 ? texts.map((part) => part.text).join("") : null;
}
