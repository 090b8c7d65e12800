// Playwright fixture: Debian's Chromium, headless (never a downloaded browser), plus a page helper
// that records console output and page errors so tests can assert on them.
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** The act token of the reply a widget's own token names (the server's, as the filter gets it), or null. */
export type ActTokenFor = (widgetToken: string) => Promise<string | null>;

/**
 * With `actTokenFor`, every page of the browser plays the part of the Open WebUI page that sent the
 * reply's message: it answers a widget's `openclaw-asks:act?` (components/embed/use-act-token.ts)
 * with its reply's act token, as the filter's relay does in Open WebUI (ACT_RELAY_JS), so the widget
 * can answer. Without it a widget only views, as one opened from a share.
 */
export async function launchBrowser(options: { actTokenFor?: ActTokenFor } = {}): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const { actTokenFor } = options;
  if (!actTokenFor) return browser;
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (contextOptions) => {
    const context = await newContext(contextOptions);
    await context.exposeBinding(ACT_BINDING, (_source, token: string) => actTokenFor(token));
    await context.addInitScript(ACT_RELAY_STAND_IN);
    return context;
  };
  return browser;
}

const ACT_BINDING = "__openclawAsksTestActFor";

/**
 * Runs in every frame. The host page answers the query of a widget frame, with the act token of the
 * token in that frame's URL; a widget opened on its own is its own host (its `window.parent` is
 * itself), whose token it reads before the page drops it from the address bar.
 */
const ACT_RELAY_STAND_IN = `(() => {
  const ownToken = new URL(location.href).searchParams.get("token");
  window.addEventListener("message", async (event) => {
    const data = event.data;
    if (!data || data.type !== "openclaw-asks:act?" || typeof data.msg !== "string") return;
    const frame = [...document.querySelectorAll("iframe")].find((f) => f.contentWindow === event.source);
    const token = event.source === window ? ownToken : frame && new URL(frame.src).searchParams.get("token");
    const act = token && (await window.${ACT_BINDING}(token));
    if (act) event.source.postMessage({ type: "openclaw-asks:act", msg: data.msg, token: act }, "*");
  });
})();`;

export type RecordedPage = {
  context: BrowserContext;
  page: Page;
  /** `type: text` of every console message, in order, from every frame of the page. */
  console: string[];
  /** Uncaught page errors. */
  errors: string[];
};

/** A fresh context (own cookies and storage) with one page that records its console and errors. */
export async function openPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<RecordedPage> {
  const context = await browser.newContext({ viewport: { width: 900, height: 800 }, ...options });
  const page = await context.newPage();
  const consoleLines: string[] = [];
  const errors: string[] = [];
  page.on("console", (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => errors.push(String(error)));
  return { context, page, console: consoleLines, errors };
}
