import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { isLoopback, MAX_ANSWER_BYTES, plainHttpRefusal, printable, readCapped } from "./safety.ts";

describe("npm run connect-openwebui: what it does not take on trust", () => {
  it("sends no secret over plain http:// to another host without the flag", () => {
    for (const host of ["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "app.localhost"])
      expect(plainHttpRefusal(`http://${host}:8080`, false), host).toBeNull();
    expect(plainHttpRefusal("https://chat.example.com", false)).toBeNull();
    expect(plainHttpRefusal("http://chat.example.com", false)).toBe(
      "✗ chat.example.com over plain http:// would carry the API key, the filter's secret and the Gateway token unencrypted: give its https:// URL, or pass --allow-plain-http if the network in between is yours",
    );
    expect(plainHttpRefusal("http://10.0.0.5:8080", false)).toMatch(/^✗ 10\.0\.0\.5:8080 over/);
    expect(plainHttpRefusal("http://10.0.0.5:8080", true)).toBeNull();
    // Looks like loopback, is not.
    expect(isLoopback("127.0.0.1.example.com")).toBe(false);
    expect(isLoopback("0.0.0.0")).toBe(false);
  });

  it("prints a server's strings without their control characters, and cut short", () => {
    expect(printable("version \u001b]52;c;ZXZpbA==\u0007 ok")).toBe(
      "version \ufffd]52;c;ZXZpbA==\ufffd ok",
    );
    expect(printable("a\r\nb\u009bc\u007f")).toBe("a\ufffd\ufffdb\ufffdc\ufffd");
    expect(printable("✓ Open WebUI 0.12.4 — fine")).toBe("✓ Open WebUI 0.12.4 — fine");
    const long = printable("x".repeat(10_000));
    expect(long).toHaveLength(2000);
    expect(long.endsWith("…")).toBe(true);
  });

  it("reads at most 1 MiB of an answer, with or without a Content-Length", async () => {
    const big = "y".repeat(MAX_ANSWER_BYTES + 1);
    const server = createServer((request, response) => {
      if (request.url === "/chunked") {
        response.writeHead(200);
        // No Content-Length: read until the cap, then stop.
        const chunk = "z".repeat(64 * 1024);
        const write = () => {
          while (response.write(chunk)) if (response.writableLength > 4 * MAX_ANSWER_BYTES) break;
        };
        write();
        response.on("drain", write);
        response.on("close", () => response.removeAllListeners("drain"));
        return;
      }
      response.end(request.url === "/big" ? big : '{"version":"0.12.4"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await readCapped(await fetch(`${base}/small`))).toBe('{"version":"0.12.4"}');
      expect(await readCapped(await fetch(`${base}/big`))).toBeNull();
      expect(await readCapped(await fetch(`${base}/chunked`))).toBeNull();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
