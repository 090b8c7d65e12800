// `npm run screenshots`: pictures of the widget and the dashboard (light, dark, phone width, Hebrew,
// the secret dialog, the history, the inbox on a desktop and a phone, its keyboard help and filters) for people to look at, written to test-results/screenshots/*.png.
// Not a test: what they show is asserted by the e2e tests. Starts a real Gateway on the stub model
// (or reuses OPENCLAW_GATEWAY_REUSE_URL / _TOKEN / OPENCLAW_STUB_MODEL_REUSE_URL), the production
// build (built first when stale), Chromium, and a stand-in Open WebUI host page.
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { startHarness } from "../setup/global-gateway.ts";
import { type AppServer, startAppServer } from "../support/app-server.ts";
import { launchBrowser, openPage } from "../support/browser.ts";
import { connectOperator, type OperatorConnection } from "../support/gateway-client.ts";
import { TEST_AGENT } from "../support/on-gateway.ts";
import {
  chatOfReplies,
  openChat,
  type OpenWebuiHost,
  startOpenWebuiHost,
} from "../support/openwebui-host/index.ts";
import { stubScript } from "../support/stub-model.ts";
import {
  createQuestion,
  type HostPage,
  requestApproval,
  SCREENSHOT_DIR,
  screenshotPath,
  sessionKeyFor,
  startHostPage,
  UI_TIMEOUT,
  uniqueChat,
  waitAnswer,
} from "./fixtures.ts";

type Shots = {
  app: AppServer;
  browser: Browser;
  requester: OperatorConnection;
  host: HostPage;
  openWebui: OpenWebuiHost;
};

const embedUrl = async ({ app }: Shots, chat: string) =>
  `${app.url}/embed/chat/${chat}?token=${await app.mintToken("owner", chat)}`;
const dashboardUrl = async ({ app }: Shots) => `${app.url}/?token=${await app.mintToken("owner")}`;
/** The dashboard with a printed owner link: it may make device links. */
const ownerLinkUrl = async ({ app }: Shots) => `${app.url}/?token=${await app.ownerLink()}`;

async function openWidget(
  shots: Shots,
  chat: string,
  options: { colorScheme?: "light" | "dark"; width?: number } = {},
): Promise<Page> {
  const { page } = await openPage(shots.browser, {
    colorScheme: options.colorScheme ?? "light",
    viewport: { width: options.width ?? 720, height: 900 },
  });
  await page.goto(await embedUrl(shots, chat));
  await page
    .locator('main[data-widget="live"][data-pending="0"]')
    .waitFor({ state: "attached", timeout: UI_TIMEOUT });
  return page;
}

/** Widget with a pending question (light, and inside the host page), and the "moved" notice. */
async function widgetQuestion(shots: Shots): Promise<void> {
  const chat = uniqueChat("shot-q");
  const page = await openWidget(shots, chat);
  // A finished one first, so the ❓ Ask User record shows above the pending card.
  const done = await createQuestion(shots.requester, chat, [
    {
      questionId: "env",
      header: "Environment",
      question: "Deploy to which environment?",
      options: [{ label: "Staging" }, { label: "Production" }],
    },
  ]);
  const doneAnswer = waitAnswer(shots.requester, done);
  await page.getByRole("radio", { name: /^Staging/ }).click({ timeout: UI_TIMEOUT });
  await page.getByRole("button", { name: "Submit" }).click();
  await doneAnswer;
  await createQuestion(shots.requester, chat, [
    {
      questionId: "db",
      header: "Database",
      question: "Which database should the new service use?",
      options: [
        { label: "Postgres", description: "Needs a server; best for concurrent writes" },
        { label: "SQLite", description: "A single file next to the app" },
        { label: "MySQL" },
      ],
    },
  ]);
  await page.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
  await page.screenshot({ path: screenshotPath("widget-question-light"), fullPage: true });

  // The same chat, framed the way Open WebUI frames it (the card moves to this newer view).
  const { page: hostPage } = await openPage(shots.browser, {
    viewport: { width: 760, height: 700 },
  });
  await hostPage.goto(shots.host.urlFor(await embedUrl(shots, chat)));
  await hostPage
    .frameLocator("iframe#widget")
    .getByRole("radio", { name: /^Postgres/ })
    .waitFor({ timeout: UI_TIMEOUT });
  await hostPage.waitForFunction(
    () => ((window as unknown as { __heights: number[] }).__heights.at(-1) ?? 0) > 200,
    undefined,
    { timeout: UI_TIMEOUT },
  );
  await hostPage.screenshot({ path: screenshotPath("widget-in-host-page"), fullPage: true });
  await page.getByText("Moved to a newer tab").waitFor({ timeout: UI_TIMEOUT });
  await page.screenshot({ path: screenshotPath("widget-moved"), fullPage: true });
  await page.context().close();
  await hostPage.context().close();
}

