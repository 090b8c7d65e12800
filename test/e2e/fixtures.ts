// Shared pieces of the end-to-end tests: the app, browser and requester every describe starts, unique
// chats, asks created at the real Gateway, and a host page that embeds the widget exactly as Open WebUI does.
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, inject } from "vitest";
import { type AppServer, PROJECT_ROOT, startAppServer } from "../support/app-server.ts";
import { launchBrowser } from "../support/browser.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";
import {
  gatewayOperator,
  type QuestionSpec,
  requestQuestion,
  sessionKeyOf,
  silence,
  TEST_AGENT,
} from "../support/on-gateway.ts";

export { type QuestionSpec, waitAnswer } from "../support/on-gateway.ts";

export const SCREENSHOT_DIR = path.join(PROJECT_ROOT, "test-results", "screenshots");
export const AXE_PATH = path.join(PROJECT_ROOT, "node_modules", "axe-core", "axe.min.js");

/** Generous: the real Gateway, the server and Chromium share two cores with other test files. */
export const UI_TIMEOUT = 30_000;

export function uniqueChat(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export function sessionKeyFor(chatId: string): string {
  return sessionKeyOf(chatId);
}

export type E2e = {
  app: AppServer;
  browser: Browser;
  /** The agent side at the real Gateway ("requester"). */
  requester: OperatorConnection;
  /** The widget of `chat` with an owner's embed token for it. */
  embedUrl(chat: string): Promise<string>;
  /** The dashboard with an owner's token. */
  dashboardUrl(): Promise<string>;
  /** The dashboard with a printed owner link (`npm run owner-link`): it may make device links and turn on push. */
  ownerLinkUrl(): Promise<string>;
};

/**
 * The fixture of an e2e describe (call it inside the describe): before all its tests it starts the
 * app server (the production build) on the real Gateway, Chromium and the requester, and stops them
 * after. With `hostPage`, a stand-in Open WebUI page is started first and allowed to frame the widget.
 * The fields are set once the describe's tests run.
 */
export type E2eOptions = {
  hostPage?: boolean;
  /** More environment for the app server (e.g. OPENWEBUI_URL, AGENT_ID). */ env?: Record<
    string,
    string
  >;
};

export function useE2e(options: E2eOptions & { hostPage: true }): E2e & { host: HostPage };
export function useE2e(options?: E2eOptions & { hostPage?: false }): E2e;
export function useE2e(options: E2eOptions = {}): E2e & { host?: HostPage } {
  const e2e = {
    embedUrl: async (chat: string) =>
      `${e2e.app.url}/embed/chat/${chat}?token=${await e2e.app.mintToken("owner", chat)}`,
    dashboardUrl: async () => `${e2e.app.url}/?token=${await e2e.app.mintToken("owner")}`,
    ownerLinkUrl: async () => `${e2e.app.url}/?token=${await e2e.app.ownerLink()}`,
  } as E2e & { host?: HostPage };
  beforeAll(async () => {
    const gatewayUrl = inject("gatewayUrl");
    const gatewayToken = inject("gatewayToken");
    if (options.hostPage) e2e.host = await startHostPage();
    // The file's own agent on the shared Gateway: it sees no other test file's asks.
    const env = {
      AGENT_ID: TEST_AGENT,
      ...(e2e.host ? { OPENWEBUI_ORIGINS: e2e.host.origin } : {}),
      ...options.env,
    };
    e2e.app = await startAppServer({ gatewayUrl, gatewayToken, env });
    // Each page is the one that sent the widget's reply: its widgets get their act token.
    e2e.browser = await launchBrowser({ actTokenFor: (token) => e2e.app.actTokenFor(token) });
    e2e.requester = await gatewayOperator("requester");
  });
  afterAll(async () => {
    await e2e.browser?.close();
    await e2e.requester?.stop();
    await e2e.app?.stop();
    await e2e.host?.stop();
  });
  return e2e;
}

export const DATABASE_QUESTION: QuestionSpec = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [
    { label: "Postgres", description: "needs a server" },
    { label: "SQLite", description: "a single file" },
  ],
  isOther: true,
};

