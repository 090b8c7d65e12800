// Issue 11, "Fuzzing, kept": generated payloads for every client event, sent by a real socket.io-client
// through the real Socket.IO handlers of the server on the real Gateway. Wrong types, strings near the
// 64 KiB frame limit, deep objects, unicode and prototype keys. Every event must get exactly one ack
// with a known code, the server must stay up, and a refused event must change no state. Issue 22: the
// same for the bodies of the owner endpoints over HTTP (`/push/*`, `/devices`), with every kind of token.
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { ErrorCode } from "../../lib/protocol.ts";
import type { OperatorConnection } from "../support/gateway-client.ts";
import {
  newChat,
  requestQuestion,
  sessionKeyOf as chatKey,
  startOnGateway,
  stopOnGateway,
} from "../support/on-gateway.ts";
import { openTab, type Tab, type TestServer } from "../support/tabs.ts";

const EVENTS = ["chat:view", "chat:leave", "ask:answer", "asks:list", "asks:watch"] as const;
const KNOWN_CODES = new Set<string>(ErrorCode.options);
/** Payload strings stay this far below the 64 KiB frame limit: a frame over it closes the socket by design. */
const NEAR_LIMIT_BYTES = 63_000;

let requester: OperatorConnection;
let server: TestServer;
const aliceChat = newChat("fuzz");
/** A pending question in alice's chat, so answers have a real target (replaced when one is accepted). */
let pendingAsk = "";

async function askAgain(): Promise<void> {
  const { id } = await requestQuestion(requester, chatKey(aliceChat));
  await vi.waitFor(
    () => expect(server.broker.getPending(id)?.status, `ask ${id} on the server`).toBe("pending"),
    { timeout: 10_000, interval: 20 },
  );
  pendingAsk = id;
}

beforeAll(async () => {
  ({ requester, server } = await startOnGateway());
  const alice = await openTab(server.url, await server.token("alice", aliceChat));
  expect(await alice.send("chat:view", { chatId: aliceChat })).toEqual({ ok: true });
  alice.close();
  await askAgain();
});

afterAll(() => stopOnGateway({ server, requester }));

/**
 * What a refused event must leave alone: every chat ownership row, and the rows and the broker's state
 * of this file's asks. (Other files' asks on the shared Gateway come and go on their own.)
 */
async function snapshot(): Promise<string> {
  const db = new DatabaseSync(path.join(server.dataDir, "asks.sqlite"), { readOnly: true });
  try {
    const asks = db
      .prepare(
        "SELECT id, status, chat_id, claimed_by, body FROM asks WHERE chat_id = ? ORDER BY id",
      )
      .all(aliceChat);
    const chats = db.prepare("SELECT chat_id, owner FROM chats ORDER BY chat_id").all();
    const mine = server.broker.pendingAsks.filter((ask: Ask) => ask.chatId === aliceChat);
    const pending = (
      await Promise.all(
        mine.map(async (ask: Ask) => [ask.id, ask.status, await server.broker.shownTo(ask.id)]),
      )
    ).sort();
    return JSON.stringify({ asks, chats, pending });
  } finally {
    db.close();
  }
}

// --- payloads -------------------------------------------------------------------------------------

const PROTO_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "then",
];

/** Objects whose own keys are prototype names, built as the server's JSON.parse would build them. */
const prototypeKeyed = fc
  .tuple(
    fc.constantFrom(...PROTO_KEYS),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom("chatId", "askId", "status", "answer", "type"),
  )
  .map(
    ([key, value, sibling]) =>
      JSON.parse(
        `{${JSON.stringify(key)}: ${JSON.stringify(value)}, ${JSON.stringify(sibling)}: ${JSON.stringify(value)}}`,
      ) as unknown,
  );