/** Widget with three steps and an approval (dark, 360 px), and Hebrew (right to left). */
async function widgetStepsAndHebrew(shots: Shots): Promise<void> {
  const chat = uniqueChat("shot-dark");
  const page = await openWidget(shots, chat, { colorScheme: "dark", width: 360 });
  await createQuestion(shots.requester, chat, [
    {
      questionId: "db",
      header: "Database",
      question: "Which database?",
      options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
    },
    {
      questionId: "tags",
      header: "Toppings",
      question: "Which toppings?",
      multiSelect: true,
      options: [{ label: "Cheese" }, { label: "Mushrooms" }, { label: "Olives" }],
    },
    {
      questionId: "go",
      header: "Go ahead",
      question: "Start now?",
      options: [{ label: "Yes" }, { label: "Later" }],
    },
  ]);
  // Left pending: the script's Gateway goes away with it.
  void requestApproval(shots.requester, chat, {
    title: "Run a shell command",
    description: "The agent wants to clean the build folders before deploying.",
    detail: `rm -rf ./dist ./build ./.cache\n${"find . -name '*.log' -delete\n".repeat(12)}`,
    severity: "critical",
    toolName: "shell.run",
    pluginId: "safety-gate",
  });
  await page.getByRole("button", { name: "Deny" }).waitFor({ timeout: UI_TIMEOUT });
  // A click on an option goes on to the next question, as in Open WebUI's own card.
  await page.getByRole("radio", { name: /^Postgres/ }).click();
  await page.getByRole("checkbox", { name: /^Cheese/ }).check();
  await page.getByRole("checkbox", { name: /^Olives/ }).check();
  await page.screenshot({ path: screenshotPath("widget-steps-approval-dark-360"), fullPage: true });
  await page.context().close();

  const hebrew = uniqueChat("shot-he");
  const rtl = await openWidget(shots, hebrew, { width: 420 });
  await createQuestion(shots.requester, hebrew, [
    {
      questionId: "db",
      header: "מסד נתונים",
      question: "באיזה מסד נתונים להשתמש?",
      options: [
        { label: "Postgres", description: "דורש שרת" },
        { label: "SQLite", description: "קובץ יחיד" },
      ],
    },
  ]);
  await rtl.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
  await rtl.screenshot({ path: screenshotPath("widget-hebrew-rtl"), fullPage: true });
  await rtl.context().close();
}

/** Widget with the masked secret dialog (needs the stub model: the agent's `secrets` tool asks). */
async function widgetSecret(shots: Shots): Promise<void> {
  const chat = uniqueChat("shot-secret");
  const page = await openWidget(shots, chat, { width: 480 });
  await shots.requester.request("chat.send", {
    sessionKey: sessionKeyFor(chat),
    idempotencyKey: randomUUID(),
    message: stubScript({
      tool: {
        id: "secrets",
        args: {
          action: "request",
          name: "GITHUB_TOKEN",
          reason: "To open the pull request for you",
          allowedHosts: ["api.github.com"],
          timeoutSeconds: 120,
        },
      },
    }),
  });
  const dialog = page.getByRole("dialog", { name: "GITHUB_TOKEN" });
  await dialog.waitFor({ timeout: 60_000 });
  await dialog.getByLabel("GITHUB_TOKEN").fill("not-a-real-token");
  await page.screenshot({ path: screenshotPath("widget-secret-dialog"), fullPage: true });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await page.getByText("Secret request cancelled").waitFor({ timeout: UI_TIMEOUT });
  await page.context().close();
}

