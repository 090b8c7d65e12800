import { z } from "zod";
import { ChatKeyPattern } from "../lib/session-key.ts";

/**
 * The whole configuration, parsed from the environment once at start. A bad value stops the server
 * with one line naming the variable (create-t3-app style).
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

const EnvSchema = z.object({
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
  SESSION_KEY_PATTERN: z
    .string()
    .default("agent:{agent}:openwebui:{chat}")
    .refine((pattern) => pattern.includes("{chat}"), "must contain {chat}"),
  AUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  /** The printed dashboard link belongs to the first owner; `owner` when none is configured. */
  OWNER_USERS: commaList.transform((users) => (users.length > 0 ? users : ["owner"])),
  DATA_DIR: z.string().min(1).default("data"),
  OPENWEBUI_ORIGINS: commaList.pipe(z.array(z.url("must be a comma-separated list of origins"))),
  TEXT_PROMPT_TIMEOUT_SECONDS: z.coerce.number().int().min(5).max(86_400).default(240),
});

export type Env = z.infer<typeof EnvSchema>;

export type Config = Env & {
  chatKeys: ChatKeyPattern;
  owners: ReadonlySet<string>;
};

export class ConfigError extends Error {}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const blankAsUnset = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const result = EnvSchema.safeParse(blankAsUnset);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = issue?.path[0] ?? "environment";
    throw new ConfigError(`Invalid configuration: ${String(name)} ${issue?.message ?? "is invalid"}`);
  }
  const parsed = result.data;
  return {
    ...parsed,
    chatKeys: new ChatKeyPattern(parsed.SESSION_KEY_PATTERN, parsed.AGENT_ID),
    owners: new Set(parsed.OWNER_USERS),
  };
}
