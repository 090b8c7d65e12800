import type { IncomingMessage } from "node:http";
import type { Gateway } from "../gateway/gateway.ts";
import type { SharedLink } from "../store/backend.ts";
import type { ServiceStore } from "../store/store.ts";
import type { Route } from "./router.ts";

export type HealthRouteOptions = {
  gateway: Pick<Gateway, "status">;
  store: Pick<ServiceStore, "setAsideRows">;
  link: SharedLink;
  /** Who the request is from when an owner: null for anyone else. */
  ownerOf: (request: IncomingMessage) => Promise<unknown>;
};

/** `/healthz`: anyone may learn ok or degraded; the details (Gateway status, set-aside rows) are for an owner's token. */
export function createHealthRoute({ gateway, store, link, ownerOf }: HealthRouteOptions): Route {
  async function health(request: IncomingMessage): Promise<Record<string, unknown>> {
    const setAsideRows = store.setAsideRows();
    const healthy = gateway.status.connected && setAsideRows === 0 && link.up;
    const summary = healthy ? "ok" : "degraded";
    // Checking an owner link's kid needs the store: with Redis away, the details wait for it.
    if (!link.up || (await ownerOf(request)) === null) return { status: summary };
    return { status: summary, gateway: gateway.status, setAsideRows, ...link.health() };
  }

  return {
    name: "healthz",
    handles: (request) => request.url === "/healthz",
    async handle(request, response) {
      const body = await health(request);
      response
        .writeHead(200, { "content-type": "application/json", "cache-control": "no-store" })
        .end(JSON.stringify(body));
    },
  };
}