/** Dashboard (light, and dark at 360 px), and its history. */
async function dashboard(shots: Shots): Promise<void> {
  const chatA = uniqueChat("shot-dash-a");
  const chatB = uniqueChat("shot-dash-b");
  await createQuestion(shots.requester, chatA, [
    {
      questionId: "db",
      header: "Database",
      question: "Which database?",
      options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
    },
  ]);
  void requestApproval(shots.requester, chatB, {
    title: "Send an email to the team",
    description: "The agent wants to email 14 people.",
    severity: "warning",
    toolName: "mail.send",
    pluginId: "mailer",
  });
  const finished = await createQuestion(shots.requester, chatB, [
    {
      questionId: "tone",
      header: "Tone",
      question: "Formal or casual?",
      options: [{ label: "Formal" }, { label: "Casual" }],
    },
  ]);
  const finishedAnswer = waitAnswer(shots.requester, finished);

  // A reused Gateway may hold other asks too: the shots are of the viewport, scrolled to these.
  const { page } = await openPage(shots.browser, { viewport: { width: 1280, height: 1000 } });
  await page.goto(await dashboardUrl(shots));
  const ofChat = (chat: string) => page.getByRole("listitem").filter({ hasText: chat });
  await ofChat(chatA).first().waitFor({ timeout: UI_TIMEOUT });
  await ofChat(chatB).filter({ hasText: "Send an email" }).waitFor({ timeout: UI_TIMEOUT });
  await ofChat(chatB).filter({ hasText: "Formal or casual?" }).locator("[data-row-toggle]").click();
  await ofChat(chatB)
    .filter({ hasText: "Formal or casual?" })
    .getByRole("radio", { name: /^Casual/ })
    .click();
  await ofChat(chatB)
    .filter({ hasText: "Formal or casual?" })
    .getByRole("button", { name: "Submit" })
    .click();
  await finishedAnswer;
  await ofChat(chatB)
    .filter({ hasText: "Send an email" })
    .getByRole("checkbox", { name: "Select: Send an email to the team" })
    .check();
  await page.screenshot({ path: screenshotPath("dashboard-light-top") });
  await ofChat(chatA).first().locator("[data-row-toggle]").click();
  await ofChat(chatA).first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath("dashboard-light") });

  await page.getByRole("tab", { name: /History/ }).click();
  await page.getByRole("row").filter({ hasText: chatB }).first().waitFor({ timeout: UI_TIMEOUT });
  await page.screenshot({ path: screenshotPath("dashboard-history") });
  await page.context().close();

  const { page: phone } = await openPage(shots.browser, {
    colorScheme: "dark",
    viewport: { width: 360, height: 800 },
  });
  await phone.goto(await dashboardUrl(shots));
  await phone
    .getByRole("listitem")
    .filter({ hasText: chatA })
    .first()
    .waitFor({ timeout: UI_TIMEOUT });
  await phone.screenshot({ path: screenshotPath("dashboard-dark-360-top") });
  await phone
    .getByRole("listitem")
    .filter({ hasText: chatB })
    .filter({ hasText: "Send an email" })
    .scrollIntoViewIfNeeded();
  await phone.screenshot({ path: screenshotPath("dashboard-dark-360") });
  await phone.context().close();
}

/**
 * The inbox with a question, a critical plugin approval, a routine one and a destructive exec command
 * pending at once: on a desktop (the exec row open in place), on a phone (390 px), the keyboard help,
 * the history's filters, and a device link's QR code.
 */
