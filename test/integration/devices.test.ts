// Device links (issue 14): an owner mints a link for one device (shown as a QR code on the dashboard,
// or printed by `npm run owner-link -- --device`), valid 30 days at most and carrying its own key id;
// the owner lists their devices and revokes one, whose link is then refused at connect while every
// other link keeps working. Only an owner's dashboard token may do any of it, and only an owner link
// may mint or revoke (issue 22): a device link or a token without a key id could not be revoked with
// what it made.
import { spawn } from "node:child_process";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PROJECT_ROOT } from "../support/app-server.ts";
import type { Payload } from "../support/gateway-client.ts";
import { newChat, useTabs } from "../support/on-gateway.ts";
import {
  startTestServer,
  TEST_AUTH_SECRET,
  type TestServer,
  waitConnected,
  watchesAsOwner,
} from "../support/tabs.ts";

const { tabs } = useTabs();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    gatewayUrl: inject("gatewayUrl"),
    gatewayToken: inject("gatewayToken"),
  });
  await waitConnected(server);
});

afterAll(() => server.dispose());

/** Sends `body` as JSON; a string goes as it is (to send what is not JSON). */
async function devices(
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; body: Payload }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined || typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Payload };
}

const connects = (token: string) => watchesAsOwner(server.url, token, tabs);

const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

