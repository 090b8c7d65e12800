/**
 * Session keys look like `agent:<agentId>:<rest>`; markers inside <rest> tell a channel thread, a
 * sub-agent or a cron run apart (DESIGN §2). Agents are matched by the parsed key, never by exact string.
 */
export type ParsedSessionKey = {
  agentId: string;
  rest: string;
  isThread: boolean;
  isSubagent: boolean;
  isCron: boolean;
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
    isCron: segments.includes("cron"),
  };
}

export function isSameAgent(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Does this session (and the record's own agentId, when given) belong to the configured agent? */
export function belongsToAgent(sessionKey: string | undefined, recordAgentId: string | undefined, agentId: string): boolean {
  if (!sessionKey) return false;
  const parsed = parseSessionKey(sessionKey);
  if (!parsed || !isSameAgent(parsed.agentId, agentId)) return false;
  return recordAgentId === undefined || isSameAgent(recordAgentId, agentId);
}

/**
 * Maps between Open WebUI chat ids and session keys through a pattern such as
 * `agent:{agent}:openwebui:{chat}`. A key that does not match the whole pattern has no chat.
 */
export class ChatKeyPattern {
  readonly pattern: string;
  readonly agentId: string;
  private readonly regex: RegExp;

  constructor(pattern: string, agentId: string) {
    if (!pattern.includes("{chat}")) throw new Error(`SESSION_KEY_PATTERN must contain {chat}: ${pattern}`);
    this.pattern = pattern;
    this.agentId = agentId.toLowerCase();
    const source = pattern
      .split(/(\{agent\}|\{chat\})/)
      .map((part) => {
        if (part === "{agent}") return escapeRegExp(this.agentId);
        if (part === "{chat}") return "([^:]+)";
        return escapeRegExp(part);
      })
      .join("");
    this.regex = new RegExp(`^${source}$`, "i");
  }

  chatIdOf(sessionKey: string): string | null {
    return this.regex.exec(sessionKey)?.[1] ?? null;
  }

  sessionKeyOf(chatId: string): string {
    return this.pattern.replaceAll("{agent}", this.agentId).replaceAll("{chat}", chatId);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