async function inbox(shots: Shots): Promise<void> {
  const chat = uniqueChat("shot-inbox");
  const key = sessionKeyFor(chat);
  await createQuestion(shots.requester, chat, [
    {
      questionId: "db",
      header: "Database",
      question: "Which database should the new service use?",
      options: [{ label: "Postgres", description: "needs a server" }, { label: "SQLite" }],
    },
  ]);
  // Left pending: the script's Gateway goes away with them.
  void requestApproval(shots.requester, chat, {
    title: "Pay invoice INV-2291",
    description: "Pay 49.99 EUR to Stripe for the staging cluster.",
    severity: "critical",
    toolName: "payments.pay",
    pluginId: "billing",
  });
  void requestApproval(shots.requester, chat, {
    title: "Post the release notes",
    description: "Publish v2.4 notes to the team channel.",
    severity: "warning",
    toolName: "chat.post",
    pluginId: "announcer",
  });
  const exec = shots.requester.request(
    "exec.approval.request",
    {
      command: "rm -rf ./build && npm run deploy -- --prod",
      host: "gateway",
      cwd: "/srv/app",
      agentId: TEST_AGENT,
      sessionKey: key,
      timeoutMs: 1_800_000,
    },
    { timeoutMs: 1_830_000 },
  );
  exec.catch(() => {});

  const rowsOf = (page: Page) => page.locator("[data-inbox-row]").filter({ hasText: chat });
  const { page } = await openPage(shots.browser, { viewport: { width: 1280, height: 900 } });
  await page.goto(await ownerLinkUrl(shots));
  await rowsOf(page).filter({ hasText: "Run rm -rf" }).waitFor({ timeout: UI_TIMEOUT });
  await rowsOf(page).nth(3).waitFor({ timeout: UI_TIMEOUT });
  await rowsOf(page).filter({ hasText: "Run rm -rf" }).locator("[data-row-toggle]").click();
  await rowsOf(page).first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath("inbox-desktop-1280") });
  await page.locator("body").press("?");
  await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor({ timeout: UI_TIMEOUT });
  await page.screenshot({ path: screenshotPath("inbox-keyboard-help") });
  await page.keyboard.press("Escape");
  await page.getByRole("tab", { name: /History/ }).click();
  await page.getByLabel("Kind").selectOption("question");
  await page.screenshot({ path: screenshotPath("history-filtered") });
  await page.getByRole("tab", { name: "Devices" }).click();
  await page.getByLabel("Device name").fill("Alice's phone");
  await page.getByRole("button", { name: "Create device link" }).click();
  await page
    .getByRole("img", { name: "QR code: device link for Alice's phone" })
    .waitFor({ timeout: UI_TIMEOUT });
  await page.screenshot({ path: screenshotPath("devices-qr") });
  await page.context().close();

  const { page: phone } = await openPage(shots.browser, {
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  await phone.goto(await dashboardUrl(shots));
  await rowsOf(phone).nth(3).waitFor({ timeout: UI_TIMEOUT });
  await rowsOf(phone).first().scrollIntoViewIfNeeded();
  await phone.screenshot({ path: screenshotPath("inbox-phone-390") });
  await rowsOf(phone).filter({ hasText: "Which database" }).locator("[data-row-toggle]").click();
  await rowsOf(phone)
    .filter({ hasText: "Which database" })
    .getByRole("radio", { name: /^Postgres/ })
    .scrollIntoViewIfNeeded();
  await phone.screenshot({ path: screenshotPath("inbox-phone-390-open") });
  await phone.context().close();
}

/** A 12-reply chat in the Open WebUI host, one widget per reply: one open card, in the last reply, light and dark. */
async function openWebuiChat(shots: Shots): Promise<void> {
  const chat = uniqueChat("shot-chat");
  const writtenAt = Date.now() - 3600_000;
  const embeds = await Promise.all(
    Array.from({ length: 12 }, async (_, index) => {
      const token = await shots.app.mintToken("owner", chat, {
        msg: `a${index + 1}`,
        mts: writtenAt + index * 60_000,
      });
      return `${shots.app.url}/embed/chat/${chat}?token=${token}`;
    }),
  );
  shots.openWebui.setChat(
    chat,
    chatOfReplies(12, (n) => [embeds[n - 1]!]),
  );
  await createQuestion(shots.requester, chat);
  for (const colorScheme of ["light", "dark"] as const) {
    const { page } = await openPage(shots.browser, {
      colorScheme,
      viewport: { width: 900, height: 900 },
    });
    await openChat(page, shots.openWebui, chat);
    const last = page.frameLocator("#a12-embeds-container iframe");
    await last.getByRole("radio", { name: /^Postgres/ }).waitFor({ timeout: UI_TIMEOUT });
    // Settled: every other reply's widget reported 0 px.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll<HTMLIFrameElement>(".embeds-container iframe")]
          .slice(0, -1)
          .every((frame) => frame.getBoundingClientRect().height === 0),
      undefined,
      { timeout: UI_TIMEOUT },
    );
    await page.locator("#a12-embeds-container").scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath(`openwebui-chat-12-replies-${colorScheme}`) });
    await page.context().close();
  }
}

async function main(): Promise<void> {
  const reuse = process.env.OPENCLAW_GATEWAY_REUSE_URL;
  const harness = reuse ? null : await startHarness();
  const gatewayUrl = reuse ?? harness!.gatewayUrl;
  const gatewayToken = reuse
    ? (process.env.OPENCLAW_GATEWAY_REUSE_TOKEN ?? "")
    : harness!.gatewayToken;
  const stubModelUrl = reuse
    ? (process.env.OPENCLAW_STUB_MODEL_REUSE_URL ?? "")
    : harness!.stubModelUrl;
  const host = await startHostPage();
  const openWebui = await startOpenWebuiHost();
  const stops: (() => Promise<unknown>)[] = [
    () => host.stop(),
    () => openWebui.stop(),
    async () => harness?.stop(),
  ];
  try {
    const app = await startAppServer({
      gatewayUrl,
      gatewayToken,
      env: { OPENWEBUI_ORIGINS: `${host.origin},${openWebui.origin}`, OPENWEBUI_URL: host.origin },
    });
    stops.unshift(() => app.stop());
    const browser = await launchBrowser({ actTokenFor: (token) => app.actTokenFor(token) });
    stops.unshift(() => browser.close());
    const requester = await connectOperator({
      url: gatewayUrl,
      token: gatewayToken,
      displayName: "requester",
    });
    stops.unshift(() => requester.stop());
    const shots: Shots = { app, browser, requester, host, openWebui };
    await openWebuiChat(shots);
    await widgetQuestion(shots);
    await widgetStepsAndHebrew(shots);
    if (stubModelUrl) await widgetSecret(shots);
    else console.log("no stub model: skipping the secret dialog");
    await dashboard(shots);
    await inbox(shots);
    console.log(`screenshots written to ${SCREENSHOT_DIR}`);
  } finally {
    for (const stop of stops)
      await stop().catch((error: unknown) => console.error(`stopping: ${String(error)}`));
  }
}

await main();
