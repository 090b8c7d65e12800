// The security headers of both pages as the production server sends them, and that Next.js puts the
// response's CSP nonce on every script it renders (so the pages run under `script-src 'self' 'nonce-…'`);
// a path that is not valid percent-encoding is a 400 from the server, not Next.js's silent 500.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type AppServer, startAppServer } from "../support/app-server.ts";

const gatewayUrl = inject("gatewayUrl");
const OPEN_WEBUI = "http://127.0.0.1:3999";

async function page(app: AppServer, path: string): Promise<{ headers: Headers; html: string }> {
  const response = await fetch(`${app.url}${path}`);
  expect(response.status).toBe(200);
  return { headers: response.headers, html: await response.text() };
}

function policyOf(headers: Headers): Map<string, string> {
  const policy = headers.get("content-security-policy") ?? "";
  return new Map(
    policy.split("; ").map((part) => [part.split(" ")[0]!, part.slice(part.indexOf(" ") + 1)]),
  );
}

/** Every <script> tag of the page carries the policy's nonce. */
function expectNoncedScripts(html: string, policy: Map<string, string>): string {
  const nonce = /'nonce-([^']+)'/.exec(policy.get("script-src") ?? "")?.[1];
  expect(nonce).toBeTruthy();
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
  expect(scripts.length).toBeGreaterThan(0);
  for (const script of scripts) expect(script).toContain(`nonce="${nonce}"`);
  return nonce!;
}

describe.skipIf(!gatewayUrl)("security headers of the pages", () => {
  let app: AppServer;
  beforeAll(async () => {
    app = await startAppServer({
      gatewayUrl,
      gatewayToken: inject("gatewayToken"),
      waitForGateway: false,
      env: { OPENWEBUI_ORIGINS: OPEN_WEBUI },
    });
  });
  afterAll(() => app?.stop());

  it("dashboard: strict scripts, never framed", async () => {
    const { headers, html } = await page(app, "/");
    const policy = policyOf(headers);
    expect(policy.get("script-src")).toMatch(/^'self' 'nonce-[A-Za-z0-9+/=]+'$/);
    expect(policy.get("object-src")).toBe("'none'");
    expect(policy.get("base-uri")).toBe("'none'");
    expect(policy.get("frame-ancestors")).toBe("'none'");
    expect(headers.get("x-frame-options")).toBe("DENY");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
    const first = expectNoncedScripts(html, policy);
    // A new nonce for every response.
    const again = await page(app, "/");
    expect(expectNoncedScripts(again.html, policyOf(again.headers))).not.toBe(first);
  });

  it("widget: strict scripts, framed only by the Open WebUI origins", async () => {
    const { headers, html } = await page(app, "/embed/chat/headers-chat");
    const policy = policyOf(headers);
    expect(policy.get("script-src")).toMatch(/^'self' 'nonce-[A-Za-z0-9+/=]+'$/);
    expect(policy.get("object-src")).toBe("'none'");
    expect(policy.get("base-uri")).toBe("'none'");
    expect(policy.get("frame-ancestors")).toBe(OPEN_WEBUI);
    expect(headers.get("x-frame-options")).toBeNull();
    expectNoncedScripts(html, policy);
  });

  it("22.9 a malformed percent-encoding in the path (/embed/chat/%E0%A4%A) is a 400 from the server, for every method; nothing fails in the log", async () => {
    for (const method of ["GET", "HEAD", "POST", "OPTIONS"]) {
      for (const path of ["/embed/chat/%E0%A4%A", "/embed/chat/%E0%A4%A/", "/embed/chat/%C0%80"]) {
        const response = await fetch(`${app.url}${path}`, { method, redirect: "manual" });
        expect(response.status, `${method} ${path}`).toBe(400);
        if (method !== "HEAD")
          expect(await response.text()).toBe("Bad Request: the path is not valid percent-encoding");
        expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      }
    }
    // The widget of a chat whose id needs encoding still loads.
    expect((await fetch(`${app.url}/embed/chat/${encodeURIComponent("चैट/1")}`)).status).toBe(200);
    expect(app.logs().filter((line) => /failed/.test(line))).toEqual([]);
  });
});
