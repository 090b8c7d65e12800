import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { PROJECT_ROOT, startAppServer } from "../support/app-server.ts";
import { round } from "./stats.ts";

/**
 * Page weight: the gzipped JavaScript a route makes the browser load before it is interactive,
 * measured on what the production server really serves:
 *   1. start the product (`node server/main.ts` via test/support/app-server.ts, which builds first
 *      when the build is missing or older than the UI sources; E2E_SKIP_BUILD=1 measures the build
 *      that is there), with no Gateway;
 *   2. GET the dashboard (`/`) and the widget (`/embed/chat/<id>`) HTML; the idle widget (an older
 *      reply's) is weighed whole, HTML included (see weighIdleWidget);
 *   3. every `<script src>` (except `nomodule` ones, which modern browsers skip) and every
 *      `<link rel="modulepreload">` / `<link rel="preload" as="script">` is fetched and gzipped at
 *      zlib's default level (what a server compressing on the fly sends); kB = 1000 bytes.
 * The baseline is the JS every page of this build loads: the framework chunks Next.js lists as
 * `rootMainFiles` in `.next/build-manifest.json` (React, the App Router runtime), fetched and gzipped
 * the same way from the same server. A page's target is the baseline plus its own budget.
 * Inline scripts (Next's RSC payload) are reported apart; chunks a page imports later (dynamic
 * `import()`) are not first-load JS and are not counted.
 */

export type RouteWeight = { path: string; kB: number; rawKB: number; inlineKB: number; files: FileWeight[] };
/** The idle widget page (an older reply's): its HTML and everything it loads, gzipped. */
export type IdlePageWeight = { kB: number; rawKB: number; htmlGzipBytes: number; files: FileWeight[] };
export type PageWeightResult = {
  baselineKB: number;
  widgetKB: number;
  widgetIdleKB: number;
  widgetIdle: IdlePageWeight;
  dashboardKB: number;
  baseline: FileWeight[];
  widget: RouteWeight;
  dashboard: RouteWeight;
};
type FileWeight = { url: string; bytes: number; gzipBytes: number };

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

async function weighFile(url: URL, loadedBy: string): Promise<FileWeight> {
  const script = await fetch(url, { headers: { "accept-encoding": "identity" } });
  if (!script.ok) throw new Error(`${loadedBy} loads ${url.pathname}, which answered ${script.status}`);
  const bytes = Buffer.from(await script.arrayBuffer());
  return { url: url.pathname, bytes: bytes.length, gzipBytes: gzipSync(bytes).length };
}

const kB = (files: FileWeight[], key: "bytes" | "gzipBytes") => round(files.reduce((total, file) => total + file[key], 0) / 1000, 1);

async function weigh(base: string, pagePath: string): Promise<RouteWeight> {
  const page = new URL(pagePath, base);
  const response = await fetch(page);
  if (!response.ok) throw new Error(`GET ${pagePath} answered ${response.status}`);
  const html = await response.text();
  const { sources, inline } = scriptsOf(html);
  if (sources.length === 0) throw new Error(`GET ${pagePath} loads no script: is this the page? ${html.slice(0, 300)}`);
  const files = [];
  for (const source of sources) files.push(await weighFile(new URL(source, page), pagePath));
  const inlineGzip = inline.length > 0 ? gzipSync(inline.join("\n")).length : 0;
  return { path: pagePath, kB: kB(files, "gzipBytes"), rawKB: kB(files, "bytes"), inlineKB: round(inlineGzip / 1000, 1), files };
}

/** The framework chunks every page of the build loads, as the build itself lists them. */
function baselineFiles(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, ".next", "build-manifest.json"), "utf8")) as { rootMainFiles?: string[] };
  if (!manifest.rootMainFiles?.length) throw new Error(".next/build-manifest.json lists no rootMainFiles: not an App Router build?");
  return manifest.rootMainFiles.map((file) => `/_next/${file}`);
}

/**
 * The widget page of a reply that is not the chat's latest: the chat's newest reply is noted first
 * (its page requested), then an older reply's page is fetched, with whatever it loads (scripts,
 * styles, images, frames). With no Gateway it holds no summaries; each summary adds about 0.3 kB.
 */
async function weighIdleWidget(server: { url: string; mintToken(userId: string, chat: string, reply: { msg: string; mts: number }): Promise<string> }): Promise<IdlePageWeight> {
  const chat = "bench-idle-chat";
  const latest = await fetch(new URL(`/embed/chat/${chat}?token=${await server.mintToken("owner", chat, { msg: "a2", mts: 2_000 })}`, server.url));
  await latest.arrayBuffer();
  const page = new URL(`/embed/chat/${chat}?token=${await server.mintToken("owner", chat, { msg: "a1", mts: 1_000 })}`, server.url);
  const response = await fetch(page);
  if (!response.ok) throw new Error(`the idle widget page answered ${response.status}`);
  const html = Buffer.from(await response.arrayBuffer());
  if (html.includes("/_next/")) throw new Error("an older reply's widget page loads the app: it is not the idle page");
  const text = html.toString("utf8");
  const loaded = [...new Set([...text.matchAll(/\b(?:src|href)\s*=\s*"([^"]+)"/gi)].map((match) => match[1]!))];
  const files = [];
  for (const source of loaded) files.push(await weighFile(new URL(source, page), "the idle widget page"));
  const htmlGzipBytes = gzipSync(html).length;
  return {
    kB: round((htmlGzipBytes + files.reduce((total, file) => total + file.gzipBytes, 0)) / 1000, 1),
    rawKB: round((html.length + files.reduce((total, file) => total + file.bytes, 0)) / 1000, 1),
    htmlGzipBytes,
    files,
  };
}

export async function measurePageWeight(): Promise<PageWeightResult> {
  // No Gateway is needed to serve pages: the server keeps retrying an address nothing listens on.
  const server = await startAppServer({ gatewayUrl: "ws://127.0.0.1:9", gatewayToken: "none", waitForGateway: false });
  try {
    const dashboard = await weigh(server.url, "/");
    const widget = await weigh(server.url, "/embed/chat/bench-chat");
    const widgetIdle = await weighIdleWidget(server);
    const baseline = [];
    for (const file of baselineFiles()) baseline.push(await weighFile(new URL(file, server.url), "every page"));
    for (const route of [dashboard, widget]) {
      const missing = baseline.filter((file) => !route.files.some((loaded) => loaded.url === file.url));
      if (missing.length > 0) throw new Error(`${route.path} does not load the baseline chunk(s) ${missing.map((file) => file.url).join(", ")}`);
    }
    return { baselineKB: kB(baseline, "gzipBytes"), widgetKB: widget.kB, widgetIdleKB: widgetIdle.kB, widgetIdle, dashboardKB: dashboard.kB, baseline, widget, dashboard };
  } finally {
    await server.stop();
  }
}
