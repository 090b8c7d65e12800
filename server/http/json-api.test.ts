import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type HttpMethod, httpRoute } from "../../lib/http-routes.ts";
import { ErrorCode, fail } from "../../lib/protocol.ts";
import type { OwnerRequest } from "../auth/owner-request.ts";
import { StoreUnavailable } from "../store/store.ts";
import { jsonApi, route } from "./json-api.ts";
import { HTTP_STATUS } from "./json-routes.ts";

/** Bearer tokens as the test's ownerOf reads them: the link each one is. */
const SENDERS: Record<string, OwnerRequest> = {
  "owner-link": { owner: "owner", link: { kid: "owner-kid", expiresAt: 1 } },
  device: { owner: "owner", link: { kid: "device-1", expiresAt: 1 } },
  "no-kid": { owner: "owner", link: { kid: null, expiresAt: 1 } },
};
const ownerOf = async (request: IncomingMessage) =>
  SENDERS[request.headers.authorization?.replace(/^Bearer /, "") ?? ""] ?? null;
const logs: string[] = [];
const handled: string[] = [];

/** A route of the test's own table: any successful reply reads. */
const spec = <S extends z.ZodType | null = null>(
  method: HttpMethod,
  path: string,
  body: S = null as S,
  param?: RegExp,
) => httpRoute({ method, path, param, body, reply: z.looseObject({ ok: z.literal(true) }) });

const routes = [
  route(spec("GET", "/api/open"), {
    access: "anyone",
    handle: async ({ sender }) => ({ ok: true, sender }),
  }),
  route(spec("GET", "/api/mine"), {
    access: "owner",
    handle: async ({ sender }) => ({ ok: true, owner: sender.owner }),
  }),
  route(spec("POST", "/api/things", z.object({ name: z.string().min(1) })), {
    access: { link: "revocable", refusal: () => "needs a key id" },
    created: true,
    async handle({ sender, body }) {
      handled.push(body.name);
      return { ok: true, name: body.name, kid: sender.link.kid };
    },
  }),
  route(spec("DELETE", "/api/things/:id", null, /^[a-z]{1,5}$/), {
    access: { link: "owner-link", refusal: ({ link }) => `not with ${link.kid ?? "no kid"}` },
    handle: async ({ param }) => ({ ok: true, param }),
  }),
  route(spec("POST", "/api/fails", z.object({ code: ErrorCode })), {
    access: "anyone",
    handle: async ({ body }) => fail(body.code, `answered ${body.code}`),
  }),
  route(spec("POST", "/api/throws", z.object({ unavailable: z.boolean() })), {
    access: "anyone",
    handle: async ({ body }) => {
      throw body.unavailable ? new StoreUnavailable("Redis is unreachable") : new Error("a bug");
    },
  }),
];

const servers: Server[] = [];
const urls: Record<"open" | "ownersOnly", string> = { open: "", ownersOnly: "" };

beforeAll(async () => {
  for (const which of ["open", "ownersOnly"] as const) {
    const api = jsonApi({
      name: "test endpoint",
      paths: /^\/api(\/|$)/,
      routes,
      bodyLimit: 64,
      ...(which === "ownersOnly" ? { ownersOnly: true } : {}),
      ownerOf,
      isOwnerLinkKid: async (kid) => kid === "owner-kid",
      log: (line) => logs.push(line),
    });
    const server = createServer((request, response) =>
      api.handles(request) ? api.handle(request, response) : response.writeHead(404).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    urls[which] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
});

afterAll(() =>
  Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))),
);

async function call(
  method: string,
  path: string,
  options: { token?: string; body?: string; api?: "open" | "ownersOnly" } = {},
) {
  const response = await fetch(`${urls[options.api ?? "open"]}${path}`, {
    method,
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
    body: options.body,
  });
  return {
    status: response.status,
    headers: [response.headers.get("content-type"), response.headers.get("cache-control")],
    body: (await response.json()) as unknown,
  };
}

