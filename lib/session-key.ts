/**
 * Session keys look like `agent:<agentId>:<rest>`; markers inside <rest> tell a channel thread or a
 * sub-agent apart (docs/ARCHITECTURE.md#the-openclaw-gateway). Agents are matched by the parsed key, never by exact string.
 */
export type ParsedSessionKey = {
  agentId: string;
  rest: string;
  isThread: boolean;
  isSubagent: boolean;
};

export function parseSessionKey(key: string): ParsedSessionKey | null {
  const match = /^agent:([^:]+):(.+)$/.exec(key);
  if (!match) return null;
  const [, agentId = "", rest = ""] = match;
  const segments = rest.split(":");
  return {
    agentId: agentId.toLowerCase(),
    rest,
    isThread: segments.includes("thread"),
    isSubagent: segments.includes("subagent"),
  };
}

export function isSameAgent(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Does this session (and the record's own agentId, when given) belong to the configured agent? */
export function belongsToAgent(
  sessionKey: string | undefined,
  recordAgentId: string | undefined,
  agentId: string,
): boolean {
  if (!sessionKey) return false;
  const parsed = parseSessionKey(sessionKey);
  if (!parsed || !isSameAgent(parsed.agentId, agentId)) return false;
  return recordAgentId === undefined || isSameAgent(recordAgentId, agentId);
}

/**
 * The Pipe's keys; those the Open WebUI filter gives each reply on the Gateway's `/v1` (its OpenAI
 * `user`); and those a connection's `x-openclaw-session-key` header gives them (`connect-openwebui
 * --session-header`, server/openwebui/plans.ts), which name the reply's Open WebUI user too.
 */
export const DEFAULT_SESSION_KEY_PATTERN =
  "agent:{agent}:openwebui:{chat},agent:{agent}:openai-user:openwebui:{chat}:{reply},agent:{agent}:openai-user:openwebui:{chat}:{reply}:{user}";

/** Where a session key puts an ask: the Open WebUI chat, and the reply (assistant message) when the key names one. */
export type ChatOfSession = { chatId: string; replyId: string | null };

/**
 * Maps session keys to Open WebUI chats through patterns such as `agent:{agent}:openwebui:{chat}`
 * (the Pipe's keys) or `agent:{agent}:openai-user:openwebui:{chat}:{reply}` (the keys the Open WebUI
 * filter gives replies on the Gateway's `/v1` endpoint), comma-separated, the first match winning.
 * A key that matches no pattern as a whole has no chat. `{user}` matches one part and decides nothing:
 * Open WebUI fills it from the request's signed-in user, which keeps apart, at the Gateway, the
 * sessions of requests that name no chat; whose reply it is, the filter's signed reply start says.
 */
export class ChatKeyPattern {
  readonly agentId: string;
  private readonly patterns: readonly RegExp[];

  constructor(patterns: string, agentId: string) {
    this.agentId = agentId.toLowerCase();
    this.patterns = sessionKeyPatterns(patterns).map((pattern) => {
      if (!pattern.includes("{chat}"))
        throw new Error(`SESSION_KEY_PATTERN must contain {chat}: ${pattern}`);
      const source = pattern
        .split(/(\{agent\}|\{chat\}|\{reply\}|\{user\})/)
        .map((part) => {
          if (part === "{agent}") return escapeRegExp(this.agentId);
          if (part === "{chat}") return "(?<chat>[^:]+)";
          if (part === "{reply}") return "(?<reply>[^:]+)";
          if (part === "{user}") return "[^:]+";
          return escapeRegExp(part);
        })
        .join("");
      return new RegExp(`^${source}$`, "i");
    });
  }

  chatOf(sessionKey: string): ChatOfSession | null {
    for (const regex of this.patterns) {
      const groups = regex.exec(sessionKey)?.groups;
      if (groups?.chat) return { chatId: groups.chat, replyId: groups.reply ?? null };
    }
    return null;
  }
}

/** The patterns of a SESSION_KEY_PATTERN value: comma-separated, each trimmed. */
export function sessionKeyPatterns(patterns: string): string[] {
  return patterns.split(",").map((pattern) => pattern.trim());
}

/**
 * How an answer to a text prompt reaches the agent (docs/ARCHITECTURE.md#how-open-webuis-chats-reach-openclaw, #sources-and-answers). A run started over the Gateway's
 * OpenAI-compatible endpoint (its id is `chatcmpl_…`; its session `openai:…` or `openai-user:…`) has
 * an HTTP client waiting for it, Open WebUI, which never reads a session's later runs: the answer
 * must become the person's next message in that chat (`chat`). Every other run (the Pipe's) continues
 * with the answer sent into its session (`run`).
 */
export function textPromptContinuation(sessionKey: string, runId: string): "run" | "chat" {
  return isOpenAiEndpointRun(sessionKey, runId) ? "chat" : "run";
}

/** Was the run started over the Gateway's OpenAI-compatible endpoint (`/v1`)? Its id or its session says. */
export function isOpenAiEndpointRun(sessionKey: string, runId: string | null): boolean {
  const rest = parseSessionKey(sessionKey)?.rest ?? "";
  return (runId ?? "").startsWith("chatcmpl_") || /^openai(-user)?:/.test(rest);
}

/** Where a session runs, for people: its first part (`main`, `telegram`, `openwebui`…). */
export function sessionChannel(sessionKey: string): string {
  return parseSessionKey(sessionKey)?.rest.split(":")[0] ?? "unknown";
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
