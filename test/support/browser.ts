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

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

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