describe("the typed JSON API", () => {
  it("answers a route's reply as JSON, 200, or 201 for one that creates; not its paths are not its own", async () => {
    expect(await call("GET", "/api/open")).toEqual({
      status: 200,
      headers: ["application/json", "no-store"],
      body: { ok: true, sender: null },
    });
    expect(await call("GET", "/api/mine", { token: "device" })).toMatchObject({
      status: 200,
      body: { ok: true, owner: "owner" },
    });
    expect(
      await call("POST", "/api/things", { token: "device", body: JSON.stringify({ name: "a" }) }),
    ).toEqual({
      status: 201,
      headers: ["application/json", "no-store"],
      body: { ok: true, name: "a", kid: "device-1" },
    });
    expect(await call("DELETE", "/api/things/abc", { token: "owner-link" })).toMatchObject({
      status: 200,
      body: { ok: true, param: "abc" },
    });
    expect((await fetch(`${urls.open}/other`)).status).toBe(404);
  });

  it("answers every error code with its status", async () => {
    for (const code of ErrorCode.options) {
      expect(
        await call("POST", "/api/fails", { body: JSON.stringify({ code }) }),
        code,
      ).toMatchObject({
        status: HTTP_STATUS[code],
        body: { ok: false, error: { code, message: `answered ${code}` } },
      });
    }
    expect(HTTP_STATUS).toMatchObject({
      INVALID: 400,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      ALREADY_RESOLVED: 409,
      EXPIRED: 410,
      RATE_LIMITED: 429,
      INTERNAL: 500,
      GATEWAY_ERROR: 502,
      UNAVAILABLE: 503,
    });
  });

  it("judges the route, then the sender, then the link, then the body, and only then runs the handler", async () => {
    const noRoute = {
      status: 405,
      body: {
        ok: false,
        error: { code: "INVALID", message: "PUT /api/things is not a test endpoint" },
      },
    };
    expect(await call("PUT", "/api/things")).toMatchObject(noRoute);
    expect(await call("DELETE", "/api/things/toolong")).toMatchObject({ status: 405 });
    const noOwner = {
      status: 403,
      body: {
        ok: false,
        error: {
          code: "FORBIDDEN",
          message: "an owner's dashboard token is needed (Authorization: Bearer)",
        },
      },
    };
    expect(await call("POST", "/api/things", { body: "not JSON" })).toMatchObject(noOwner);
    expect(await call("POST", "/api/things", { token: "no-kid", body: "not JSON" })).toMatchObject({
      status: 403,
      body: { error: { code: "FORBIDDEN", message: "needs a key id" } },
    });
    expect(await call("DELETE", "/api/things/abc", { token: "device" })).toMatchObject({
      status: 403,
      body: { error: { message: "not with device-1" } },
    });
    expect(await call("DELETE", "/api/things/abc", { token: "no-kid" })).toMatchObject({
      status: 403,
      body: { error: { message: "not with no kid" } },
    });
    expect(
      await call("POST", "/api/things", { token: "device", body: "x".repeat(65) }),
    ).toMatchObject({
      status: 413,
      body: { error: { code: "INVALID", message: "body too large" } },
    });
    expect(await call("POST", "/api/things", { token: "device", body: "{" })).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID", message: "body is not JSON" } },
    });
    expect(
      await call("POST", "/api/things", { token: "device", body: JSON.stringify({ name: "" }) }),
    ).toMatchObject({
      status: 400,
      body: { error: { code: "INVALID", message: expect.stringMatching(/^name: /) } },
    });
    expect(handled).toEqual(["a"]);
    // Owners only: a request to no route is refused as one without an owner's token first.
    expect(await call("PUT", "/api/things", { api: "ownersOnly" })).toMatchObject(noOwner);
    expect(await call("GET", "/api/open", { api: "ownersOnly" })).toMatchObject(noOwner);
    expect(await call("PUT", "/api/things", { api: "ownersOnly", token: "device" })).toMatchObject(
      noRoute,
    );
  });

  it("a handler that meets the shared store away is a 503 to try again; any other failure a logged 500", async () => {
    expect(
      await call("POST", "/api/throws", { body: JSON.stringify({ unavailable: true }) }),
    ).toEqual({
      status: 503,
      headers: ["application/json", "no-store"],
      body: {
        ok: false,
        error: {
          code: "UNAVAILABLE",
          message: "Redis is unreachable: nothing was done; try again in a moment",
        },
      },
    });
    expect(logs).toEqual([]);
    expect(
      await call("POST", "/api/throws", { body: JSON.stringify({ unavailable: false }) }),
    ).toMatchObject({
      status: 500,
      body: { ok: false, error: { code: "INTERNAL", message: "internal error" } },
    });
    expect(logs).toEqual(["test endpoint /api/throws failed: a bug"]);
  });
});
