import type { GatewayClientOptions } from "@openclaw/gateway-client";
import type { QuestionRecord } from "@openclaw/gateway-protocol";
import type { AskReply } from "../../lib/answers.ts";
import type { Ask } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import type { GatewayStatus } from "../../lib/protocol.ts";
import type { ChatKeyPattern } from "../../lib/session-key.ts";
import { AskAlreadyEnded, type AskChannel, type AskChannelEvents } from "../broker/ports.ts";
import type { Config } from "../config.ts";
import { Emitter } from "../events.ts";
import type { AgentRuns, RunEvents } from "../prompts/chat-watcher.ts";
import {
  ALREADY_ENDED_REASONS,
  type GatewayCall,
  noticeCall,
  refusalCall,
  replyCall,
} from "./calls.ts";
import { createIntake } from "./intake.ts";
import { GatewayCallError, GatewayLink } from "./link.ts";
import { checkQuestionGetResult } from "./records.ts";

/**
 * The Gateway adapter: the one module that knows the OpenClaw Gateway's methods, records and error
 * reasons. In: asks arriving and ending, the lists after a (re)connect, the agent's runs, the
 * connection status, all as domain events. Out: replies, refusals and notices as method calls.
 */

export type GatewayEvents = AskChannelEvents &
  RunEvents & { "gateway:status": [status: GatewayStatus] };

export type GatewayOptions = {
  url: string;
  token?: string;
  /** The only agent whose sessions are touched. */
  agentId: string;
  chatKeys: ChatKeyPattern;
  clock: Clock;
  log: (message: string) => void;
  /** For tests: the client library's own knobs (request timeout and the like). */
  clientOptions?: Partial<GatewayClientOptions>;
};

/** The adapter for the configured Gateway and agent. */
export function gatewayFromConfig(
  config: Config,
  parts: { clock: Clock; log(message: string): void },
): Gateway {
  return new Gateway({
    url: config.OPENCLAW_GATEWAY_URL,
    token: config.OPENCLAW_GATEWAY_TOKEN,
    agentId: config.AGENT_ID,
    chatKeys: config.chatKeys,
    ...parts,
  });
}

export class Gateway extends Emitter<GatewayEvents> implements AskChannel, AgentRuns {
  private readonly link: GatewayLink;

  constructor(options: GatewayOptions) {
    super();
    this.link = new GatewayLink({
      url: options.url,
      token: options.token,
      log: options.log,
      clock: options.clock,
      clientOptions: options.clientOptions,
      handler: createIntake({
        agentId: options.agentId,
        chatKeys: options.chatKeys,
        sink: {
          arrived: (ask, arrival) => this.emit("ask:arrived", ask, arrival),
          ended: (askId, outcome) => this.emit("ask:ended", askId, outcome),
          listed: (listing) => this.emit("asks:listed", listing),
          run: (update) => this.emit("run:update", update),
          status: (status) => {
            options.log(
              status.connected
                ? `gateway connected: ${options.url}`
                : `gateway: ${status.error ?? "disconnected"}`,
            );
            this.emit("gateway:status", status);
          },
        },
        getQuestion: (id) => this.getQuestion(id),
      }),
    });
  }

  get status(): GatewayStatus {
    return this.link.status;
  }

  start(): void {
    this.link.start();
  }

  stop(): Promise<void> {
    return this.link.stop();
  }

  async deliver(ask: Ask, reply: AskReply): Promise<void> {
    await this.call(replyCall(ask, reply));
  }

  async refuse(ask: Ask): Promise<void> {
    const call = refusalCall(ask);
    if (call) await this.call(call);
  }

  async notify(ask: Ask, message: string): Promise<void> {
    await this.call(noticeCall(ask, message));
  }

  private async call(call: GatewayCall): Promise<void> {
    try {
      await this.link.execute(call);
    } catch (error) {
      if (
        error instanceof GatewayCallError &&
        error.reason !== undefined &&
        ALREADY_ENDED_REASONS.has(error.reason)
      )
        throw new AskAlreadyEnded(error.message);
      throw error;
    }
  }

  /** How the Gateway sees a question now; null when it no longer has it. */
  private async getQuestion(id: string): Promise<QuestionRecord | null> {
    const checked = checkQuestionGetResult(
      await this.link.request("question.get", { id }).catch(() => null),
    );
    return checked.ok ? checked.value.question : null;
  }
}
