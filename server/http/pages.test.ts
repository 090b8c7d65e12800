import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { OPENWEBUI_URL_HEADER } from "../../lib/page-headers.ts";
import { createPagesHandler, type NextRequestHandler } from "./pages.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(
  handle: NextRequestHandler,
  log: (message: string) => void,
  openWebUiUrl: string | null = null,
): Promise<string> {
  server = createServer(
    createPagesHandler({ handle, frameAncestors: [], dev: false, openWebUiUrl, log }),
  );
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("pages handler", () => {
  it("hands Next.js the request with the policy whose nonce it must use", async () => {
    let seen: string | undefined;
    const url = await serve(
      async (request, response) => {
        const policy = request.headers["content-security-policy"];
        seen = typeof policy === "string" ? policy : undefined;
        response.end("page");
      },
      () => {},
    );
    const response = await fetch(`${url}/`);
    expect(await response.text()).toBe("page");
    expect(seen).toBe(response.headers.get("content-security-policy"));
    expect(seen).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+'/);
  });

  it("hands the page Open WebUI's address from the configuration, never one the client sent", async () => {
    const seen: (string | undefined)[] = [];
    const handle: NextRequestHandler = async (request, response) => {
      const value = request.headers[OPENWEBUI_URL_HEADER];
      seen.push(typeof value === "string" ? value : undefined);
      response.end("page");
    };
    const spoofed = { headers: { [OPENWEBUI_URL_HEADER]: "https://evil.example" } };
    const configured = await serve(handle, () => {}, "https://chat.example.com");
    await fetch(`${configured}/`);
    await fetch(`${configured}/`, spoofed);
    server!.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    const unconfigured = await serve(handle, () => {});
    await fetch(`${unconfigured}/`, spoofed);
    expect(seen).toEqual(["https://chat.example.com", "https://chat.example.com", undefined]);
  });

  it("answers 500 and logs once when Next.js fails on a request", async () => {
    const logged: string[] = [];
    const url = await serve(
      async () => {
        throw new Error("render exploded");
      },
      (message) => logged.push(message),
    );
    // 28.7: the path only; the query holds the page's token.
    const response = await fetch(`${url}/embed/chat/c1?token=secret-embed-token`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe("Internal Server Error");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain("GET /embed/chat/c1 failed");
    expect(logged[0]).toContain("render exploded");
    expect(logged[0]).not.toContain("secret-embed-token");
  });

  it("22.9 a path that is not valid percent-encoding is answered 400 here, before Next.js, with the security headers", async () => {
    const handled: string[] = [];
    const url = await serve(
      async (request, response) => {
        handled.push(request.url ?? "");
        response.end("page");
      },
      () => {},
    );
    for (const path of [
      "/embed/chat/%E0%A4%A",
      "/embed/chat/%E0%A4%A/",
      "/embed/chat/%C0%80",
      "/embed/chat/%ZZ?token=abc",
      "/%",
    ]) {
      const response = await fetch(`${url}${path}`);
      expect(response.status, path).toBe(400);
      expect(await response.text()).toBe("Bad Request: the path is not valid percent-encoding");
      expect(response.headers.get("content-security-policy"), path).toContain("frame-ancestors");
    }
    // Valid encodings, and a malformed one in the query (the page reads that itself), reach Next.js.
    for (const path of [
      "/embed/chat/%E0%A4%A0",
      "/embed/chat/a%2Fb",
      "/embed/chat/c1?token=%E0%A4%A",
    ])
      expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    expect(handled).toEqual([
      "/embed/chat/%E0%A4%A0",
      "/embed/chat/a%2Fb",
      "/embed/chat/c1?token=%E0%A4%A",
    ]);
  });
});