describe("device links", () => {
  it("signs one device in as the owner for 30 days, with its own key id; listed, then revoked alone", async () => {
    const owner = await server.ownerLink();
    const created = await devices("POST", "/devices", owner, { name: "  Alice's phone " });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      ok: true,
      name: "Alice's phone",
      kid: expect.stringMatching(/^device-/),
    });
    const url = new URL(created.body.url as string);
    expect(url.searchParams.get("device")).toBe("1");
    const token = tokenOf(created.body.url as string);
    const claims = decodeJwt(token);
    expect(claims.sub).toBe("owner");
    expect(claims.exp! - claims.iat!).toBe(30 * 24 * 3600);
    expect(decodeProtectedHeader(token).kid).toBe(created.body.kid);
    expect(await connects(token)).toBe("owner");

    const other = await devices("POST", "/devices", owner, { name: "Tablet" });
    const listed = await devices("GET", "/devices", owner);
    expect((listed.body.devices as { name: string }[]).map((device) => device.name)).toEqual([
      "Tablet",
      "Alice's phone",
    ]);

    expect(await devices("DELETE", `/devices/${created.body.kid}`, owner)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(await connects(token)).toMatch(/revoked/);
    expect(await connects(tokenOf(other.body.url as string))).toBe("owner");
    expect(await connects(owner)).toBe("owner");
    expect((await devices("GET", "/devices", owner)).body.devices).toEqual([
      expect.objectContaining({ name: "Tablet" }),
    ]);
    expect(await devices("DELETE", `/devices/${created.body.kid}`, owner)).toMatchObject({
      status: 404,
      body: { error: { code: "NOT_FOUND" } },
    });
  });

  it("revoking a device removes the push subscriptions made with it (its notifications carry action tokens); the owner link's stay", async () => {
    const owner = await server.ownerLink();
    const ownerKid = decodeProtectedHeader(owner).kid;
    const created = await devices("POST", "/devices", owner, { name: "Lost phone" });
    const keys = { p256dh: "B".repeat(87), auth: "A".repeat(22) };
    const subscribe = (token: string, endpoint: string) =>
      fetch(`${server.url}/push/subscriptions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ endpoint, keys }),
      });
    expect(
      (await subscribe(tokenOf(created.body.url as string), "https://push.example.test/lost-phone"))
        .status,
    ).toBe(201);
    expect((await subscribe(owner, "https://push.example.test/desk")).status).toBe(201);
    const endpoints = async () =>
      (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => [
        record.endpoint,
        record.link.kid,
      ]);
    expect(await endpoints()).toEqual(
      expect.arrayContaining([
        ["https://push.example.test/lost-phone", created.body.kid],
        ["https://push.example.test/desk", ownerKid],
      ]),
    );
    expect((await devices("DELETE", `/devices/${created.body.kid}`, owner)).status).toBe(200);
    expect(await endpoints()).toContainEqual(["https://push.example.test/desk", ownerKid]);
    expect((await endpoints()).map(([endpoint]) => endpoint)).not.toContain(
      "https://push.example.test/lost-phone",
    );
  });

  it("only an owner's dashboard token may mint, list or revoke; a bad name changes nothing", async () => {
    const owner = await server.ownerLink();
    const before = (await devices("GET", "/devices", owner)).body.devices;
    expect((await devices("POST", "/devices", null, { name: "x" })).status).toBe(403);
    expect(
      (await devices("POST", "/devices", await server.token("alice"), { name: "x" })).status,
    ).toBe(403);
    expect((await devices("GET", "/devices", await server.token("owner", newChat()))).status).toBe(
      403,
    );
    expect(await devices("POST", "/devices", owner, { name: "   " })).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID", message: "name: must name the device" } },
    });
    expect((await devices("POST", "/devices", owner, { name: "x".repeat(61) })).status).toBe(400);
    expect(await devices("POST", "/devices", owner, "{ name: Phone")).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID", message: "body is not JSON" } },
    });
    expect(await devices("POST", "/devices", owner, { name: "x".repeat(3 * 1024) })).toMatchObject({
      status: 413,
      body: { error: { code: "INVALID", message: "body too large" } },
    });
    expect((await devices("GET", "/devices", owner)).body.devices).toEqual(before);
    // A device cannot be revoked by someone else's token either.
    const mine = await devices("POST", "/devices", owner, { name: "Phone" });
    expect(
      (await devices("DELETE", `/devices/${mine.body.kid}`, await server.ownerLink("alice")))
        .status,
    ).toBe(403);
    expect(await connects(tokenOf(mine.body.url as string))).toBe("owner");
  });

  it("npm run owner-link -- --device prints a device link and its QR code; the dashboard lists it", async () => {
    const child = spawn(process.execPath, ["server/owner-link.ts", "--device", "Kitchen tablet"], {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "production",
        DATA_DIR: server.dataDir,
        AUTH_SECRET: TEST_AUTH_SECRET,
        OWNER_USERS: "owner",
        PUBLIC_URL: "https://asks.example.com",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0);
    expect(output).toMatch(/[▀▄█]/);
    const url =
      /^Device link for "Kitchen tablet" \(owner "owner", until \S+; revoke it on the dashboard\): (https:\/\/asks\.example\.com\/\?device=1&token=\S+)$/m.exec(
        output,
      )?.[1];
    expect(url).toBeDefined();
    expect(await connects(tokenOf(url!))).toBe("owner");
    const listed = await devices("GET", "/devices", await server.token("owner"));
    expect(listed.body.devices).toContainEqual(
      expect.objectContaining({ name: "Kitchen tablet", mintedBy: { kind: "command-line" } }),
    );
  });

  it("22.1 a device link cannot mint or revoke devices, nor can a token without a key id (an Open WebUI session token); a device link may subscribe its own browser to push, a token without a key id may not", async () => {
    const owner = await server.ownerLink();
    const phone = await devices("POST", "/devices", owner, { name: "Phone" });
    const tablet = await devices("POST", "/devices", owner, { name: "Tablet" });
    const phoneToken = tokenOf(phone.body.url as string);
    const withoutKid = await server.token("owner");
    const before = (await devices("GET", "/devices", owner)).body.devices;

    // A chain of device links would outlive the revocation of the link that began it.
    expect(await devices("POST", "/devices", phoneToken, { name: "Another phone" })).toMatchObject({
      status: 403,
      body: {
        ok: false,
        error: {
          code: "FORBIDDEN",
          message: expect.stringMatching(/^a device link cannot mint device links/),
        },
      },
    });
    expect(await devices("DELETE", `/devices/${tablet.body.kid}`, phoneToken)).toMatchObject({
      status: 403,
      body: {
        error: {
          code: "FORBIDDEN",
          message: expect.stringMatching(/^a device link cannot revoke devices/),
        },
      },
    });
    expect(await devices("POST", "/devices", withoutKid, { name: "Forever phone" })).toMatchObject({
      status: 403,
      body: {
        error: {
          code: "FORBIDDEN",
          message: expect.stringMatching(/without a key id .* cannot mint device links/),
        },
      },
    });
    expect(await devices("DELETE", `/devices/${tablet.body.kid}`, withoutKid)).toMatchObject({
      status: 403,
      body: { error: { code: "FORBIDDEN" } },
    });
    expect((await devices("GET", "/devices", owner)).body.devices).toEqual(before);
    expect(await connects(tokenOf(tablet.body.url as string))).toBe("owner");
    // Each may list; only the owner link is told it may manage.
    expect((await devices("GET", "/devices", owner)).body.canManage).toBe(true);
    expect((await devices("GET", "/devices", phoneToken)).body).toMatchObject({
      ok: true,
      canManage: false,
      devices: before,
    });
    expect((await devices("GET", "/devices", withoutKid)).body.canManage).toBe(false);

    // Push: the phone's own subscription ends with the phone's link; one made without a key id never would.
    const subscribe = (token: string, endpoint: string) =>
      devices("POST", "/push/subscriptions", token, {
        endpoint,
        keys: { p256dh: "B".repeat(87), auth: "A".repeat(22) },
      });
    expect(await subscribe(phoneToken, "https://push.example.test/phone-22-1")).toMatchObject({
      status: 201,
      body: { ok: true },
    });
    expect(await subscribe(withoutKid, "https://push.example.test/forever-22-1")).toMatchObject({
      status: 403,
      body: {
        error: {
          code: "FORBIDDEN",
          message: expect.stringMatching(/without a key id .* cannot subscribe to push/),
        },
      },
    });
    const stored = (await server.push.store.subscriptions(new Set(["owner"]))).map((record) => [
      record.endpoint,
      record.link.kid,
    ]);
    expect(stored).toContainEqual(["https://push.example.test/phone-22-1", phone.body.kid]);
    expect(stored.map(([endpoint]) => endpoint)).not.toContain(
      "https://push.example.test/forever-22-1",
    );
  });

  it("22.6 GET /devices with a malformed stored device record lists the others and logs it once", async () => {
    const owner = await server.ownerLink();
    const good = await devices("POST", "/devices", owner, { name: "Good phone" });
    const db = new DatabaseSync(path.join(server.dataDir, "devices.sqlite"));
    // A value SQLite keeps and a JavaScript number cannot hold, as a hand edit might leave it.
    db.prepare(
      "INSERT INTO devices (kid, owner, name, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    ).run("device-malformed", "owner", "Broken", 2n ** 62n, Date.now() + 3_600_000);
    db.close();
    for (let i = 0; i < 2; i++) {
      const listed = await devices("GET", "/devices", owner);
      expect(listed.status).toBe(200);
      expect((listed.body.devices as { kid: string }[]).map((device) => device.kid)).toContain(
        good.body.kid,
      );
      expect((listed.body.devices as { kid: string }[]).map((device) => device.kid)).not.toContain(
        "device-malformed",
      );
    }
    expect(server.logs.filter((line) => line.includes("device-malformed"))).toEqual([
      expect.stringMatching(/^set aside unreadable stored device device-malformed: createdAt: /),
    ]);
  });

  it("22.10 a device's name is stored normalized (NFC, no control or direction characters, trimmed, capped), and the list says when and through which link each device was made", async () => {
    const owner = await server.ownerLink();
    const ownerKid = decodeProtectedHeader(owner).kid;
    // Right-to-left override, NUL, newlines, an isolate and a mark: the list must not show another name than it holds.
    const disguised = "\u202eenohp s'\u2066ecilA\u2069\u0000\n  Cafe\u0301\u200f ";
    const created = await devices("POST", "/devices", owner, { name: disguised });
    expect(created).toMatchObject({ status: 201, body: { name: "enohp s'ecilA Café" } });
    expect(
      await devices("POST", "/devices", owner, { name: "\u202e\u0000\n\u200f" }),
    ).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID", message: "name: must name the device" } },
    });
    expect(await devices("POST", "/devices", owner, { name: "é".repeat(61) })).toMatchObject({
      status: 400,
      body: { error: { message: "name: must be at most 60 characters" } },
    });
    // 60 characters, whatever their UTF-16 length.
    expect((await devices("POST", "/devices", owner, { name: "📱".repeat(60) })).status).toBe(201);
    const listed = (await devices("GET", "/devices", owner)).body.devices as {
      kid: string;
      name: string;
      createdAt: number;
      mintedBy: unknown;
    }[];
    expect(listed.find((device) => device.kid === created.body.kid)).toEqual({
      kid: created.body.kid,
      name: "enohp s'ecilA Café",
      createdAt: expect.any(Number),
      expiresAt: created.body.expiresAt,
      mintedBy: { kind: "owner-link", kid: ownerKid },
    });
  });
});
