// Issue 28, points 4 and 7, over raw TCP against the server on loopback: one address cannot take the
// server's connections with half-sent requests while another is still served; a stalled request is
// dropped after the header timeout; every request target gets an answer, a malformed one a 400, and
// no log line carries its token.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { startTestServer, type TestServer } from "../support/tabs.ts";

const gatewayUrl = inject("gatewayUrl");
const gatewayToken = inject("gatewayToken");
const TOKEN = "token-that-must-never-be-logged";

type Raw = {
  socket: Socket;
  /** Everything the server sent, so far. */
  received(): string;
  /** Resolves once the server closed the connection (or it failed), with what it sent. */
  closed: Promise<string>;
};

function openRaw(port: number, localAddress = "127.0.0.1"): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let data = "";
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    const closed = new Promise<string>((done) => socket.once("close", () => done(data)));
    socket.on("data", (chunk: Buffer) => (data += chunk.toString("latin1")));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, received: () => data, closed }));
    socket.once("error", reject);
  });
}

/** One whole request on its own connection; resolves with the status line the server answered. */
async function statusOf(port: number, head: string, localAddress?: string): Promise<string> {
  const raw = await openRaw(port, localAddress);
  raw.socket.write(`${head}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  return (await raw.closed).split("\r\n", 1)[0] ?? "";
}

async function withServer(
  env: Record<string, string>,
  use: (server: TestServer) => Promise<void>,
): Promise<void> {
  const server = await startTestServer({ gatewayUrl, gatewayToken, env });
  try {
    await use(server);
  } finally {
    await server.dispose();
  }
}

describe.skipIf(!gatewayUrl)("HTTP limits", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ gatewayUrl, gatewayToken });
  });
  afterAll(() => server?.dispose());

  it("28.7 every request target gets an answer: a malformed one 400, and no log line holds its token", async () => {
    for (const target of [
      `//?token=${TOKEN}`,
      `//devices?token=${TOKEN}`,
      `http://[/?token=${TOKEN}`,
      `*?token=${TOKEN}`,
      `http://localhost/devices?token=${TOKEN}`,
      "*",
    ]) {
      for (const method of ["GET", "POST", "OPTIONS"])
        expect(await statusOf(server.port, `${method} ${target} HTTP/1.1`), target).toBe(
          "HTTP/1.1 400 Bad Request",
        );
    }
    expect(await statusOf(server.port, "GET /healthz HTTP/1.1")).toBe("HTTP/1.1 200 OK");
    expect(server.logs.filter((line) => line.includes(TOKEN))).toEqual([]);
  });

  it("28.4 connections are capped per address: half-sent requests from one address cannot shut out another", async () => {
    await withServer(
      {
        MAX_CONNECTIONS_PER_ADDRESS: "20",
        HEADERS_TIMEOUT_SECONDS: "300",
        REQUEST_TIMEOUT_SECONDS: "300",
      },
      async (target) => {
        const stalled: Raw[] = [];
        for (let i = 0; i < 20; i++) {
          const raw = await openRaw(target.port);
          raw.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n");
          stalled.push(raw);
        }
        // The next one from that address is closed before it is read: no answer at all.
        const over = await openRaw(target.port);
        over.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        expect(await over.closed).toBe("");
        // Another address is served meanwhile.
        expect(await statusOf(target.port, "GET /healthz HTTP/1.1", "127.0.0.2")).toBe(
          "HTTP/1.1 200 OK",
        );
        // A stalled request that ends frees its slot (the server hears of the close a moment later).
        stalled.pop()!.socket.destroy();
        await vi.waitFor(
          async () =>
            expect(await statusOf(target.port, "GET /healthz HTTP/1.1")).toBe("HTTP/1.1 200 OK"),
          { timeout: 10_000, interval: 100 },
        );
        for (const raw of stalled) raw.socket.destroy();
        expect(
          target.logs.filter((line) => line.includes("over MAX_CONNECTIONS_PER_ADDRESS")),
        ).toHaveLength(1);
      },
    );
  });

  it("28.4 a request whose headers stall is dropped after the header timeout", async () => {
    await withServer(
      { HEADERS_TIMEOUT_SECONDS: "1", REQUEST_TIMEOUT_SECONDS: "2" },
      async (target) => {
        const raw = await openRaw(target.port);
        raw.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n");
        // Node answers 408 and closes; the bound is generous (the check runs once a second).
        const sent = await Promise.race([
          raw.closed,
          new Promise<string>((resolve) => setTimeout(() => resolve("still open"), 20_000)),
        ]);
        expect(sent).toMatch(/^HTTP\/1\.1 408/);
        // A whole request in time is served as before.
        expect(await statusOf(target.port, "GET /healthz HTTP/1.1")).toBe("HTTP/1.1 200 OK");
      },
    );
  });
});
