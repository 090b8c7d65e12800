import { GatewayClient, type GatewayClientOptions } from "@openclaw/gateway-client";
import type { ChatEvent, QuestionRecord, QuestionResolvedEvent } from "@openclaw/gateway-protocol";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";
import { type Clock, systemClock, type TimerHandle } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import type { GatewayStatus } from "../../lib/protocol.ts";
import type { ExecApprovalRecord, PluginApprovalRecord } from "../../lib/sources/gateway.ts";
import type { Arrival } from "../broker/ports.ts";
import type { GatewayCall } from "./calls.ts";
import {
  type ApprovalResolved,
  type Check,
  checkApprovalList,
  checkApprovalResolved,
  checkChatEvent,
  checkExecApproval,
  checkPluginApproval,
  checkQuestionRecord,
  checkQuestionResolved,
} from "./records.ts";

/**
 * GatewayLink: the connection to the OpenClaw Gateway. The official client owns the connection
 * (challenge auth, correlation, timeouts, reconnect backoff); this class validates what arrives, hands
 * it to a GatewayHandler, backfills after every (re)connect, and carries calls out.
 */

export class GatewayCallError extends Error {
  /** The Gateway's `details.reason` (QUESTION_ALREADY_TERMINAL, ...), when it gave one. */
  readonly reason: string | undefined;
  constructor(message: string, reason?: string) {
    super(message);
    this.reason = reason;
  }
}

/** `announced`: a `*.requested` event (new at the Gateway); `listed`: an entry of a backfill's list. */
export interface GatewayHandler {
  question(record: QuestionRecord, arrival: Arrival): void;
  questionResolved(event: QuestionResolvedEvent): void;
  pluginApproval(event: PluginApprovalRecord, arrival: Arrival): void;
  execApproval(event: ExecApprovalRecord, arrival: Arrival): void;
  approvalResolved(event: ApprovalResolved): void;
  chat(event: ChatEvent): void;
  /**
   * A full backfill finished: these are every pending id the Gateway still knows, and every id that
   * arrived by event after the list calls went out (the lists may predate those).
   */
  backfilled(live: LiveIds): void;
  status(status: GatewayStatus): void;
}

export type LiveIds = {
  questions: Set<string>;
  pluginApprovals: Set<string>;
  execApprovals: Set<string>;
  /**
   * When the Gateway that answered the lists started, epoch ms on this server's clock (its hello's
   * uptime): an ask it does not list that was raised before then was raised by a Gateway process
   * that is gone, and its run with it.
   */
  gatewayStartedAt?: number;
};

// Scopes and capabilities that make this client both a question answerer and an approval route.
export const OPERATOR_SCOPES = [
  "operator.read",
  "operator.write",
  "operator.approvals",
  "operator.questions",
  "operator.admin",
];
export const OPERATOR_CAPS = ["plugin-approvals", "exec-approvals"];

export type GatewayLinkOptions = {
  url: string;
  token?: string;
  handler: GatewayHandler;
  log: (message: string) => void;
  /** Status times and the backfill retry timer. */
  clock?: Clock;
  /** For tests: the client library's own knobs (request timeout and the like). */
  clientOptions?: Partial<GatewayClientOptions>;
};

// A failed backfill (a list call refused or timed out) is tried again after 1 s, 2 s, 4 s … up to a minute.
const FIRST_BACKFILL_RETRY_MS = 1_000;
const MAX_BACKFILL_RETRY_MS = 60_000;

export class GatewayLink {
  private readonly client: GatewayClient;
  private readonly options: GatewayLinkOptions;
  private readonly clock: Clock;
  private current: GatewayStatus;
  private backfillRun = 0;
  private backfillRetry: TimerHandle | null = null;
  private backfillRetryMs = FIRST_BACKFILL_RETRY_MS;
  private stopped = false;
  /** The last event seq on this connection; the Gateway numbers events from 1 on every connection. */
  private lastSeq = 0;
  /**
   * The live ids of the backfill whose list calls are out. Asks that arrive by event meanwhile join it:
   * the Gateway may have answered a list before it created them, and their absence says nothing.
   */
  private arrivingDuringBackfill: LiveIds | null = null;
  /** When the connected Gateway started (LiveIds.gatewayStartedAt), from its hello. */
  private gatewayStartedAt: number | undefined;