const deep = fc
  .tuple(fc.integer({ min: 20, max: 300 }), fc.constantFrom("chatId", "answer", "a", "__proto__"))
  .map(([depth, key]) => {
    let value: unknown = "bottom";
    for (let i = 0; i < depth; i++)
      value = i % 2 ? [value] : JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value)}}`);
    return value;
  });

/** A string of about `bytes` UTF-8 bytes, in characters of 1, 2, 3 or 4 bytes. */
const huge = fc
  .tuple(
    fc.integer({ min: NEAR_LIMIT_BYTES - 3_000, max: NEAR_LIMIT_BYTES }),
    fc.constantFrom("x", "é", "中", "😀"),
  )
  .map(([bytes, unit]) => unit.repeat(Math.floor(bytes / Buffer.byteLength(unit))));

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary" }),
  fc.constantFrom("", " ", "\u0000", "\u202e", "null", "undefined"),
  huge,
);
const junk = fc.oneof(
  fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true }),
  prototypeKeyed,
  deep,
  text,
  fc.constant(undefined),
  fc.constant(null),
);

const askId = fc.oneof(
  fc.constant("PENDING"),
  fc.constant("plugin:00000000-0000-0000-0000-000000000000"),
  text,
  junk,
);
const answer = fc.oneof(
  fc.record({
    type: fc.constant("questions"),
    answers: fc.oneof(
      fc.dictionary(
        fc.oneof(fc.constantFrom("db", "__proto__"), fc.string()),
        fc.array(text, { maxLength: 3 }),
      ),
      junk,
    ),
  }),
  fc.record({
    type: fc.constant("text"),
    text: fc.oneof(fc.constantFrom("Nope, not an option"), text, junk),
  }),
  fc.record(
    {
      type: fc.constant("secret"),
      value: fc.oneof(text, junk),
      allowedHosts: fc.oneof(fc.array(text, { maxLength: 3 }), junk),
    },
    { requiredKeys: ["type"] },
  ),
  fc.record({
    type: fc.constant("decision"),
    decision: fc.oneof(fc.constantFrom("allow-once", "deny", "ALLOW"), junk),
  }),
  fc.record({ type: fc.oneof(fc.constantFrom("cancel", "Cancel", "questions "), junk) }),
  junk,
);

const payloadFor: Record<(typeof EVENTS)[number], fc.Arbitrary<unknown>> = {
  "chat:view": fc.oneof(fc.record({ chatId: fc.oneof(fc.constant(aliceChat), text, junk) }), junk),
  "chat:leave": fc.oneof(fc.constant({}), junk),
  "ask:answer": fc.oneof(
    fc.record({ askId, answer }),
    fc.record({ askId, answer }, { requiredKeys: [] }),
    junk,
  ),
  "asks:list": fc.oneof(
    fc.record({ status: fc.oneof(fc.constantFrom("pending", "all", "answered", "ALL"), junk) }),
    junk,
  ),
  "asks:watch": fc.oneof(fc.constant({}), junk),
};

/** Encoded size of a payload; several near-limit strings in one payload would pass the frame limit. */
const encodedBytes = (payload: unknown) => Buffer.byteLength(JSON.stringify(payload) ?? "");
const command = fc
  .constantFrom(...EVENTS)
  .chain((event) => payloadFor[event].map((payload) => ({ event, payload })))
  .filter(({ payload }) => encodedBytes(payload) <= NEAR_LIMIT_BYTES + 1_000);
const who = fc.constantFrom<[string, string | undefined]>(
  ["owner", undefined],
  ["alice", aliceChat],
  ["mallory", undefined],
  ["mallory", "fuzz-mallory"],
);

// --- the property ---------------------------------------------------------------------------------

/** Counts the ack packets per ack id that reach this socket (the client itself drops a second one). */
function countAcks(opened: Tab): Map<number, number> {
  const acks = new Map<number, number>();
  opened.socket.io.on("packet", (packet: { type: number; id?: number }) => {
    if (packet.type === 3 && packet.id !== undefined)
      acks.set(packet.id, (acks.get(packet.id) ?? 0) + 1);
  });
  return acks;
}

const withAskId = (payload: unknown): unknown =>
  payload && typeof payload === "object" && (payload as { askId?: unknown }).askId === "PENDING"
    ? { ...payload, askId: pendingAsk }
    : payload;

describe("tab protocol fuzzing", () => {
  it("every generated event gets exactly one ack with a known code, the server stays up, and refused input changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        who,
        fc.array(command, { minLength: 1, maxLength: 5 }),
        async ([userId, claim], commands) => {
          const tab = await openTab(server.url, await server.token(userId, claim));
          const acks = countAcks(tab);
          let disconnected = "";
          tab.socket.on("disconnect", (reason) => (disconnected = reason));
          try {
            for (const { event, payload } of commands) {
              const before = await snapshot();
              const ack = (await tab.sendRaw(event, withAskId(payload))) as {
                ok: boolean;
                error?: { code: string; message: string };
              };
              expect(typeof ack.ok, `${event} ack`).toBe("boolean");
              if (!ack.ok) {
                expect(
                  KNOWN_CODES.has(ack.error!.code),
                  `${event} answered the unknown code ${ack.error!.code}`,
                ).toBe(true);
                expect(typeof ack.error!.message).toBe("string");
                expect(ack.error!.code, `${event}: ${ack.error!.message}`).not.toBe("INTERNAL");
                expect(
                  await snapshot(),
                  `${event} was refused (${ack.error!.code}) but changed state`,
                ).toBe(before);
              }
            }
            // The server handles a socket's events in order: once this last one is acked, every earlier ack has been sent.
            expect(await tab.send("chat:leave", {})).toMatchObject({ ok: expect.any(Boolean) });
            expect(
              [...acks.values()].every((count) => count === 1),
              `ack counts ${JSON.stringify([...acks])}`,
            ).toBe(true);
            expect(acks.size).toBe(commands.length + 1);
            expect(disconnected).toBe("");
          } finally {
            tab.close();
          }
          if (server.broker.getPending(pendingAsk)?.status !== "pending") await askAgain();
        },
      ),
      { numRuns: 100, endOnFailure: true },
    );
    // Still up: a new tab connects, lists and views.
    const after = await openTab(server.url, await server.token("owner"));
    expect(await after.send("asks:list", { status: "all" })).toMatchObject({ ok: true });
    after.close();
  });

  it("an event over the 64 KiB frame limit closes only its own connection; the server serves the next tab", async () => {
    const before = await snapshot();
    const tab = await openTab(server.url, await server.token("alice", aliceChat));
    const disconnected = new Promise<string>((resolve) => tab.socket.once("disconnect", resolve));
    tab.socket.emit("chat:view", { chatId: "x".repeat(70_000) }, () => {});
    expect(await disconnected).toBe("transport close");
    expect(await snapshot()).toBe(before);
    const next = await openTab(server.url, await server.token("alice", aliceChat));
    expect(await next.send("chat:view", { chatId: aliceChat })).toEqual({ ok: true });
    next.close();
  });
});

// --- the owner endpoints over HTTP (issue 22) ------------------------------------------------------

/** What a refused request must leave alone: the devices, the push subscriptions and redeemed actions, and this file's asks. */
async function ownerStateSnapshot(): Promise<string> {
  const read = (file: string, query: string) => {
    const db = new DatabaseSync(path.join(server.dataDir, file), { readOnly: true });
    try {
      return db.prepare(query).all();
    } finally {
      db.close();
    }
  };
  return JSON.stringify({
    devices: read("devices.sqlite", "SELECT * FROM devices ORDER BY kid"),
    subscriptions: read("push.sqlite", "SELECT * FROM subscriptions ORDER BY endpoint"),
    redeemed: read("push.sqlite", "SELECT * FROM redeemed_actions ORDER BY jti"),
    asks: await snapshot(),
  });
}

/** Every status the owner endpoints answer a refusal with, by the code they give. */
const REFUSAL_STATUS: Record<string, number[]> = {
  INVALID: [400, 405, 413],
  FORBIDDEN: [403],
  NOT_FOUND: [404],
  ALREADY_RESOLVED: [409],
  EXPIRED: [410],
};

const endpointUrl = fc.oneof(
  fc.constantFrom(
    "https://push.example.test/sub/1",
    "https://127.0.0.1/push",
    "https://0x7f000001/x",
    "https://[::1]/x",
    "https://localhost/x",
    "http://push.example.test/x",
    "javascript:alert(1)",
    "",
  ),
  fc.webUrl({ validSchemes: ["https"] }),
  text,
  junk,
);
const base64 = fc.oneof(fc.constantFrom("B".repeat(87), "A".repeat(22), "not base64!"), text, junk);
const deviceName = fc.oneof(
  fc.constantFrom("Phone", "\u202eenohp\u0000", "   ", "x".repeat(61), "📱".repeat(60)),
  text,
  junk,
);

/** A request: the endpoint, and a body (a value sent as JSON, or raw text that may not be JSON). */
const ownerRequest = fc.oneof(
  fc.record({
    method: fc.constant("POST"),
    path: fc.constant("/push/subscriptions"),
    body: fc.oneof(
      fc.record(
        {
          endpoint: endpointUrl,
          keys: fc.oneof(fc.record({ p256dh: base64, auth: base64 }), junk),
        },
        { requiredKeys: [] },
      ),
      junk,
    ),
  }),
  fc.record({
    method: fc.constant("DELETE"),
    path: fc.constant("/push/subscriptions"),
    body: fc.oneof(fc.record({ endpoint: endpointUrl }), junk),
  }),
  fc.record({
    method: fc.constantFrom("GET", "PUT"),
    path: fc.constantFrom("/push/subscriptions", "/push/key", "/devices", "/push/", "/devices/"),
    body: fc.constant(undefined),
  }),
  fc.record({
    method: fc.constant("DELETE"),
    path: fc.oneof(
      fc.constantFrom(
        "/push/subscriptions/AAAAAAAAAAAAAAAAAAAAAA",
        "/devices/device-none",
        "/devices/%00",
        "/devices/..%2Fx",
      ),
      fc
        .string()
        .filter((tail) => tail !== "." && tail !== "..")
        .map((tail) => `/devices/${encodeURIComponent(tail)}`),
    ),
    body: fc.constant(undefined),
  }),
  fc.record({
    method: fc.constant("POST"),
    path: fc.constant("/push/actions"),
    body: fc.oneof(
      fc.record(
        {
          askId: fc.oneof(fc.constant("PENDING"), text, junk),
          decision: fc.oneof(fc.constantFrom("allow-once", "deny", "allow-always"), junk),
          token: fc.oneof(text, junk),
        },
        { requiredKeys: [] },
      ),
      junk,
    ),
  }),
  fc.record({
    method: fc.constant("POST"),
    path: fc.constant("/devices"),
    body: fc.oneof(fc.record({ name: deviceName }, { requiredKeys: [] }), junk),
  }),
  fc.record({
    method: fc.constantFrom("POST", "DELETE"),
    path: fc.constantFrom("/devices", "/push/subscriptions", "/push/actions"),
    body: fc
      .oneof(fc.constantFrom("{ name: Phone", "[", "null", "\u0000"), huge)
      .map((raw) => ({ raw })),
  }),
);

describe("owner endpoint fuzzing", () => {
  let tokens: Record<string, string | null>;

  beforeAll(async () => {
    const ownerLink = await server.ownerLink();
    const device = await fetch(`${server.url}/devices`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ownerLink}` },
      body: JSON.stringify({ name: "Fuzzed phone" }),
    });
    const deviceLink = new URL(((await device.json()) as { url: string }).url).searchParams.get(
      "token",
    )!;
    tokens = {
      ownerLink,
      deviceLink,
      withoutKid: await server.token("owner"),
      guest: await server.ownerLink("mallory"),
      embed: await server.token("owner", aliceChat),
      garbage: "not.a.token",
      none: null,
    };
  });

  it("22 fuzz: every generated /push/* and /devices request gets one JSON answer with a known code and a matching status, never a 500, and a refused one changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          "ownerLink",
          "deviceLink",
          "withoutKid",
          "guest",
          "embed",
          "garbage",
          "none",
        ),
        fc.array(ownerRequest, { minLength: 1, maxLength: 4 }),
        async (who, requests) => {
          for (const { method, path: target, body } of requests) {
            const before = await ownerStateSnapshot();
            const token = tokens[who];
            const sent =
              body === undefined
                ? undefined
                : typeof body === "object" && body !== null && "raw" in body
                  ? String(body.raw)
                  : JSON.stringify(withAskId(body));
            const response = await fetch(`${server.url}${target}`, {
              method,
              headers: {
                "content-type": "application/json",
                ...(token ? { authorization: `Bearer ${token}` } : {}),
              },
              body: sent,
            });
            const what = `${method} ${target} as ${who}`;
            expect(response.headers.get("content-type"), what).toBe("application/json");
            const answer = (await response.json()) as {
              ok: boolean;
              error?: { code: string; message: string };
            };
            expect(typeof answer.ok, what).toBe("boolean");
            if (answer.ok) {
              expect(response.status, what).toBeLessThan(300);
              continue;
            }
            expect(
              KNOWN_CODES.has(answer.error!.code),
              `${what} answered the unknown code ${answer.error!.code}`,
            ).toBe(true);
            expect(answer.error!.code, `${what}: ${answer.error!.message}`).not.toBe("INTERNAL");
            expect(
              REFUSAL_STATUS[answer.error!.code],
              `${what}: ${answer.error!.code} with ${response.status}`,
            ).toContain(response.status);
            expect(typeof answer.error!.message).toBe("string");
            expect(
              await ownerStateSnapshot(),
              `${what} was refused (${answer.error!.code}) but changed state`,
            ).toBe(before);
          }
        },
      ),
      { numRuns: 100, endOnFailure: true },
    );
    expect(
      server.logs.filter((line) => / failed: /.test(line) && /^(push|device) endpoint/.test(line)),
    ).toEqual([]);
    // Still up: the key is served and the owner lists their devices.
    expect((await fetch(`${server.url}/push/key`)).status).toBe(200);
    expect(
      (
        await fetch(`${server.url}/devices`, {
          headers: { authorization: `Bearer ${tokens.ownerLink}` },
        })
      ).status,
    ).toBe(200);
  });
});
