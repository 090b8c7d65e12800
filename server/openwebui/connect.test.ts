import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseArgs } from "../connect-openwebui.ts";
import {
  compareVersions,
  findConnection,
  frontMatterVersion,
  planFilter,
  planValves,
} from "./connect.ts";

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
      planValves(null, { asksUrl: asks("https://asks.example.com"), authSecret: "s".repeat(40) }),
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
        authSecret: "s".repeat(40),
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
        authSecret: "s".repeat(40),
      }),
    ).toMatchObject({ set: ["auth_secret"], kept: ["asks_url", "model_ids"] });
    expect(
      planValves(
        { asks_url: "http://127.0.0.1:3000" },
        { asksUrl: asks("http://10.0.0.5:3000", false), authSecret: "x" },
      ),
    ).toMatchObject({
      valves: { asks_url: "http://10.0.0.5:3000" },
      set: ["asks_url", "auth_secret"],
    });
  });

  it("finds the OpenAI connection to this Gateway's /v1, and a session header that would override one session per reply", () => {
    const config = (urls: string[], configs: Record<string, Record<string, unknown>> = {}) => ({
      ENABLE_OPENAI_API: true,
      OPENAI_API_BASE_URLS: urls,
      OPENAI_API_KEYS: urls.map(() => "k"),
      OPENAI_API_CONFIGS: configs,
    });
    expect(findConnection(config(["https://api.openai.com/v1"]), "http://gw:18789/v1")).toBeNull();
    expect(
      findConnection(
        config(["https://api.openai.com/v1", "http://GW:18789/v1/"]),
        "http://gw:18789/v1",
      ),
    ).toEqual({ index: 1, pinsSessions: false });
    expect(
      findConnection(
        config(["http://gw:18789/v1"], {
          "0": { headers: { "X-OpenClaw-Session-Key": "agent:main:openwebui:{{CHAT_ID}}" } },
        }),
        "http://gw:18789/v1",
      ),
    ).toEqual({ index: 0, pinsSessions: true });
  });

  it("takes its flags, or the environment, and says what is missing", () => {
    expect(
      parseArgs(["--url", "https://chat.example.com", "--api-key", "sk-1", "--add-connection"], {}),
    ).toEqual({ url: "https://chat.example.com", apiKey: "sk-1", addConnection: true });
    expect(parseArgs([], { OPENWEBUI_URL: "http://owui:8080", OPENWEBUI_API_KEY: "sk-2" })).toEqual(
      { url: "http://owui:8080", apiKey: "sk-2", addConnection: false },
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