  constructor(options: GatewayLinkOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock();
    this.current = { connected: false, since: this.now(), error: "Gateway unreachable, retrying" };
    this.client = new GatewayClient({
      url: options.url,
      token: options.token,
      minProtocol: PROTOCOL_VERSION,
      maxProtocol: PROTOCOL_VERSION,
      role: "operator",
      scopes: OPERATOR_SCOPES,
      caps: OPERATOR_CAPS,
      clientDisplayName: "OpenClaw Asks",
      onHelloOk: (hello) => {
        this.lastSeq = 0;
        const uptimeMs = hello.snapshot?.uptimeMs;
        this.gatewayStartedAt =
          typeof uptimeMs === "number" && uptimeMs >= 0 ? this.now() - uptimeMs : undefined;
        this.backfillRetryMs = FIRST_BACKFILL_RETRY_MS;
        this.setStatus({ connected: true, since: this.now() });
        this.resync();
      },
      onEvent: (frame) => {
        // The client reports gaps between events it saw; one before the first event is ours to catch.
        if (this.lastSeq === 0 && typeof frame.seq === "number" && frame.seq > 1) {
          this.options.log(`gateway event gap (expected seq 1, got ${frame.seq}): resyncing`);
          this.resync();
        }
        if (typeof frame.seq === "number") this.lastSeq = frame.seq;
        this.dispatch(frame.event, frame.payload);
      },
      onGap: ({ expected, received }) => {
        this.options.log(
          `gateway event gap (expected seq ${expected}, got ${received}): resyncing`,
        );
        this.resync();
      },
      onConnectError: (error) =>
        this.disconnected(`Gateway unreachable, retrying: ${error.message}`),
      onClose: (code, reason) =>
        this.disconnected(
          `Gateway unreachable, retrying (closed ${code}${reason ? `: ${reason}` : ""})`,
        ),
      ...options.clientOptions,
    });
  }

  get status(): GatewayStatus {
    return this.current;
  }

  start(): void {
    this.client.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelBackfillRetry();
    await this.client.stopAndWait({ timeoutMs: 2000 }).catch(() => this.client.stop());
  }

  async execute(call: GatewayCall): Promise<unknown> {
    return this.request(call.method, call.params);
  }

  async request<T = unknown>(method: string, params: unknown): Promise<T> {
    if (!this.current.connected) throw new GatewayCallError("the Gateway is not connected");
    try {
      return await this.client.request<T>(method, params);
    } catch (error) {
      const details = (error as { details?: { reason?: unknown } }).details;
      const reason = typeof details?.reason === "string" ? details.reason : undefined;
      throw new GatewayCallError(errorMessage(error), reason);
    }
  }

  private now(): number {
    return this.clock.now();
  }

  private disconnected(error: string): void {
    // The next connection backfills from scratch.
    this.cancelBackfillRetry();
    if (this.current.connected || this.current.error !== error)
      this.setStatus({
        connected: false,
        since: this.current.connected ? this.now() : this.current.since,
        error,
      });
  }

  private setStatus(status: GatewayStatus): void {
    this.current = status;
    this.options.handler.status(status);
  }

  private dispatch(event: string, payload: unknown): void {
    const { handler, log } = this.options;
    const deliver = <T>(check: Check<T>, to: (value: T) => void): void => {
      const checked = check(payload);
      if (checked.ok) to(checked.value);
      else log(`skipped malformed ${event} event: ${checked.error}`);
    };
    switch (event) {
      case "question.requested":
        return deliver(checkQuestionRecord, (record) => {
          this.arrivingDuringBackfill?.questions.add(record.id);
          handler.question(record, "announced");
        });
      case "question.resolved":
        return deliver(checkQuestionResolved, (resolved) => handler.questionResolved(resolved));
      case "plugin.approval.requested":
        return deliver(checkPluginApproval, (request) => {
          this.arrivingDuringBackfill?.pluginApprovals.add(request.id);
          handler.pluginApproval(request, "announced");
        });
      case "exec.approval.requested":
        return deliver(checkExecApproval, (request) => {
          this.arrivingDuringBackfill?.execApprovals.add(request.id);
          handler.execApproval(request, "announced");
        });
      case "plugin.approval.resolved":
      case "exec.approval.resolved":
        return deliver(checkApprovalResolved, (resolved) => handler.approvalResolved(resolved));
      case "chat":
        return deliver(checkChatEvent, (chat) => handler.chat(chat));
    }
  }

