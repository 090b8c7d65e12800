import { z } from "zod";
import {
  ChatKeyPattern,
  DEFAULT_SESSION_KEY_PATTERN,
  sessionKeyPatterns,
} from "../lib/session-key.ts";

/**
 * The whole configuration, parsed from the environment once at start: a bad value stops the server
 * with one line naming the variable, before anything listens.
 */

const commaList = z
  .string()
  .default("")
  .transform((text) =>
    text
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  );

/** The `debug` namespaces of socket.io and engine.io: socket.io-parser prints every decoded frame, secret answers included. */
const SOCKET_DEBUG_NAMESPACES = [
  "socket.io:server",
  "socket.io:socket",
  "socket.io:client",
  "socket.io:namespace",
  "socket.io-parser",
  "socket.io-adapter",
  "engine",
  "engine:socket",
  "engine:ws",
  "engine:polling",
  "engine:transport",
];

/** Whether DEBUG turns on one of those namespaces, read as the `debug` package reads it (`*` wildcards, `-` exclusions). */
export function debugShowsFrames(debug: string): boolean {
  const patterns = debug.split(/[\s,]+/).filter(Boolean);
  const matches = (pattern: string, name: string) =>
    new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(
      name,
    );
  const included = patterns.filter((pattern) => !pattern.startsWith("-"));
  const excluded = patterns
    .filter((pattern) => pattern.startsWith("-"))
    .map((pattern) => pattern.slice(1));
  return SOCKET_DEBUG_NAMESPACES.some(
    (name) =>
      included.some((pattern) => matches(pattern, name)) &&
      !excluded.some((pattern) => matches(pattern, name)),
  );
}

