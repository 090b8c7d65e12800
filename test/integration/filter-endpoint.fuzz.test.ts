// The Open WebUI filter's endpoint (`POST /openwebui/replies`) under attack and fuzzing, on the real
// server (the real Gateway behind it): only the filter's signature is taken, whatever else a browser or
// an attacker holds, and generated bodies, signed or not, get one clear answer, never a 500, while a
// refused one changes nothing.
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../lib/protocol.ts";
import { secretKey } from "../../server/auth/tokens.ts";
import {
  FILTER_SIGNATURE_HEADER,
  filterKey,
  signFilterRequest,
} from "../../server/http/filter-route.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import { newChat, startOnGateway, stopOnGateway } from "../support/on-gateway.ts";
import { openTab, TEST_AUTH_SECRET, type TestServer } from "../support/tabs.ts";

let requester: OperatorConnection;
let server: TestServer;
const KNOWN_CODES = new Set<string>(ErrorCode.options);

beforeAll(async () => {
  ({ requester, server } = await startOnGateway());
});

afterAll(() => stopOnGateway({ server, requester }));

function chats(): string {
  const db = new DatabaseSync(path.join(server.dataDir, "asks.sqlite"), { readOnly: true });
  try {
    return JSON.stringify(db.prepare("SELECT chat_id, owner FROM chats ORDER BY chat_id").all());
  } finally {
    db.close();
  }
}

async function post(body: string, signature: string | undefined) {
  const response = await fetch(`${server.url}/openwebui/replies`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature === undefined ? {} : { [FILTER_SIGNATURE_HEADER]: signature }),
    },
    body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { ok: boolean; error?: { code: string; message: string } },
  };
}

describe("the filter's endpoint under attack", () => {
  it("no key a browser or a tab holds signs a reply start: a chat nobody opened yet cannot be claimed with one", async () => {
    const victimChat = newChat("victim");
    const body = JSON.stringify({
      chatId: victimChat,
      replyId: "m1",
      userId: "mallory",
      startedAt: Date.now(),
    });
    const embedToken = await server.token("mallory", newChat("mallory"));
    const attempts = [
      // The tab tokens' own key, AUTH_SECRET itself, an embed token as the key, and its signature.
      signFilterRequest(Buffer.from(secretKey(TEST_AUTH_SECRET)), body, Date.now()),
      signFilterRequest(Buffer.from(TEST_AUTH_SECRET), body, Date.now()),
      signFilterRequest(Buffer.from(embedToken), body, Date.now()),
      `t=${Math.floor(Date.now() / 1000)},v1=${Buffer.from(
        embedToken.split(".")[2] ?? "",
        "base64url",
      )
        .toString("hex")
        .padEnd(64, "0")
        .slice(0, 64)}`,
      // A real signature, of another body; and one an hour old.
      signFilterRequest(filterKey(TEST_AUTH_SECRET), body.replace("mallory", "owner"), Date.now()),
      signFilterRequest(filterKey(TEST_AUTH_SECRET), body, Date.now() - 3_600_000),
      undefined,
    ];
    for (const signature of attempts)
      expect(await post(body, signature)).toMatchObject({
        status: 401,
        body: { ok: false, error: { code: "FORBIDDEN" } },
      });
    // The victim then opens the chat from its widget and is its owner.
    const victim = await openTab(server.url, await server.token("victim", victimChat));
    expect(await victim.send("chat:view", { chatId: victimChat })).toEqual({ ok: true });
    victim.close();
    expect(JSON.parse(chats())).toContainEqual({ chat_id: victimChat, owner: "victim" });
  });
});

describe("the filter's endpoint fuzzed", () => {
  const text = fc.oneof(
    fc.string(),
    fc.string({ unit: "binary" }),
    fc.constantFrom("", " ", "\u0000", "\u202e", "__proto__", "constructor"),
    fc.string({ minLength: 150, maxLength: 400 }),
  );
  const value = fc.oneof(
    text,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.anything({ maxDepth: 2 }),
  );
  const start = fc.record(
    {
      chatId: fc.oneof(fc.constant(newChat("fuzz")), value),
      replyId: value,
      userId: value,
      startedAt: fc.oneof(fc.constant(Date.now()), value),
    },
    { requiredKeys: [] },
  );
  const body = fc.oneof(
    start.map((item) => JSON.stringify(item)),
    fc.jsonValue({ maxDepth: 3 }).map((item) => JSON.stringify(item)),
    text,
    fc.constant("x".repeat(3_000)),
  );
  const signing = fc.constantFrom("filter", "stale", "other-key", "none", "garbage");

  it("every body, signed or not, gets one clear answer; none is a 500; an unsigned or refused one changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(body, signing, async (raw, how) => {
        const before = chats();
        const now = Date.now();
        const signature =
          how === "filter"
            ? signFilterRequest(filterKey(TEST_AUTH_SECRET), raw, now)
            : how === "stale"
              ? signFilterRequest(filterKey(TEST_AUTH_SECRET), raw, now - 600_000)
              : how === "other-key"
                ? signFilterRequest(filterKey("o".repeat(48)), raw, now)
                : how === "garbage"
                  ? "t=abc,v1=;;"
                  : undefined;
        const answer = await post(raw, signature);
        expect(
          [200, 400, 401, 413],
          `${how}: ${answer.status} ${JSON.stringify(answer.body)}`,
        ).toContain(answer.status);
        if (answer.status === 200) {
          expect(how).toBe("filter");
          return;
        }
        expect(answer.body.ok).toBe(false);
        expect(KNOWN_CODES.has(answer.body.error!.code)).toBe(true);
        expect(answer.body.error!.message.length).toBeGreaterThan(0);
        if (how !== "filter") expect(answer.status).toBe(Buffer.byteLength(raw) > 2048 ? 413 : 401);
        expect(chats()).toBe(before);
      }),
      { numRuns: 150 },
    );
    // Still up.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
