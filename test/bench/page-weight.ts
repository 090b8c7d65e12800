import { gzipSync } from "node:zlib";
import { startAppServer } from "../support/app-server.ts";
import { round } from "./stats.ts";

/**
 * Page weight: the gzipped JavaScript a route makes the browser load before it is interactive,
 * measured on what the production server really serves, so it follows the build whatever its
 * shape (Next.js pages with their chunks, or HTML shells with one bundle each):
 *   1. start the product (`node server/main.ts` via test/support/app-server.ts, which builds first
 *      when the build is missing or older than the UI sources; E2E_SKIP_BUILD=1 measures the build
 *      that is there), with no Gateway;
 *   2. GET the dashboard (`/`) and the widget (`/embed/chat/<id>`) HTML;
 *   3. every `<script src>` (except `nomodule` ones, which modern browsers skip) and every
 *      `<link rel="modulepreload">` / `<link rel="preload" as="script">` is fetched and gzipped at
 *      zlib's default level (what a server compressing on the fly sends); kB = 1000 bytes.
 * Inline scripts (e.g. Next's RSC payload) are reported apart; chunks a page imports later
 * (dynamic `import()`) are not first-load JS and are not counted.
 */

export type RouteWeight = { path: string; kB: number; rawKB: number; inlineKB: number; files: { url: string; bytes: number; gzipBytes: number }[] };
export type PageWeightResult = { widgetKB: number; dashboardKB: number; widget: RouteWeight; dashboard: RouteWeight };

function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of tag.matchAll(/([a-zA-Z:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    found.set(match[1]!.toLowerCase(), match[2] ?? match[3] ?? match[4] ?? "");
  }
  return found;
}

/** The external scripts a page loads up front, and the size of its inline scripts. */
export function scriptsOf(html: string): { sources: string[]; inline: string[] } {
  const sources: string[] = [];
  const inline: string[] = [];
  for (const match of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    const attrs = attributes(match[1] ?? "");
    const type = attrs.get("type");
    if (type !== undefined && type !== "module" && !/javascript/i.test(type)) continue; // JSON data and the like
    if (attrs.has("nomodule")) continue;
    const src = attrs.get("src");
    if (src) sources.push(src);
    else if ((match[2] ?? "").trim()) inline.push(match[2]!);
  }
  for (const match of html.matchAll(/<link\b([^>]*)>/gi)) {
    const attrs = attributes(match[1] ?? "");
    const rel = attrs.get("rel")?.toLowerCase() ?? "";
    const href = attrs.get("href");
    if (href && (rel === "modulepreload" || (rel === "preload" && attrs.get("as") === "script"))) sources.push(href);
  }
  return { sources: [...new Set(sources)], inline };
}

async function weigh(base: string, pagePath: string): Promise<RouteWeight> {
  const page = new URL(pagePath, base);
  const response = await fetch(page);
  if (!response.ok) throw new Error(`GET ${pagePath} answered ${response.status}`);
  const html = await response.text();
  const { sources, inline } = scriptsOf(html);
  if (sources.length === 0) throw new Error(`GET ${pagePath} loads no script: is this the page? ${html.slice(0, 300)}`);
  const files = [];
  for (const source of sources) {
    const url = new URL(source, page);
    const script = await fetch(url, { headers: { "accept-encoding": "identity" } });
    if (!script.ok) throw new Error(`${pagePath} loads ${url.pathname}, which answered ${script.status}`);
    const bytes = Buffer.from(await script.arrayBuffer());
    files.push({ url: url.pathname, bytes: bytes.length, gzipBytes: gzipSync(bytes).length });
  }
  const gzip = files.reduce((total, file) => total + file.gzipBytes, 0);
  const raw = files.reduce((total, file) => total + file.bytes, 0);
  const inlineGzip = inline.length > 0 ? gzipSync(inline.join("\n")).length : 0;
  return { path: pagePath, kB: round(gzip / 1000, 1), rawKB: round(raw / 1000, 1), inlineKB: round(inlineGzip / 1000, 1), files };
}

export async function measurePageWeight(): Promise<PageWeightResult> {
  // No Gateway is needed to serve pages: the server keeps retrying an address nothing listens on.
  const server = await startAppServer({ gatewayUrl: "ws://127.0.0.1:9", gatewayToken: "none", waitForGateway: false });
  try {
    const dashboard = await weigh(server.url, "/");
    const widget = await weigh(server.url, "/embed/chat/bench-chat");
    return { widgetKB: widget.kB, dashboardKB: dashboard.kB, widget, dashboard };
  } finally {
    await server.stop();
  }
}
