// A scripted OpenAI chat-completions server for live agent runs on the real Gateway.
//
// It runs in Vitest's globalSetup process, but tests run in worker processes, so a test
// cannot call into it. Instead the conversation itself carries the script: the test sends
// `stubScript({...})` as the user message, and the stub reads it from the request the
// Gateway makes. Every request body is recorded and served at `GET /requests`.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";

/** Fields every script may carry. `tag` is ignored by the stub: it lets a test find its own requests. */
type StubCommon = { chunkSize?: number; chunkDelayMs?: number; tag?: string };
/** A Gateway tool call: `id` as `tool_call` takes it (`ask_user`, `secrets`, ...), `args` its arguments. */
export type StubTool = { id: string; args: Record<string, unknown> };
/** Stream `reply` as assistant text. */
export type StubReplyScript = StubCommon & { reply: string };
/**
 * Call Gateway tools, one per model request, through the Gateway's `tool_call` router (or
 * directly when the request lists a function with that name): each tool result after the
 * script message advances one step; after the last one, stream `then`.
 */
export type StubToolScript = StubCommon &
  ({ tool: StubTool } | { tools: StubTool[] }) & { then?: string };
/** Answer the model request with an HTTP error (the Gateway may retry). */
export type StubErrorScript = StubCommon & { error: string; status?: number };
export type StubScript = StubReplyScript | StubToolScript | StubErrorScript;

/** The reply to any user message that is not a stub script. */
export const STUB_DEFAULT_REPLY = "Stub model: no script in the last user message.";
/** The reply after a tool result when the script has no `then`. */
export const STUB_DEFAULT_THEN = "Stub model: tool finished.";

/** The user message text that makes the stub follow `script`. */
export function stubScript(script: StubScript): string {
  return JSON.stringify({ stub: script });
}

export type ChatMessage = {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: string;
  [key: string]: unknown;
};
export type ChatRequest = {
  model?: string;
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: unknown[];
  [key: string]: unknown;
};
export type RecordedRequest = { receivedAtMs: number; path: string; body: ChatRequest };

export type StubModel = {
  /** Base URL without `/v1`, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  requests(): RecordedRequest[];
  stop(): Promise<void>;
};

/** Plain text of a message's content (string, or OpenAI content parts). */
export function messageText(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) =>
      part && typeof part === "object" && "text" in part && typeof part.text === "string"
        ? part.text
        : "",
    )
    .join("");
}

/**
 * A request on the Gateway's `/v1` endpoint flattens the chat's earlier messages into the current one,
 * ahead of it: `[Chat messages since your last reply - for context] ... [Current message - respond to this]`.
 */
const CURRENT_MESSAGE_MARKER = "[Current message - respond to this]";

/**
 * Finds `{"stub": ...}` in text (the Gateway may wrap the user's words with metadata), in the current
 * message only: a script of an earlier message of the chat is not this one's.
 */
export function parseStubScript(text: string): StubScript | null {
  const start = text.indexOf('{"stub"', Math.max(0, text.lastIndexOf(CURRENT_MESSAGE_MARKER)));
  if (start < 0) return null;
  // Try the longest candidate first: the script is the JSON object ending at some later `}`.
  for (let end = text.lastIndexOf("}"); end > start; end = text.lastIndexOf("}", end - 1)) {
    try {
      const parsed = JSON.parse(text.slice(start, end + 1)) as { stub?: unknown };
      if (parsed.stub && typeof parsed.stub === "object") return parsed.stub as StubScript;
    } catch {
      // Not this `}`; try an earlier one.
    }
  }
  return null;
}

// The Gateway appends its own context as an extra user message after the user's words
// (`<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> ...`); it is not the user speaking.
export function isInternalContext(message: ChatMessage): boolean {
  return messageText(message).trimStart().startsWith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>");
}

/** Index of the last message the user wrote (skipping the Gateway's internal context), or -1. */
export function lastUserMessageIndex(messages: ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user" && !isInternalContext(m)) return i;
  }
  return -1;
}

type Turn =
  | { text: string }
  | { toolName: string; toolArgs: Record<string, unknown> }
  | { error: string; status: number };