const EnvSchema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
    HOST: z.string().min(1).default("127.0.0.1"),
    PUBLIC_URL: z.url().optional(),
    OPENCLAW_GATEWAY_URL: z
      .string()
      .default("ws://127.0.0.1:18789")
      .refine((url) => /^wss?:\/\/[^\s]+$/.test(url), "must be a ws:// or wss:// URL"),
    OPENCLAW_GATEWAY_TOKEN: z.string().optional(),
    AGENT_ID: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "must be an agent id (letters, digits, - and _)")
      .default("main"),
    /** Both ways Open WebUI reaches OpenClaw: the Pipe's sessions, and the filter's on the Gateway's `/v1` (one per reply). */
    SESSION_KEY_PATTERN: z
      .string()
      .default(DEFAULT_SESSION_KEY_PATTERN)
      .refine(
        (patterns) => sessionKeyPatterns(patterns).every((pattern) => pattern.includes("{chat}")),
        "must contain {chat} in each of its comma-separated patterns",
      ),
    AUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    /** The printed dashboard link belongs to the first owner; `owner` when none is configured. */
    OWNER_USERS: commaList.transform((users) => (users.length > 0 ? users : ["owner"])),
    DATA_DIR: z.string().min(1).default("data"),
    OPENWEBUI_ORIGINS: commaList.pipe(z.array(z.url("must be a comma-separated list of origins"))),
    /** Open WebUI's own address: the dashboard links each chat to `<OPENWEBUI_URL>/c/<chatId>`. */
    OPENWEBUI_URL: z
      .url()
      .refine((url) => /^https?:\/\//.test(url), "must be an http:// or https:// URL")
      .transform((url) => url.replace(/\/+$/, ""))
      .optional(),
    /** Web Push (RFC 8292): both keys, or neither (then generated into DATA_DIR/vapid.json). */
    VAPID_PUBLIC_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{80,100}$/, "must be a base64url P-256 public key")
      .optional(),
    VAPID_PRIVATE_KEY: z
      .string()
      .regex(/^[A-Za-z0-9_-]{40,50}$/, "must be a base64url P-256 private key")
      .optional(),
    VAPID_SUBJECT: z
      .string()
      .refine(
        (subject) => /^(mailto:\S+@\S+|https:\/\/\S+)$/.test(subject),
        "must be a mailto: address or an https:// URL",
      )
      .default("mailto:openclaw-asks@localhost"),
    /**
     * Tests only: push subscriptions to loopback, private and bare-address hosts are taken and pushed to
     * (the tests' push service runs on 127.0.0.1). Without it the push sender reaches public hosts only.
     */
    PUSH_ALLOW_PRIVATE_ENDPOINTS: z.literal("1", "must be 1 when set (tests only)").optional(),
    /**
     * Operators who call the Gateway's `/v1` from their own clients: `1` asks for approvals and secrets
     * in runs no Open WebUI reply start vouches for too (docs/SECURITY.md#whose-run-asks). Off: refused.
     */
    ALLOW_UNVOUCHED_RUNS: z.literal("1", "must be 1 when set").optional(),
    TEXT_PROMPT_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(86_400).default(240),
    /** Finished asks, and chats nobody viewed, are deleted after this many days. */
    HISTORY_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
    /** How long a dashboard link printed at start or by `npm run owner-link` is valid. */
    OWNER_LINK_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 30)
      .default(24),
    DEBUG: z.string().optional(),
    ALLOW_UNSAFE_DEBUG: z.literal("1", "must be 1 when set").optional(),
    /** Tab tokens whose `exp` lies further ahead are refused (a leaked token is good only for so long). */
    MAX_TOKEN_DAYS: z.coerce.number().positive().max(3650).default(30),
    /**
     * Open connections per client address, plain HTTP and Socket.IO alike: well below a common
     * descriptor limit of 1,024, so one address cannot exhaust the server (the bench raises it).
     */
    MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).default(256),
    /** A request whose headers have not all arrived by then is dropped (Node's default is 60 s). */
    HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(5),
    /** A request not wholly received by then (headers and body) is dropped. */
    REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(30),
    /** Several instances share this Redis (store, presence, Socket.IO fan-out); without it one process keeps SQLite in DATA_DIR. */
    REDIS_URL: z
      .string()
      .refine((url) => /^rediss?:\/\/[^\s]+$/.test(url), "must be a redis:// or rediss:// URL")
      .optional(),
    /** Every key this service writes in Redis starts with it (several deployments may share one Redis). */
    REDIS_KEY_PREFIX: z.string().min(1).default("openclaw-asks:"),
    /** Proxies whose X-Forwarded-For is believed: addresses or CIDR subnets. */
    TRUSTED_PROXIES: commaList.pipe(
      z.array(
        z.union(
          [z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()],
          "must be a comma-separated list of IP addresses or CIDR subnets",
        ),
      ),
    ),
  })
  .superRefine((env, context) => {
    if (env.OWNER_LINK_HOURS > env.MAX_TOKEN_DAYS * 24) {
      context.addIssue({
        code: "custom",
        path: ["OWNER_LINK_HOURS"],
        message: `(${env.OWNER_LINK_HOURS}) is longer than MAX_TOKEN_DAYS (${env.MAX_TOKEN_DAYS}) allows: the printed link would be refused`,
      });
    }
    if (env.HEADERS_TIMEOUT_SECONDS > env.REQUEST_TIMEOUT_SECONDS) {
      context.addIssue({
        code: "custom",
        path: ["HEADERS_TIMEOUT_SECONDS"],
        message: `(${env.HEADERS_TIMEOUT_SECONDS}) is longer than REQUEST_TIMEOUT_SECONDS (${env.REQUEST_TIMEOUT_SECONDS}): the headers are part of the request`,
      });
    }
    if ((env.VAPID_PUBLIC_KEY === undefined) !== (env.VAPID_PRIVATE_KEY === undefined)) {
      context.addIssue({
        code: "custom",
        path: [env.VAPID_PUBLIC_KEY === undefined ? "VAPID_PUBLIC_KEY" : "VAPID_PRIVATE_KEY"],
        message:
          "must be set together with its pair, or neither (then a pair is generated into DATA_DIR)",
      });
    }
    if (env.REDIS_URL !== undefined && env.AUTH_SECRET === undefined) {
      context.addIssue({
        code: "custom",
        path: ["AUTH_SECRET"],
        message:
          "must be set when REDIS_URL is: every instance must sign and check tokens with the same secret, and a generated one differs per DATA_DIR",
      });
    }
    if (
      env.DEBUG !== undefined &&
      env.ALLOW_UNSAFE_DEBUG === undefined &&
      debugShowsFrames(env.DEBUG)
    ) {
      context.addIssue({
        code: "custom",
        path: ["DEBUG"],
        message: `(${env.DEBUG}) turns on socket.io debug logging, which prints every decoded frame, secret values included: remove those names, or set ALLOW_UNSAFE_DEBUG=1 to run anyway`,
      });
    }
  });

export type Env = z.infer<typeof EnvSchema>;

export type Config = Env & {
  chatKeys: ChatKeyPattern;
  owners: ReadonlySet<string>;
  /** DEBUG prints socket.io frames and ALLOW_UNSAFE_DEBUG allowed it: say so at start. */
  unsafeDebug: boolean;
};

export class ConfigError extends Error {}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const blankAsUnset = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = EnvSchema.safeParse(blankAsUnset);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = issue?.path[0] ?? "environment";
    throw new ConfigError(
      `Invalid configuration: ${String(name)} ${issue?.message ?? "is invalid"}`,
    );
  }
  const parsed = result.data;
  return {
    ...parsed,
    chatKeys: new ChatKeyPattern(parsed.SESSION_KEY_PATTERN, parsed.AGENT_ID),
    owners: new Set(parsed.OWNER_USERS),
    unsafeDebug: parsed.DEBUG !== undefined && debugShowsFrames(parsed.DEBUG),
  };
}
