// The owner link (issue 11, item 15). Before: the printed dashboard link was valid 7 days, a new one
// was minted only by restarting, and none could be revoked. Now: 24 h by default (OWNER_LINK_HOURS),
// `npm run owner-link` mints one, and `npm run owner-link -- --revoke` revokes every earlier owner link
// (they carry the store's key id, `kid`), also while the server runs. Embed tokens and Open WebUI
// session tokens carry no kid and are unaffected. Issue 22: so are the device links minted through an
// owner link, whichever owner link it was, while those printed by `--device` stay.
import { spawn } from "node:child_process";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { errorMessage } from "../../lib/error-message.ts";
import { PROJECT_ROOT } from "../support/app-server.ts";
import { newChat, TEST_AGENT, useTabs } from "../support/on-gateway.ts";
import {
  openTab,
  startTestServer,
  TEST_AUTH_SECRET,
  type TestServer,
  waitConnected,
} from "../support/tabs.ts";

const { openOn, tabs } = useTabs();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    gatewayUrl: inject("gatewayUrl"),
    gatewayToken: inject("gatewayToken"),
    env: { AGENT_ID: TEST_AGENT },
  });
  await waitConnected(server);
});

afterAll(() => server.dispose());

/** `npm run owner-link [-- args]` against the running server's DATA_DIR; resolves with the printed token. */
function ownerLinkCommand(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string; token: string | null }> {
  const child = spawn(process.execPath, ["server/owner-link.ts", ...args], {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      DATA_DIR: server.dataDir,
      AUTH_SECRET: TEST_AUTH_SECRET,
      OWNER_USERS: "owner",
      PUBLIC_URL: "https://asks.example.com",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve) =>
    child.once("exit", (code) =>
      resolve({
        code,
        output,
        token:
          /^Dashboard \(owner "owner", valid \d+ h\): https:\/\/asks\.example\.com\/\?token=(\S+)$/m.exec(
            output,
          )?.[1] ?? null,
      }),
    ),
  );
}

async function connectError(token: string): Promise<string> {
  try {
    const tab = await openTab(server.url, token);
    tab.close();
    return "connected";
  } catch (error) {
    return errorMessage(error);
  }
}

describe("owner links", () => {
  it("npm run owner-link mints a dashboard link valid 24 h by default, carrying the store's key id", async () => {
    const minted = await ownerLinkCommand([]);
    expect(minted.code).toBe(0);
    expect(minted.output).toMatch(/valid 24 h/);
    const claims = decodeJwt(minted.token!);
    expect(claims.exp! - claims.iat!).toBe(24 * 3600);
    expect(claims.sub).toBe("owner");
    expect(decodeProtectedHeader(minted.token!).kid).toEqual(expect.any(String));
    const tab = await openTab(server.url, minted.token!);
    tabs.push(tab);
    expect(await tab.send("asks:list", {})).toMatchObject({ ok: true });

    const shorter = await ownerLinkCommand([], { OWNER_LINK_HOURS: "2" });
    const short = decodeJwt(shorter.token!);
    expect(short.exp! - short.iat!).toBe(2 * 3600);
  });

  it("a revoked owner link is refused at connect, while the server runs; the new link, embed tokens and tokens without a kid still work", async () => {
    const before = await ownerLinkCommand([]);
    const chatId = newChat();
    const embed = await server.token("alice", chatId);
    const plain = await server.token("owner");
    const revoked = await ownerLinkCommand(["--revoke"]);
    expect(revoked.code).toBe(0);
    expect(revoked.output).toMatch(/revoked/);
    expect(decodeProtectedHeader(revoked.token!).kid).not.toBe(
      decodeProtectedHeader(before.token!).kid,
    );

    expect(await connectError(before.token!)).toMatch(/revoked/);
    expect(await connectError(revoked.token!)).toBe("connected");
    expect(await connectError(plain)).toBe("connected");
    await openOn(server, chatId, "alice", chatId);
    expect(await connectError(embed)).toBe("connected");
  });

  it("a token with a kid the store never issued is refused", async () => {
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256", kid: "made-up" })
      .setSubject("owner")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(TEST_AUTH_SECRET));
    expect(await connectError(forged)).toMatch(/revoked/);
  });

  it("an unknown argument is refused with one line and a non-zero exit", async () => {
    const run = await ownerLinkCommand(["--revoke-all"]);
    expect(run.code).toBe(1);
    expect(run.output.trim().split("\n")).toEqual([
      expect.stringMatching(/unknown argument --revoke-all: usage: npm run owner-link/),
    ]);
  });

  it("22.1 a leaked owner link's device links end with npm run owner-link -- --revoke: refused at connect, listing and minting; a device printed by --device stays", async () => {
    const leaked = (await ownerLinkCommand([])).token!;
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return {
        status: response.status,
        body: (await response.json()) as {
          devices?: { kid: string; mintedBy: unknown }[];
          url?: string;
          kid?: string;
        },
      };
    };
    const minted = await call("POST", "/devices", leaked, { name: "Attacker's phone" });
    expect(minted.status).toBe(201);
    const deviceToken = new URL(minted.body.url!).searchParams.get("token")!;
    expect((await call("GET", "/devices", leaked)).body.devices).toContainEqual(
      expect.objectContaining({
        kid: minted.body.kid,
        mintedBy: { kind: "owner-link", kid: decodeProtectedHeader(leaked).kid },
      }),
    );
    const kept = /: (https:\/\/\S+)$/m.exec(
      (await ownerLinkCommand(["--device", "Kitchen tablet"])).output,
    )?.[1];
    const keptToken = new URL(kept!).searchParams.get("token")!;
    expect(await connectError(deviceToken)).toBe("connected");

    const revoked = await ownerLinkCommand(["--revoke"]);
    expect(revoked.code).toBe(0);
    expect(revoked.output).toMatch(
      /^Every earlier owner link is revoked, and the \d+ device links? minted through them\.$/m,
    );
    expect(await connectError(deviceToken)).toMatch(/revoked/);
    expect((await call("GET", "/devices", deviceToken)).status).toBe(403);
    expect((await call("POST", "/devices", deviceToken, { name: "Renewed" })).status).toBe(403);
    expect(await connectError(keptToken)).toBe("connected");
    const listed = (await call("GET", "/devices", revoked.token!)).body.devices!;
    expect(listed.map((device) => device.kid)).not.toContain(minted.body.kid);
    expect(listed).toContainEqual(expect.objectContaining({ mintedBy: { kind: "command-line" } }));
  });

  it("22.10 npm run owner-link -- --device stores the name normalized as the dashboard does, and refuses one that is left empty", async () => {
    const printed = await ownerLinkCommand(["--device", "\u202e  Kitchen\ttablet\u200f\n"]);
    expect(printed.code).toBe(0);
    expect(printed.output).toMatch(/^Device link for "Kitchen tablet" \(owner "owner", until /m);
    const empty = await ownerLinkCommand(["--device", "\u202e\t\u2066\u200f "]);
    expect(empty.code).toBe(1);
    expect(empty.output.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^owner-link: --device must name the device: usage: npm run owner-link/,
      ),
    ]);
  });
});