/** Decides the assistant turn for one request: the whole scripting rule lives here. */
export function decideTurn(body: ChatRequest): Turn & { chunkSize: number; chunkDelayMs: number } {
  const messages = body.messages ?? [];
  const lastUser = lastUserMessageIndex(messages);
  const script = lastUser >= 0 ? parseStubScript(messageText(messages[lastUser])) : null;
  const pacing = { chunkSize: script?.chunkSize ?? 16, chunkDelayMs: script?.chunkDelayMs ?? 5 };
  if (!script) return { text: STUB_DEFAULT_REPLY, ...pacing };
  if ("reply" in script) return { text: script.reply, ...pacing };
  if ("error" in script) return { error: script.error, status: script.status ?? 500, ...pacing };
  const tools = "tools" in script ? script.tools : [script.tool];
  const step = messages.slice(lastUser + 1).filter((m) => m.role === "tool").length;
  const tool = tools[step];
  if (!tool) return { text: script.then ?? STUB_DEFAULT_THEN, ...pacing };
  const direct = (body.tools ?? []).some(
    (t) => (t as { function?: { name?: unknown } }).function?.name === tool.id,
  );
  return direct
    ? { toolName: tool.id, toolArgs: tool.args, ...pacing }
    : { toolName: "tool_call", toolArgs: { id: tool.id, args: tool.args }, ...pacing };
}

export async function startStubModel(
  opts: { port?: number; keepRequests?: number } = {},
): Promise<StubModel> {
  const keep = opts.keepRequests ?? 1000;
  const recorded: RecordedRequest[] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { pathname: path, searchParams } = new URL(req.url ?? "/", "http://stub");
    if (req.method === "GET" && path === "/requests") {
      // ?containing=x: only bodies whose JSON contains x (bodies are large: the system prompt lists every tool).
      const containing = searchParams.get("containing");
      return sendJson(
        res,
        200,
        containing === null
          ? recorded
          : recorded.filter((r) => JSON.stringify(r.body).includes(containing)),
      );
    }
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      return sendJson(res, 200, {
        object: "list",
        data: [{ id: "scripted", object: "model", owned_by: "stub" }],
      });
    }
    if (req.method !== "POST" || !path.endsWith("/chat/completions"))
      return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });

    const body = JSON.parse(await readBody(req)) as ChatRequest;
    recorded.push({ receivedAtMs: Date.now(), path, body });
    if (recorded.length > keep) recorded.shift();

    const turn = decideTurn(body);
    if ("error" in turn)
      return sendJson(res, turn.status, { error: { message: turn.error, type: "stub_error" } });
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body.model ?? "scripted";
    const toolCall =
      "toolName" in turn
        ? {
            id: `call_${randomUUID().replaceAll("-", "")}`,
            type: "function",
            function: { name: turn.toolName, arguments: JSON.stringify(turn.toolArgs) },
          }
        : null;
    const finishReason = toolCall ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };

    if (!body.stream) {
      const message = toolCall
        ? { role: "assistant", content: null, tool_calls: [toolCall] }
        : { role: "assistant", content: "text" in turn ? turn.text : "" };
      return sendJson(res, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finishReason }],
        usage,
      });
    }

    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    const chunk = (delta: object, finish: string | null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    chunk({ role: "assistant", content: "" }, null);
    if (toolCall) {
      chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null);
    } else if ("text" in turn) {
      for (let i = 0; i < turn.text.length; i += turn.chunkSize) {
        chunk({ content: turn.text.slice(i, i + turn.chunkSize) }, null);
        if (turn.chunkDelayMs > 0) await new Promise((r) => setTimeout(r, turn.chunkDelayMs));
      }
    }
    chunk({}, finishReason);
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage) {
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
      );
    }
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => [...recorded],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * From a test worker: the requests the stub has recorded so far, oldest first; with `containing`,
 * only those whose JSON body contains that string (e.g. a script's `tag` or a session key).
 */
export async function fetchStubRequests(
  stubModelUrl: string,
  containing?: string,
): Promise<RecordedRequest[]> {
  const query = containing === undefined ? "" : `?containing=${encodeURIComponent(containing)}`;
  const res = await fetch(`${stubModelUrl}/requests${query}`);
  if (!res.ok) throw new Error(`stub model GET /requests: HTTP ${res.status}`);
  return (await res.json()) as RecordedRequest[];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
