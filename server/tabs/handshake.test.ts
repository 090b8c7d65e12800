import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { io as connect } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TAB_PROTOCOL_VERSION } from "../../lib/protocol.ts";
import { mintTabToken, secretKey } from "../auth/tokens.ts";
import type { TabIo } from "./handlers.ts";
import { authenticateTabs } from "./handshake.ts";

const key = secretKey("h".repeat(40));
const logged: string[] = [];
let io: TabIo;
let url: string;

beforeAll(async () => {
  const http = createServer();
  io = new Server(http);
  authenticateTabs(io, {
    key,
    owners: new Set(["owner"]),
    maxTokenDays: 30,
    // The store that knows link key ids is away.
    isKnownKid: async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
    },
    now: Date.now,
    log: (line) => logged.push(line),
    linkOpened: () => {},
  });
  io.on("connection", () => {});
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(() => io.close());

function handshake(token: string): Promise<{ message: string; data: unknown } | "connected"> {
  const socket = connect(url, {
    auth: { token, protocol: TAB_PROTOCOL_VERSION },
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve) => {
    socket.once("connect", () => {
      socket.close();
      resolve("connected");
    });
    socket.once("connect_error", (error: Error & { data?: unknown }) => {
      socket.close();
      resolve({ message: error.message, data: error.data });
    });
  });
}

describe("the tab handshake when the server cannot check a token", () => {
  it("tells the page to try again (UNAVAILABLE), not that its link is bad, and logs why", async () => {
    const link = await mintTabToken(key, { userId: "owner", kid: "k1", ttlSeconds: 600 });
    expect(await handshake(link)).toEqual({
      message: "the server could not check this link just now; trying again",
      data: { code: "UNAVAILABLE" },
    });
    expect(logged).toEqual([expect.stringContaining("ECONNREFUSED")]);
  });

  it("a bad token is still refused as one, and a token needing no store still connects", async () => {
    const forged = await mintTabToken(secretKey("x".repeat(40)), {
      userId: "owner",
      ttlSeconds: 60,
    });
    expect(await handshake(forged)).toMatchObject({ message: "token signature is invalid" });
    const plain = await mintTabToken(key, { userId: "owner", ttlSeconds: 60 });
    expect(await handshake(plain)).toBe("connected");
  });
});
