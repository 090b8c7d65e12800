import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { errorMessage } from "../lib/error-message.ts";
import { filterSecret } from "./auth/keys.ts";
import { loadOrCreateAuthSecret } from "./auth/secret.ts";
import { parseConfig } from "./config.ts";
import { connectOpenWebui, ConnectRefused, frontMatterVersion } from "./openwebui/connect.ts";
import { PLAIN_HTTP_FLAG, printable } from "./openwebui/safety.ts";

/**
 * `npm run connect-openwebui -- --url <Open WebUI URL> --api-key <an admin's API key> [--asks-url <URL>]
 * [--add-connection] [--session-header] [--allow-plain-http]`: connects Open WebUI to this server and its Gateway (server/openwebui/connect.ts).
 * Run it where `npm start` runs, with the same environment (DATA_DIR, AUTH_SECRET, PUBLIC_URL, the
 * Gateway's URL and token, AGENT_ID); `OPENWEBUI_URL` and `OPENWEBUI_API_KEY` stand in for the two flags.
 * Exit code 0: connected and the whole chain checked; 1: refused or failed (the reason printed); 3:
 * connected, with something left to do (printed with `!`).
 */

const FILTER_FILE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  "../integrations/open-webui/openclaw_asks_filter.py",
);
const USAGE =
  "usage: npm run connect-openwebui -- --url <Open WebUI URL> --api-key <an admin's API key> [--asks-url <URL as browsers reach OpenClaw Asks>] [--add-connection] [--session-header] [--allow-plain-http]";

const URL_NEEDED =
  "--url (or OPENWEBUI_URL) must be Open WebUI's URL, e.g. https://chat.example.com";
const KEY_NEEDED = "--api-key (or OPENWEBUI_API_KEY) must be an admin's API key";
const Args = z.object({
  url: z
    .url({ error: URL_NEEDED })
    .refine((url) => /^https?:\/\//.test(url), "--url must be an http:// or https:// URL"),
  apiKey: z.string({ error: KEY_NEEDED }).min(1, KEY_NEEDED),
  asksUrl: z.url("--asks-url must be a URL").optional(),
  addConnection: z.boolean(),
  sessionHeader: z.boolean(),
  allowPlainHttp: z.boolean(),
});

export function parseArgs(
  args: readonly string[],
  env: Record<string, string | undefined>,
): z.infer<typeof Args> {
  const raw: Record<string, unknown> = {
    url: env.OPENWEBUI_URL || undefined,
    apiKey: env.OPENWEBUI_API_KEY || undefined,
    addConnection: false,
    sessionHeader: false,
    allowPlainHttp: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = () => {
      const next = args[++i];
      if (next === undefined || next.startsWith("--"))
        throw new Error(`${arg} needs a value: ${USAGE}`);
      return next;
    };
    if (arg === "--url") raw.url = value();
    else if (arg === "--api-key") raw.apiKey = value();
    else if (arg === "--asks-url") raw.asksUrl = value();
    else if (arg === "--add-connection") raw.addConnection = true;
    else if (arg === "--session-header") raw.sessionHeader = true;
    else if (arg === PLAIN_HTTP_FLAG) raw.allowPlainHttp = true;
    else throw new Error(`unknown argument ${arg}: ${USAGE}`);
  }
  const parsed = Args.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${parsed.error.issues[0]?.message ?? "invalid arguments"}\n${USAGE}`);
  return parsed.data;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), process.env);
  const config = parseConfig(process.env);
  const content = readFileSync(FILTER_FILE, "utf8");
  const version = frontMatterVersion(content);
  if (!version) throw new Error(`${FILTER_FILE} states no version in its front matter`);
  const asksUrl = args.asksUrl ?? config.PUBLIC_URL;
  const connected = await connectOpenWebui({
    openWebuiUrl: args.url,
    apiKey: args.apiKey,
    asksUrl: asksUrl
      ? { url: asksUrl.replace(/\/+$/, ""), explicit: true }
      : { url: `http://${config.HOST}:${config.PORT}`, explicit: false },
    filterSecret: filterSecret(loadOrCreateAuthSecret(config)),
    gatewayUrl: config.OPENCLAW_GATEWAY_URL,
    gatewayToken: config.OPENCLAW_GATEWAY_TOKEN,
    agentId: config.AGENT_ID,
    addConnection: args.addConnection,
    sessionHeader: args.sessionHeader,
    allowPlainHttp: args.allowPlainHttp,
    filter: { content, version },
    print: (line) => console.log(line),
  });
  return connected ? 0 : 3;
}

if (import.meta.main) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(
        error instanceof ConnectRefused ? error.message : printable(`✗ ${errorMessage(error)}`),
      );
      process.exit(1);
    },
  );
}
