import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type Route, routeRequests } from "./router.ts";

let server: Server | undefined;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

async function serve(routes: Route[], log: string[]): Promise<string> {
  server = createServer(routeRequests(routes, (line) => log.push(line)));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const answering = (name: string, path: string): Route => ({
  name,
  handles: (request) => request.url?.startsWith(path) ?? false,
  handle: (_request, response) => void response.writeHead(200).end(name),
});

describe("the server's route table", () => {
  it("gives a request to the first route that takes it, and a 404 when none does", async () => {
    const url = await serve(
      [answering("a", "/a"), answering("both", "/"), answering("b", "/b")],
      [],
    );
    expect(await (await fetch(`${url}/a`)).text()).toBe("a");
    expect(await (await fetch(`${url}/b`)).text()).toBe("both");
    server!.close();
    const only = await serve([answering("a", "/a")], []);
    expect((await fetch(`${only}/elsewhere`)).status).toBe(404);
  });

  it("answers 500 when a route throws or rejects, and logs its path without the query", async () => {
    const log: string[] = [];
    const url = await serve(
      [
        {
          name: "sync",
          handles: (request) => request.url?.startsWith("/sync") ?? false,
          handle: () => {
            throw new Error("broke");
          },
        },
        {
          name: "async",
          handles: () => true,
          handle: () => Promise.reject(new Error("broke later")),
        },
      ],
      log,
    );
    expect((await fetch(`${url}/sync?token=secret-token`)).status).toBe(500);
    expect((await fetch(`${url}/other?token=secret-token`)).status).toBe(500);
    expect(log).toEqual(["sync /sync failed: broke", "async /other failed: broke later"]);
  });
});
