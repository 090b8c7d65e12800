import type { IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../../lib/error-message.ts";

/**
 * One HTTP route of the server: which requests it takes and how it answers them. The routes are tried
 * in order; the first that takes a request answers it.
 */
export type Route = {
  /** Names the route in a failure's log line. */
  name: string;
  handles(request: IncomingMessage): boolean;
  handle(request: IncomingMessage, response: ServerResponse): void | Promise<void>;
};

/**
 * The server's request listener over its table of routes: a request no route takes is a 404, and a
 * route that throws is logged (its path only: a query may hold a token) and answered 500, or cut
 * off when its answer had begun.
 */
export function routeRequests(routes: readonly Route[], log: (message: string) => void) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const route = routes.find((candidate) => candidate.handles(request));
    if (!route) {
      response.writeHead(404).end();
      return;
    }
    const failed = (error: unknown) => {
      log(`${route.name} ${request.url?.split("?")[0] ?? ""} failed: ${errorMessage(error)}`);
      if (!response.headersSent)
        response
          .writeHead(500, { "content-type": "text/plain; charset=utf-8" })
          .end("Internal Server Error");
      else response.destroy();
    };
    try {
      Promise.resolve(route.handle(request, response)).catch(failed);
    } catch (error) {
      failed(error);
    }
  };
}