/** Creates a question at the real Gateway (as an agent's ask_user would) and returns its id. */
export async function createQuestion(
  requester: OperatorConnection,
  chatId: string,
  questions: QuestionSpec[] = [DATABASE_QUESTION],
): Promise<string> {
  const created = await requestQuestion(requester, sessionKeyFor(chatId), {
    questions: questions.map((question) => ({ isOther: true, ...question })),
    agentId: TEST_AGENT,
    timeoutMs: 600_000,
  });
  return created.id;
}

export type ApprovalSpec = {
  title: string;
  description?: string;
  detail?: string;
  severity?: "info" | "warning" | "critical";
  toolName?: string;
  pluginId?: string;
};

/**
 * Requests a plugin approval at the real Gateway. The call stays open until someone decides:
 * the returned promise resolves with the Gateway's answer (`{id, decision, ...}`).
 */
export function requestApproval(
  requester: OperatorConnection,
  chatId: string,
  spec: ApprovalSpec,
  timeoutMs = 300_000,
): Promise<Payload> {
  const pending = requester.request(
    "plugin.approval.request",
    {
      pluginId: spec.pluginId ?? "e2e-plugin",
      title: spec.title,
      description: spec.description ?? "The e2e test wants to run a tool.",
      detail: spec.detail,
      severity: spec.severity ?? "warning",
      toolName: spec.toolName ?? "shell.run",
      agentId: TEST_AGENT,
      sessionKey: sessionKeyFor(chatId),
      timeoutMs,
    },
    { timeoutMs: timeoutMs + 30_000 },
  );
  return silence(pending);
}

export type HostPage = {
  origin: string;
  /**
   * A host page embedding `src` as Open WebUI does (sandbox without allow-same-origin). With
   * `allowForms: false`, as 0.12 frames it when a person turned "Allow forms" off
   * (`iframeSandboxAllowForms`, ResponseMessage.svelte:765): no allow-forms either.
   */
  urlFor(src: string, options?: { allowForms?: boolean }): string;
  stop(): Promise<void>;
};

/**
 * A tiny stand-in for Open WebUI on its own loopback port: the widget is framed exactly like
 * FullHeightIframe.svelte does it (allow-same-origin off), and `iframe:height` messages resize it.
 * Every height message is recorded in `window.__heights`.
 */
export async function startHostPage(): Promise<HostPage> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://host.invalid");
    if (url.pathname !== "/chat") {
      response.writeHead(404).end();
      return;
    }
    const src = url.searchParams.get("src") ?? "about:blank";
    const sandbox = ["allow-scripts", url.searchParams.get("forms") !== "0" && "allow-forms"]
      .concat(["allow-popups", "allow-downloads"])
      .filter(Boolean)
      .join(" ");
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host chat</title>
<style>body{font-family:sans-serif;margin:16px;background:#f4f4f5}iframe{width:100%;border:0;display:block;height:40px}</style></head>
<body>
<p>Assistant: I need to ask you something.</p>
<iframe id="widget" title="Agent questions" sandbox="${sandbox}" src="${escapeAttribute(src)}"></iframe>
<script>
  window.__heights = [];
  window.addEventListener("message", (event) => {
    const frame = document.getElementById("widget");
    if (event.source !== frame.contentWindow || !event.data || event.data.type !== "iframe:height") return;
    window.__heights.push(event.data.height);
    frame.style.height = event.data.height + "px";
  });
</script>
</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    urlFor: (src, options = {}) =>
      `${origin}/chat?src=${encodeURIComponent(src)}${options.allowForms === false ? "&forms=0" : ""}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function escapeAttribute(value: string): string {
  return value.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
}

export type AxeViolation = {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
};

/** Runs axe-core in a page (or frame) and returns the serious and critical violations. */
export async function seriousViolations(target: Page | Frame): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol: the pages' CSP (rightly) refuses an injected <script>.
  if (!(await target.evaluate(() => "axe" in globalThis)))
    await target.evaluate(readFileSync(AXE_PATH, "utf8"));
  const violations = await target.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => ({
        target: node.target,
        failureSummary: node.failureSummary,
      })),
    }));
  });
  return violations.filter(
    (violation) => violation.impact === "serious" || violation.impact === "critical",
  );
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return path.join(SCREENSHOT_DIR, `${name}.png`);
}
