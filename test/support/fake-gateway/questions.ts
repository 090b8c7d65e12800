// The fake Gateway's questions (ask_user and secret requests): `question.request`, `.list`,
// `.get`, `.resolve` and `.waitAnswer`, their expiry, and the `question.requested` /
// `question.resolved` broadcasts, with the real Gateway's checks and messages.
import { randomUUID } from "node:crypto";
import {
  type QuestionAnswers,
  type QuestionRecord,
  validateQuestionGetParams,
  validateQuestionListParams,
  validateQuestionRequestParams,
  validateQuestionResolveParams,
  validateQuestionWaitAnswerParams,
} from "@openclaw/gateway-protocol";
import type { QuestionInput, QuestionOutcome } from "./types.ts";
import {
  agentFromSessionKey,
  clone,
  invalidParams,
  type Method,
  normalizeSessionKey,
  RequestError,
  type Responder,
  type Settings,
  type Timers,
  type Wire,
} from "./wire.ts";

export type QuestionState = {
  record: QuestionRecord;
  timer: NodeJS.Timeout | null;
  waiters: Set<() => void>;
};
type QuestionResult = { status: QuestionRecord["status"]; answers?: QuestionAnswers };

export type Questions = ReturnType<typeof createQuestions>;

export function createQuestions(settings: Settings, timers: Timers, wire: Wire) {
  const questions = new Map<string, QuestionState>();

  function questionNotFound(id: string): RequestError {
    return new RequestError(`question '${id}' was not found`, { reason: "QUESTION_NOT_FOUND" });
  }

  function store(record: QuestionRecord): QuestionRecord {
    const state: QuestionState = { record, timer: null, waiters: new Set() };
    questions.set(record.id, state);
    if (record.status === "pending") {
      state.timer = timers.later(() => expire(state), record.expiresAtMs - settings.now());
      wire.broadcast("question.requested", record);
    }
    return clone(record);
  }

  function result(record: QuestionRecord): QuestionResult {
    return record.status === "answered" && record.answers
      ? { status: record.status, answers: clone(record.answers) }
      : { status: record.status };
  }

  function finish(state: QuestionState): void {
    timers.cancel(state.timer);
    state.timer = null;
    // As the real Gateway does: it publishes the end after an await (its question manager's
    // `onResolved`), so `question.resolve` has answered its caller first.
    const resolved = { id: state.record.id, ...result(state.record) };
    queueMicrotask(() => wire.broadcast("question.resolved", resolved));
    for (const wake of state.waiters) wake();
    state.waiters.clear();
  }

  function expire(state: QuestionState): void {
    if (state.record.status !== "pending") return;
    state.record.status = "expired";
    finish(state);
  }

  /** The real Gateway's answer checks, in its order; messages copied from the real Gateway. */
  function checkAnswers(record: QuestionRecord, answers: QuestionAnswers): void {
    const bad = (message: string) =>
      new RequestError(message, { reason: "QUESTION_INVALID_ANSWER" });
    const byId = new Map(record.questions.map((q) => [q.questionId, q]));
    for (const key of Object.keys(answers.answers)) {
      if (!byId.has(key)) throw bad(`question '${key}' is not part of this request`);
    }
    for (const q of record.questions) {
      const values = answers.answers[q.questionId];
      if (!values || values.length === 0)
        throw bad(`question '${q.questionId}' requires an answer`);
      if (values.length > 1 && q.multiSelect !== true)
        throw bad(`question '${q.questionId}' does not allow multiple answers`);
      if (q.options.length > 0 && q.isOther !== true) {
        const labels = new Set(q.options.map((o) => o.label));
        if (values.some((v) => !labels.has(v)))
          throw bad(`question '${q.questionId}' contains an unknown option`);
      }
    }
  }

  function resolve(id: string, outcome: QuestionOutcome, resolvedBy?: string): QuestionResult {
    const state = questions.get(id);
    if (!state) throw questionNotFound(id);
    const record = state.record;
    if (record.status !== "pending") {
      throw new RequestError(`question '${id}' is already ${record.status}`, {
        reason: "QUESTION_ALREADY_TERMINAL",
      });
    }
    if ("cancel" in outcome) {
      record.status = "cancelled";
    } else {
      checkAnswers(record, outcome.answers);
      const stored: QuestionAnswers = { answers: {} };
      for (const q of record.questions) {
        const values = outcome.answers.answers[q.questionId] ?? [];
        // Secret-store answers never travel back: the real Gateway answers and broadcasts "stored".
        stored.answers[q.questionId] = q.secretStore ? values.map(() => "stored") : [...values];
      }
      record.status = "answered";
      record.answers = stored;
    }
    if (resolvedBy !== undefined) record.resolvedBy = resolvedBy;
    finish(state);
    return result(record);
  }

  function request(params: unknown): { id: string; expiresAtMs: number } {
    if (!validateQuestionRequestParams(params))
      throw invalidParams("question.request", validateQuestionRequestParams.errors);
    const sessionKey =
      params.sessionKey === undefined ? undefined : normalizeSessionKey(params.sessionKey);
    const keyAgent = agentFromSessionKey(sessionKey);
    let agentId = params.agentId;
    if (agentId !== undefined) {
      if (settings.knownAgents && !settings.knownAgents.includes(agentId.toLowerCase()))
        throw new RequestError(`Unknown agent id "${agentId}"`);
      if (keyAgent !== undefined && keyAgent !== agentId.toLowerCase()) {
        throw new RequestError(`agent "${agentId}" does not match session key agent "${keyAgent}"`);
      }
    } else {
      agentId = keyAgent;
    }
    const seenIds = new Set<string>();
    for (const q of params.questions) {
      if (seenIds.has(q.questionId))
        throw new RequestError(`duplicate question id '${q.questionId}'`);
      seenIds.add(q.questionId);
      if (q.options.length === 1) {
        throw new RequestError(
          `question '${q.questionId}' must have either no options or 2 to 4 options`,
        );
      }
      const labels = new Set<string>();
      for (const o of q.options) {
        if (labels.has(o.label))
          throw new RequestError(
            `question '${q.questionId}' has duplicate option label '${o.label}'`,
          );
        labels.add(o.label);
      }
      if (q.secretStore)
        throw new RequestError("secret store questions require trusted agent runtime authority");
      if (q.isSecret)
        throw new RequestError(
          `question '${q.questionId}': secret questions are not supported yet`,
        );
    }
    const createdAtMs = settings.now();
    const record: QuestionRecord = {
      id: params.id ?? randomUUID(),
      questions: clone(params.questions),
      ...(agentId !== undefined ? { agentId } : {}),
      ...(sessionKey !== undefined ? { sessionKey } : {}),
      ...(params.runId !== undefined ? { runId: params.runId } : {}),
      createdAtMs,
      expiresAtMs: createdAtMs + (params.timeoutMs ?? settings.questionTimeoutMs),
      status: "pending",
    };
    store(record);
    return { id: record.id, expiresAtMs: record.expiresAtMs };
  }

  function waitAnswer(params: unknown, reply: Responder): void {
    if (!validateQuestionWaitAnswerParams(params))
      throw invalidParams("question.waitAnswer", validateQuestionWaitAnswerParams.errors);
    const state = questions.get(params.id);
    if (!state) throw questionNotFound(params.id);
    if (state.record.status !== "pending") {
      reply({ ok: true, payload: result(state.record) });
      return;
    }
    let timer: NodeJS.Timeout | null = null;
    const wake = () => {
      timers.cancel(timer);
      reply({ ok: true, payload: result(state.record) });
    };
    state.waiters.add(wake);
    if (params.timeoutMs !== undefined) {
      timer = timers.later(() => {
        state.waiters.delete(wake);
        reply({ ok: true, payload: { status: "pending" } });
      }, params.timeoutMs);
    }
  }

  const methods: Record<string, Method> = {
    "question.request": (_conn, params, reply) => reply({ ok: true, payload: request(params) }),
    "question.list": (_conn, params, reply) => {
      const p = params === undefined ? {} : params;
      if (!validateQuestionListParams(p))
        throw invalidParams("question.list", validateQuestionListParams.errors);
      reply({
        ok: true,
        payload: {
          questions: [...questions.values()]
            .filter((s) => s.record.status === "pending")
            .map((s) => clone(s.record)),
        },
      });
    },
    "question.get": (_conn, params, reply) => {
      if (!validateQuestionGetParams(params))
        throw invalidParams("question.get", validateQuestionGetParams.errors);
      const state = questions.get(params.id);
      if (!state) throw questionNotFound(params.id);
      reply({ ok: true, payload: { question: clone(state.record) } });
    },
    "question.resolve": (_conn, params, reply) => {
      if (!validateQuestionResolveParams(params))
        throw invalidParams("question.resolve", validateQuestionResolveParams.errors);
      const outcome: QuestionOutcome =
        "cancel" in params ? { cancel: true } : { answers: params.answers };
      reply({ ok: true, payload: resolve(params.id, outcome, params.resolvedBy) });
    },
    "question.waitAnswer": (_conn, params, reply) => waitAnswer(params, reply),
  };

  return {
    methods,
    get: (id: string) => questions.get(id),
    records: () => [...questions.values()].map((s) => clone(s.record)),
    resolve,
    expire,
    /** A question as an agent's tool would have made it (the test API: any field may be given). */
    create(input: QuestionInput): QuestionRecord {
      const { timeoutMs, ...partial } = input;
      const createdAtMs = partial.createdAtMs ?? settings.now();
      const sessionKey =
        partial.sessionKey === undefined ? undefined : normalizeSessionKey(partial.sessionKey);
      const agentId = partial.agentId ?? agentFromSessionKey(sessionKey);
      const record: QuestionRecord = {
        ...partial,
        id: partial.id ?? randomUUID(),
        questions: partial.questions ?? [
          {
            questionId: "db",
            header: "Database",
            question: "Which database?",
            options: [
              { label: "Postgres (Recommended)", description: "needs a server" },
              { label: "SQLite" },
            ],
          },
        ],
        ...(agentId !== undefined ? { agentId } : {}),
        ...(sessionKey !== undefined ? { sessionKey } : {}),
        createdAtMs,
        expiresAtMs: partial.expiresAtMs ?? createdAtMs + (timeoutMs ?? settings.questionTimeoutMs),
        status: partial.status ?? "pending",
      };
      return store(clone(record));
    },
    /** Forgets every timer and waiter (the timers themselves are cleared by their owner). */
    stop(): void {
      for (const state of questions.values()) {
        state.timer = null;
        state.waiters.clear();
      }
    },
  };
}
