import type { IncomingMessage, ServerResponse } from "node:http";
import { applySecurityHeaders } from "./headers.ts";

/**
 * The HTTP handler for everything that is not Socket.IO or /healthz: Next.js serves the pages and
 * their assets, with the security headers of server/http/headers.ts. A request Next.js fails on is
 * logged and answered 500, so no rejection escapes the server.
 */

export type NextRequestHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

export type PagesOptions = {
  handle: NextRequestHandler;
  frameAncestors: readonly string[];
  dev: boolean;
  log: (message: string) => void;
};

export function createPagesHandler({ handle, frameAncestors, dev, log }: PagesOptions) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    applySecurityHeaders(request, response, { frameAncestors, dev });
    handle(request, response).catch((error: unknown) => {
      log(`page ${request.method ?? "GET"} ${request.url ?? "/"} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("Internal Server Error");
      else response.destroy();
    });
  };
}
