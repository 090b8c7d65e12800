import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ChatKeyPattern, DEFAULT_SESSION_KEY_PATTERN } from "../../lib/session-key.ts";
import { parseArgs } from "../connect-openwebui.ts";
import type { ModelSettings } from "./admin-api.ts";
import { filterActsOn, releaseLine, toolsVerdict } from "./checks.ts";
import {
  compareVersions,
  connectOpenWebui,
  ConnectRefused,
  findConnection,
  frontMatterVersion,
  planFilter,
  planValves,
} from "./connect.ts";
import { otherAgents, replySessionHeader, withReplySessionHeader } from "./plans.ts";

const FILTER = readFileSync(
  new URL("../../integrations/open-webui/openclaw_asks_filter.py", import.meta.url),
  "utf8",
);
const asks = (url: string, explicit = true) => ({ url, explicit });

describe("npm run connect-openwebui: its decisions", () => {
  it("reads a function's version from its front matter, as Open WebUI does", () => {
    expect(frontMatterVersion(FILTER)).toMatch(/^\d+\.\d+\.\d+$/);
    expect(frontMatterVersion('"""\ntitle: X\nversion: 0.2.0\n"""\nimport os')).toBe("0.2.0");
    expect(frontMatterVersion('import os\n"""\nversion: 9.9.9\n"""')).toBeNull();
    expect(frontMatterVersion('"""\ntitle: no version\n"""')).toBeNull();
  });

  it("installs a missing filter, updates an older one, keeps the same or a newer one", () => {
    const installed = (version: string) => ({ content: "", meta: { manifest: { version } } });
    expect(planFilter(null, "0.4.0")).toEqual({ action: "install" });
    expect(planFilter(installed("0.2.0"), "0.4.0")).toEqual({ action: "update", from: "0.2.0" });
    expect(planFilter(installed("0.4.0"), "0.4.0")).toEqual({
      action: "keep",
      version: "0.4.0",
      newer: false,
    });
    expect(planFilter(installed("0.10.0"), "0.4.0")).toEqual({
      action: "keep",
      version: "0.10.0",
      newer: true,
    });
    // No manifest: the stored content's front matter; none at all counts as oldest.
    expect(planFilter({ content: '"""\nversion: 0.3.1\n"""', meta: {} }, "0.4.0")).toEqual({
      action: "update",
      from: "0.3.1",
    });
    expect(planFilter({ content: "", meta: {} }, "0.4.0")).toEqual({ action: "update", from: "0" });
    expect(compareVersions("0.10.0", "0.9.9")).toBeGreaterThan(0);
  });

  it("sets asks_url and auth_secret, keeping the valves the admin changed and saying so", () => {
    expect(
      planValves(null, { asksUrl: asks("https://asks.example.com"), filterSecret: "s".repeat(40) }),
    ).toEqual({
      valves: { asks_url: "https://asks.example.com", auth_secret: "s".repeat(40) },
      set: ["asks_url", "auth_secret"],
      kept: [],
    });
    const current = {
      asks_url: "https://asks.example.com",
      auth_secret: "old".repeat(11),
      model_ids: "my-pipe.main",
      token_ttl_seconds: 86_400,
      priority: 0,
      server_url: "",
    };
    expect(
      planValves(current, {
        asksUrl: asks("https://asks.example.com"),
        filterSecret: "s".repeat(40),
      }),
    ).toEqual({
      valves: { ...current, auth_secret: "s".repeat(40) },
      set: ["auth_secret"],
      kept: ["model_ids"],
    });
    // An asks_url only guessed from HOST and PORT never overrides one the admin set.
    expect(
      planValves(current, {
        asksUrl: asks("http://127.0.0.1:3000", false),
        filterSecret: "s".repeat(40),
      }),
    ).toMatchObject({ set: ["auth_secret"], kept: ["asks_url", "model_ids"] });
    expect(
      planValves(
        { asks_url: "http://127.0.0.1:3000" },
        { asksUrl: asks("http://10.0.0.5:3000", false), filterSecret: "x" },
      ),
    ).toMatchObject({
      valves: { asks_url: "http://10.0.0.5:3000" },
      set: ["asks_url", "auth_secret"],
    });
  });

  it("finds the OpenAI connection to this Gateway's /v1, and tells its own session header from one that would override one session per reply", () => {
    const config = (urls: string[], configs: Record<string, Record<string, unknown>> = {}) => ({
      ENABLE_OPENAI_API: true,
      OPENAI_API_BASE_URLS: urls,
      OPENAI_API_KEYS: urls.map(() => "k"),
      OPENAI_API_CONFIGS: configs,
    });
    const base = "http://gw:18789/v1";
    expect(findConnection(config(["https://api.openai.com/v1"]), base, "main")).toBeNull();
    expect(
      findConnection(config(["https://api.openai.com/v1", "http://GW:18789/v1/"]), base, "main"),
    ).toEqual({ index: 1, sessionHeader: "none" });
    const header = (value: string) =>
      config([base], { "0": { headers: { "X-OpenClaw-Session-Key": value } } });
    expect(findConnection(header("agent:main:openwebui:{{CHAT_ID}}"), base, "main")).toEqual({
      index: 0,
      sessionHeader: "other",
    });
    expect(findConnection(header(replySessionHeader("main")), base, "main")).toEqual({
      index: 0,
      sessionHeader: "per-reply",
    });
    // Another agent's: every reply would run as that agent.
    expect(findConnection(header(replySessionHeader("dev")), base, "main")?.sessionHeader).toBe(
      "other",
    );
  });

  it("sets the session header on that connection only, keeping its other headers and settings", () => {
    const config = {
      ENABLE_OPENAI_API: true,
      OPENAI_API_BASE_URLS: ["https://api.openai.com/v1", "http://gw:18789/v1"],
      OPENAI_API_KEYS: ["a", "b"],
      OPENAI_API_CONFIGS: {
        "0": { enable: true },
        "1": { prefix_id: "", headers: { "X-Team": "t1", "X-OpenClaw-Session-Key": "pinned" } },
      },
    };
    const updated = withReplySessionHeader(config, 1, "Main");
    expect(updated.OPENAI_API_CONFIGS).toEqual({
      "0": { enable: true },
      "1": {
        prefix_id: "",
        headers: {
          "X-Team": "t1",
          "x-openclaw-session-key":
            "agent:main:openai-user:openwebui{{TASK}}:{{CHAT_ID}}:{{MESSAGE_ID}}:{{USER_ID}}",
        },
      },
    });
    expect(findConnection(updated, "http://gw:18789/v1", "main")?.sessionHeader).toBe("per-reply");
    expect(config.OPENAI_API_CONFIGS["1"].headers["X-OpenClaw-Session-Key"]).toBe("pinned");
  });

  it("the session key Open WebUI makes of that header maps a reply to its chat, and a task, a temporary chat or no chat to none", () => {
    // Open WebUI's own substitution (utils/headers.py:139-167 in 0.12.4), the user's id last.
    const filled = (vars: { TASK?: string; CHAT_ID?: string; MESSAGE_ID?: string }) =>
      replySessionHeader("main").replace(
        /\{\{(\w+)\}\}/g,
        (_, name: string) => ({ ...vars, USER_ID: "u-1" })[name as keyof typeof vars] ?? "",
      );
    const keys = new ChatKeyPattern(DEFAULT_SESSION_KEY_PATTERN, "main");
    expect(keys.chatOf(filled({ CHAT_ID: "c-1", MESSAGE_ID: "m-1" }))).toEqual({
      chatId: "c-1",
      replyId: "m-1",
    });
    for (const vars of [
      { TASK: "title_generation", CHAT_ID: "c-1", MESSAGE_ID: "m-1" },
      { CHAT_ID: "temporary:s-1", MESSAGE_ID: "m-1" },
      { CHAT_ID: "c-1", MESSAGE_ID: "a:b" },
      {},
    ])
      expect(keys.chatOf(filled(vars)), JSON.stringify(vars)).toBeNull();
  });

  it("names the other agents Open WebUI lists, whose chats one agent's session header would take", () => {
    expect(
      otherAgents(
        [
          "openclaw",
          "openclaw/default",
          "openclaw/main",
          "gw.openclaw/dev",
          "openclaw:ops",
          "gpt-4o",
        ],
        "Main",
      ),
    ).toEqual(["dev", "ops"]);
    expect(otherAgents(["openclaw/main", "openclaw/default"], "main")).toEqual([]);
  });

  it("takes its flags, or the environment, and says what is missing", () => {
    expect(
      parseArgs(["--url", "https://chat.example.com", "--api-key", "sk-1", "--add-connection"], {}),
    ).toEqual({
      url: "https://chat.example.com",
      apiKey: "sk-1",
      addConnection: true,
      sessionHeader: false,
      allowPlainHttp: false,
    });
    expect(
      parseArgs(["--url", "http://10.0.0.5:8080", "--api-key", "k", "--allow-plain-http"], {}),
    ).toMatchObject({ allowPlainHttp: true });
    expect(
      parseArgs(["--url", "http://owui:8080", "--api-key", "k", "--session-header"], {}),
    ).toMatchObject({ sessionHeader: true, addConnection: false });
    expect(parseArgs([], { OPENWEBUI_URL: "http://owui:8080", OPENWEBUI_API_KEY: "sk-2" })).toEqual(
      {
        url: "http://owui:8080",
        apiKey: "sk-2",
        addConnection: false,
        sessionHeader: false,
        allowPlainHttp: false,
      },
    );
    expect(() => parseArgs(["--url", "https://chat.example.com"], {})).toThrow(
      /--api-key \(or OPENWEBUI_API_KEY\)/,
    );
    expect(() => parseArgs(["--api-key", "k"], {})).toThrow(/--url \(or OPENWEBUI_URL\)/);
    expect(() => parseArgs(["--url", "ftp://x", "--api-key", "k"], {})).toThrow(/http/);
    expect(() => parseArgs(["--url"], {})).toThrow(/needs a value/);
    expect(() => parseArgs(["--verbose"], {})).toThrow(/unknown argument --verbose/);
  });
});

