// Shared pieces of the end-to-end tests: unique chats, asks created at the real Gateway, and a host
// page that embeds the widget exactly as Open WebUI does.
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Frame, Page } from "playwright-core";
import { PROJECT_ROOT } from "../support/app-server.ts";
import type { OperatorConnection, Payload } from "../support/gateway-client.ts";

export const SCREENSHOT_DIR = path.join(PROJECT_ROOT, "test-results", "screenshots");
export const AXE_PATH = path.join(PROJECT_ROOT, "node_modules", "axe-core", "axe.min.js");

/** Generous: the real Gateway, the server and Chromium share two cores with other test files. */
export const UI_TIMEOUT = 30_000;

export function uniqueChat(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export function sessionKeyFor(chatId: string): string {
  return `agent:dev:openwebui:${chatId}`;
}

export type QuestionSpec = {
  questionId: string;
  header: string;
  question: string;
  options: { label: string; description?: string }[];
  isOther?: boolean;
  multiSelect?: boolean;
};

export const DATABASE_QUESTION: QuestionSpec = {
  questionId: "db",
  header: "Database",
  question: "Which database?",
  options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite", description: "a single file" }],
  isOther: true,
};

/** Creates a question at the real Gateway (as an agent's ask_user would) and returns its id. */
export async function createQuestion(requester: OperatorConnection, chatId: string, questions: QuestionSpec[] = [DATABASE_QUESTION]): Promise<string> {
  const created = await requester.request<{ id: string }>("question.request", {
    questions: questions.map((question) => ({ isOther: true, ...question })),
    sessionKey: sessionKeyFor(chatId),
    agentId: "dev",
    timeoutMs: 600_000,
  });
  return created.id;
}

/** Waits for the requester's view of how the question ended (`question.waitAnswer`). */
export function waitAnswer(requester: OperatorConnection, id: string): Promise<Payload> {
  const waiting = requester.request("question.waitAnswer", { id }, { timeoutMs: 120_000 });
  // A failed test stops the connection with this still open: that must not become an unhandled rejection.
  waiting.catch(() => {});
  return waiting;
}

export type ApprovalSpec = { title: string; description?: string; detail?: string; severity?: "info" | "warning" | "critical"; toolName?: string; pluginId?: string };

/**
 * Requests a plugin approval at the real Gateway. The call stays open until someone decides:
 * the returned promise resolves with the Gateway's answer (`{id, decision, ...}`).
 */
export function requestApproval(requester: OperatorConnection, chatId: string, spec: ApprovalSpec, timeoutMs = 300_000): Promise<Payload> {
  const pending = requester.request(
    "plugin.approval.request",
    {
      pluginId: spec.pluginId ?? "e2e-plugin",
      title: spec.title,
      description: spec.description ?? "The e2e test wants to run a tool.",
      detail: spec.detail,
      severity: spec.severity ?? "warning",
      toolName: spec.toolName ?? "shell.run",
      agentId: "dev",
      sessionKey: sessionKeyFor(chatId),
      timeoutMs,
    },
    { timeoutMs: timeoutMs + 30_000 },
  );
  pending.catch(() => {});
  return pending;
}

export type HostPage = {
  origin: string;
  /** A host page embedding `src` as Open WebUI does (sandbox without allow-same-origin). */
  urlFor(src: string): string;
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
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host chat</title>
<style>body{font-family:sans-serif;margin:16px;background:#f4f4f5}iframe{width:100%;border:0;display:block;height:40px}</style></head>
<body>
<p>Assistant: I need to ask you something.</p>
<iframe id="widget" title="Agent questions" sandbox="allow-scripts allow-forms allow-popups allow-downloads" src="${escapeAttribute(src)}"></iframe>
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
    urlFor: (src) => `${origin}/chat?src=${encodeURIComponent(src)}`,
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

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] };

/** Runs axe-core in a page (or frame) and returns the serious and critical violations. */
export async function seriousViolations(target: Page | Frame): Promise<AxeViolation[]> {
  await target.addScriptTag({ path: AXE_PATH });
  const violations = await target.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => ({ target: node.target, failureSummary: node.failureSummary })),
    }));
  });
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return path.join(SCREENSHOT_DIR, `${name}.png`);
}
