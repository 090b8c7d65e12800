import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnswerAck } from "../../lib/protocol.ts";
import { actionTokenKey, mintActionToken } from "../auth/action-tokens.ts";
import { createPushRoutes } from "./routes.ts";
import { SqlitePushStore } from "./sqlite-push-store.ts";
import { subscriptionKey } from "./subscription-signature.ts";

const SECRET = "s".repeat(40);
const NOW = 1_700_000_000_000;
const tokenKey = actionTokenKey(SECRET);
const dir = mkdtempSync(path.join(tmpdir(), "push-routes-"));
const store = new SqlitePushStore(path.join(dir, "push.sqlite"), {
  signingKey: subscriptionKey(SECRET),
  log: () => {},
});
/** What the broker answers next: the routes' one way to a decision. */
const answers: AnswerAck[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  const routes = createPushRoutes({
    store,
    allowPrivateEndpoints: false,
    publicKey: "public-key",
    tokenKey,
    now: () => NOW,
    ownerOf: async () => null,
    isKnownKid: async () => true,
    isOwnerLinkKid: async () => true,
    owners: new Set(["owner"]),
    answer: async () => answers.shift()!,
    log: () => {},
  });
  server = createServer((request, response) =>
    routes.handles(request) ? routes.handle(request, response) : response.writeHead(404).end(),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function act(
  body: object,
): Promise<{ status: number; body: { ok: boolean; error?: { code: string; message: string } } }> {
  const response = await fetch(`${url}/push/actions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { ok: boolean } };
}

describe("POST /push/actions", () => {
  it("22.8 a decision the broker could not take because Redis went away is 503, try again, and the token is not used up by it", async () => {
    const token = await mintActionToken(tokenKey, {
      askId: "a1",
      decision: "allow-once",
      owner: "owner",
      kid: "owner-kid",
      expiresAt: NOW + 60_000,
    });
    answers.push({
      ok: false,
      error: { code: "UNAVAILABLE", message: "The answer was not taken: Redis is unreachable." },
    });
    expect(await act({ askId: "a1", decision: "allow-once", token })).toMatchObject({
      status: 503,
      body: {
        ok: false,
        error: { code: "UNAVAILABLE", message: expect.stringMatching(/Try again/) },
      },
    });
    answers.push({ ok: true, status: "answered" });
    expect(await act({ askId: "a1", decision: "allow-once", token })).toEqual({
      status: 200,
      body: { ok: true, status: "answered" },
    });
    // Taken once: now it is used.
    expect(await act({ askId: "a1", decision: "allow-once", token })).toMatchObject({
      status: 409,
      body: { error: { code: "ALREADY_RESOLVED" } },
    });
  });
});