  /** Starts a backfill; its failures are logged and retried inside, so nothing escapes here. */
  private resync(): void {
    this.backfill().catch((error: unknown) =>
      this.options.log(`gateway backfill failed: ${errorMessage(error)}`),
    );
  }

  /**
   * The Gateway keeps questions in memory only and drops events for slow consumers: after every
   * (re)connect or gap, list what is pending and let the handler reconcile by id.
   */
  private async backfill(): Promise<void> {
    const run = ++this.backfillRun;
    this.cancelBackfillRetry();
    const { handler, log } = this.options;
    // Started before the list calls go out, so no event between sending and answering escapes it.
    const live: LiveIds = {
      questions: new Set(),
      pluginApprovals: new Set(),
      execApprovals: new Set(),
      ...(this.gatewayStartedAt === undefined ? {} : { gatewayStartedAt: this.gatewayStartedAt }),
    };
    this.arrivingDuringBackfill = live;
    try {
      const [questions, plugin, exec] = await Promise.all([
        this.request("question.list", {}),
        this.request("plugin.approval.list", {}),
        this.request("exec.approval.list", {}),
      ]);
      if (run !== this.backfillRun) return;
      const entries = (questions as { questions?: unknown } | null)?.questions;
      if (!Array.isArray(entries))
        throw new Error("question.list did not answer {questions: [...]}");
      for (const entry of entries) {
        const checked = checkQuestionRecord(entry);
        if (!checked.ok) {
          // Still live at the Gateway: its ask here must not expire because this copy is unreadable.
          const id = (entry as { id?: unknown } | null)?.id;
          if (typeof id === "string") live.questions.add(id);
          log(`skipped malformed question in backfill: ${checked.error}`);
          continue;
        }
        if (checked.value.status !== "pending") continue;
        live.questions.add(checked.value.id);
        handler.question(checked.value, "listed");
      }
      this.collectApprovals(plugin, checkPluginApproval, live.pluginApprovals, (event) =>
        handler.pluginApproval(event, "listed"),
      );
      this.collectApprovals(exec, checkExecApproval, live.execApprovals, (event) =>
        handler.execApproval(event, "listed"),
      );
      handler.backfilled(live);
      if (run === this.backfillRun) this.backfillRetryMs = FIRST_BACKFILL_RETRY_MS;
    } catch (error) {
      const message = errorMessage(error);
      // A newer backfill or a reconnect takes over; otherwise restored asks would stay hidden until one.
      if (run !== this.backfillRun || !this.current.connected || this.stopped)
        return log(`gateway backfill failed: ${message}`);
      const delay = this.backfillRetryMs;
      this.backfillRetryMs = Math.min(delay * 2, MAX_BACKFILL_RETRY_MS);
      log(`gateway backfill failed: ${message}; retrying in ${delay / 1000} s`);
      this.backfillRetry = this.clock.setTimer(() => {
        this.backfillRetry = null;
        this.resync();
      }, delay);
    } finally {
      if (this.arrivingDuringBackfill === live) this.arrivingDuringBackfill = null;
    }
  }

  private cancelBackfillRetry(): void {
    if (this.backfillRetry) this.clock.clearTimer(this.backfillRetry);
    this.backfillRetry = null;
  }

  private collectApprovals<T extends { id: string }>(
    entries: unknown,
    check: Check<T>,
    ids: Set<string>,
    deliver: (event: T) => void,
  ): void {
    const list = checkApprovalList(entries);
    if (!list.ok) throw new Error(`approval list is not an array: ${list.error}`);
    for (const entry of list.value) {
      const checked = check(entry);
      if (!checked.ok) {
        this.options.log(`skipped malformed approval in backfill: ${checked.error}`);
        continue;
      }
      ids.add(checked.value.id);
      deliver(checked.value);
    }
  }
}