// --- against a fake Open WebUI (and a fake Gateway /v1 on the same port), answering as the releases do ---

/** Open WebUI's refusals, as constants.py words them (0.11.0 and 0.12.4). */
const REFUSED = {
  apiKeysOff: "Use of API key is not enabled in the environment.",
  noPermission:
    "You do not have permission to access this resource. Please contact your administrator for assistance.",
  restricted: "The requested action has been restricted as a security measure.",
  invalid: "Your session has expired or the token is invalid. Please sign in again.",
};
type Answer = [status: number, body: unknown];
const ADMIN: Answer = [200, { id: "u1", name: "Admin", role: "admin", email: "a@x" }];

/** A fake Open WebUI on a free port: `routes` maps "GET /path" to its answer; what 0.12.4 answers by default. */
async function fakeOpenWebui(routes: Record<string, Answer>) {
  const calls: string[] = [];
  let base = "";
  const defaults: Record<string, Answer> = {
    "GET /api/version": [200, { version: "0.12.4" }],
    // 0.12.4: a browser session only (utils/auth.py:763-766).
    "GET /api/v1/auths/": [403, { detail: "A human session is required." }],
    "GET /api/v1/users/user/status": ADMIN,
    "GET /api/v1/functions/": [200, []],
    "GET /openai/config": [
      200,
      {
        ENABLE_OPENAI_API: true,
        OPENAI_API_BASE_URLS: [],
        OPENAI_API_KEYS: [],
        OPENAI_API_CONFIGS: {},
      },
    ],
    "POST /api/v1/functions/create": [200, { id: "openclaw_asks" }],
    "POST /api/v1/functions/id/openclaw_asks/valves/update": [200, {}],
    "POST /api/v1/functions/id/openclaw_asks/toggle": [200, { is_active: true }],
    "POST /api/v1/functions/id/openclaw_asks/toggle/global": [200, { is_global: true }],
    "GET /api/models": [200, { data: [{ id: "openclaw/main" }] }],
    "GET /api/v1/models/model?id=openclaw%2Fmain": [404, { detail: "not found" }],
    "GET /v1/models": [200, { data: [] }],
  };
  const server = createServer((request, response) => {
    const key = `${request.method} ${request.url}`;
    calls.push(key);
    const answer = routes[key] ?? defaults[key];
    const [status, body] =
      key === "GET /openai/config" && !routes[key]
        ? [200, { ...(defaults[key]![1] as object), OPENAI_API_BASE_URLS: [`${base}/v1`] }]
        : (answer ?? [404, { detail: "Not Found" }]);
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: base, calls, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function runConnect(routes: Record<string, Answer>, flags: { sessionHeader?: boolean } = {}) {
  const fake = await fakeOpenWebui(routes);
  const lines: string[] = [];
  try {
    const result = await connectOpenWebui({
      openWebuiUrl: fake.url,
      apiKey: "sk-admins-key",
      // Nothing listens there: the last check says so, with `!`.
      asksUrl: { url: "http://127.0.0.1:9", explicit: true },
      filterSecret: "s".repeat(40),
      gatewayUrl: fake.url.replace(/^http/, "ws"),
      gatewayToken: "gateway-token",
      agentId: "main",
      addConnection: false,
      ...flags,
      filter: { content: FILTER, version: frontMatterVersion(FILTER)! },
      print: (line) => lines.push(line),
    }).then(
      (connected) => ({ connected, refused: null }),
      (error: unknown) => {
        if (!(error instanceof ConnectRefused)) throw error;
        return { connected: false, refused: error.message };
      },
    );
    return { ...result, lines, calls: fake.calls };
  } finally {
    await fake.close();
  }
}

describe("npm run connect-openwebui against a fake Open WebUI: the key, the release, the tools", () => {
  it("--session-header: set when only this agent's models are on the connection; not when the models cannot be listed", async () => {
    const header = "✓ connection header x-openclaw-session-key set";
    const set = await runConnect(
      {
        "GET /api/models": [
          200,
          {
            data: [
              { id: "openclaw/main", urlIdx: 0 },
              { id: "openclaw/dev", urlIdx: 1 },
            ],
          },
        ],
        "POST /openai/config/update": [
          200,
          {
            ENABLE_OPENAI_API: true,
            OPENAI_API_BASE_URLS: [],
            OPENAI_API_KEYS: [],
            OPENAI_API_CONFIGS: {},
          },
        ],
      },
      { sessionHeader: true },
    );
    expect(set.lines, set.refused ?? "").toContain(header);
    expect(set.calls).toContain("POST /openai/config/update");

    const unlisted = await runConnect(
      { "GET /api/models": [500, { detail: "down" }] },
      { sessionHeader: true },
    );
    expect(unlisted.lines).not.toContain(header);
    expect(unlisted.lines).toContain(
      "! x-openclaw-session-key not set: Open WebUI did not list its models, so which agents this connection serves is unknown",
    );
    expect(unlisted.calls).not.toContain("POST /openai/config/update");
  });

  it("an admin's API key on 0.12.4 is an admin's: it asks /api/v1/users/user/status, never the browser-only /api/v1/auths/", async () => {
    const run = await runConnect({});
    expect(run.refused).toBeNull();
    expect(run.lines).toContain("✓ Open WebUI 0.12.4; the key is an admin's (Admin)");
    expect(run.calls).not.toContain("GET /api/v1/auths/");
    // Defaults: Open WebUI sends its ask_user, the filter (acting on openclaw/*) drops it.
    expect(run.lines.join("\n")).toContain(
      "✓ Open WebUI's own ask_user is dropped from openclaw/main's requests by the filter",
    );
    expect(run.lines.at(-1)).toMatch(/^Connected, with the steps above marked ! left to do/);
  });

  it("API keys turned off, endpoint restrictions, a user's key, a wrong key: one line each, nothing written", async () => {
    const refusal = async (answer: Answer) => {
      const run = await runConnect({ "GET /api/v1/users/user/status": answer });
      expect(run.calls.filter((call) => call.startsWith("POST"))).toEqual([]);
      return run.refused ?? "";
    };
    const off = await refusal([403, { detail: REFUSED.apiKeysOff }]);
    expect(off).toMatch(/^✗ check the API key: API keys are turned off in this Open WebUI/);
    expect(off).toContain("ENABLE_API_KEYS=true");
    expect(off).toContain("second factor");
    expect(await refusal([403, { detail: REFUSED.noPermission }])).toMatch(
      /^✗ check the API key: this Open WebUI lets API keys call only the endpoints it lists \(API key endpoint restrictions.*\/api\/v1\/users\/user\/status/,
    );
    expect(await refusal([200, { id: "u2", name: "Bo", role: "user" }])).toBe(
      "✗ check the API key: it is Bo's, whose role is user; connecting needs an admin's key (Open WebUI → Settings → Account → API keys)",
    );
    expect(await refusal([401, { detail: REFUSED.invalid }])).toBe(
      "✗ check the API key: Open WebUI refused the API key (401): give an admin's API key",
    );
    for (const message of [off, await refusal([403, { detail: REFUSED.noPermission }])])
      expect(message).not.toContain("\n");
  });

  it("with user status turned off, the admins-only OpenAI config tells an admin's key from a user's", async () => {
    const statusOff: Answer = [403, { detail: REFUSED.restricted }];
    const admin = await runConnect({ "GET /api/v1/users/user/status": statusOff });
    expect(admin.lines).toContain("✓ Open WebUI 0.12.4; the key is an admin's");
    const user = await runConnect({
      "GET /api/v1/users/user/status": statusOff,
      "GET /openai/config": [401, { detail: REFUSED.noPermission }],
    });
    expect(user.refused).toBe(
      "✗ find the OpenAI connections API: the key is not an admin's (401): connecting needs an admin's API key (Open WebUI → Settings → Account → API keys)",
    );
  });

  it("an unsupported release is said in one line, and connected anyway with every step checked", async () => {
    const run = await runConnect({ "GET /api/version": [200, { version: "0.13.0" }] });
    expect(run.lines).toContain(
      "! Open WebUI 0.13.0 is not a release OpenClaw Asks supports (0.11.x, 0.12.x): connecting anyway, each step below is checked, but chats are untested there",
    );
    expect(run.refused).toBeNull();
    expect(releaseLine("0.12.4")).toBeNull();
    expect(releaseLine("0.11.0")).toBeNull();
    expect(releaseLine("0.10.6")).toMatch(/^! Open WebUI 0\.10\.6 is not a release/);
    expect(releaseLine("0.1")).not.toBeNull();
  });

  it("never says Connected where Open WebUI's own ask_user would fail every reply", async () => {
    // The filter told to act on another model only: nothing drops the tool.
    const run = await runConnect({
      "GET /api/v1/functions/": [200, [{ id: "openclaw_asks" }]],
      "GET /api/v1/functions/id/openclaw_asks": [
        200,
        {
          id: "openclaw_asks",
          name: "OpenClaw Asks",
          type: "filter",
          content: FILTER,
          meta: { manifest: { version: frontMatterVersion(FILTER) } },
          is_active: true,
          is_global: true,
        },
      ],
      "GET /api/v1/functions/id/openclaw_asks/valves": [
        200,
        { asks_url: "http://127.0.0.1:9", auth_secret: "s".repeat(40), model_ids: "my-pipe.main" },
      ],
    });
    expect(run.lines.join("\n")).toMatch(
      /✗ Open WebUI sends its own ask_user with every request of openclaw\/main, which the Gateway refuses, and the filter does not act on openclaw\/main/,
    );
    expect(run.refused).toBe(
      "✗ not connected: every reply of a chat on openclaw/main would fail (the step marked ✗ above)",
    );
    expect(run.lines.some((line) => line.startsWith("Connected"))).toBe(false);
  });

  it("prints none of a server's control characters, and sends nothing over plain http:// to another host", async () => {
    const run = await runConnect({
      "GET /api/version": [200, { version: "0.12.4\u001b]52;c;ZXZpbA==\u0007" }],
    });
    expect(run.lines.join("\n")).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(run.lines[1]).toBe(
      "✓ Open WebUI 0.12.4\ufffd]52;c;ZXZpbA==\ufffd; the key is an admin's (Admin)",
    );
    const sent: string[] = [];
    const refused = await connectOpenWebui({
      openWebuiUrl: "http://chat.example.com",
      apiKey: "sk-admins-key",
      asksUrl: { url: "https://asks.example.com", explicit: true },
      filterSecret: "s".repeat(40),
      gatewayUrl: "ws://127.0.0.1:9",
      gatewayToken: "gateway-token",
      agentId: "main",
      addConnection: true,
      filter: { content: FILTER, version: frontMatterVersion(FILTER)! },
      print: (line) => sent.push(line),
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConnectRefused);
    expect((refused as Error).message).toMatch(/^✗ chat\.example\.com over plain http:\/\//);
    expect(sent).toEqual([]);
  });

  it("decides from the model's settings and the release which tools Open WebUI sends", () => {
    const verdict = (version: string, settings: ModelSettings | null, valves = {}) =>
      toolsVerdict({ version, model: "openclaw/main", settings, valves });
    const model = (meta: ModelSettings["meta"], params: ModelSettings["params"] = {}) => ({
      id: "openclaw/main",
      meta,
      params,
    });
    // 0.11.0 has no ask_user of its own; 0.11.1 has one but no request hook to drop it.
    expect(verdict("0.11.0", null)).toMatchObject({
      ok: true,
      line: expect.stringMatching(/no ask_user/),
    });
    expect(verdict("0.11.1", null)).toMatchObject({ ok: false });
    expect(verdict("0.11.1", model({ builtinTools: { user_input: false } })).ok).toBe(true);
    expect(verdict("0.12.4", null).ok).toBe(true);
    expect(verdict("0.12.4", null, { model_ids: "other" }).ok).toBe(false);
    expect(verdict("0.12.4", null, { model_ids: "other, openclaw/main" }).ok).toBe(true);
    // Off for the model in any of the three places: not sent at all.
    for (const settings of [
      model({ capabilities: { builtin_tools: false } }),
      model({ builtinTools: { user_input: false } }),
      model({}, { function_calling: "legacy" }),
    ])
      expect(verdict("0.12.4", settings, { model_ids: "other" })).toMatchObject({
        ok: true,
        line: expect.stringMatching(/sends no ask_user/),
      });
    // A workspace model built on OpenClaw's: the filter acts on it by its base model.
    expect(filterActsOn("my-helper", { id: "my-helper", base_model_id: "openclaw/main" }, {})).toBe(
      true,
    );
    expect(filterActsOn("gpt-4o", null, {})).toBe(false);
  });
});
