import type { IncomingMessage, ServerResponse } from "node:http";
import { applySecurityHeaders } from "./headers.ts";

/**
 * The HTTP handler for everything that is not Socket.IO or /healthz: Next.js serves the pages and
 * their assets, with the security headers of server/http/headers.ts. A path that is not valid
 * percent-encoding is refused here with 400: Next.js fails to decode it into a route parameter
 * (`/embed/chat/%E0%A4%A`) and answers 500 without a word. A request Next.js fails on is logged and
 * answered 500, so no rejection escapes the server.
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
    if (!isDecodablePath(request.url ?? "/")) {
      response.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end("Bad Request: the path is not valid percent-encoding");
      return;
    }
    handle(request, response).catch((error: unknown) => {
      log(`page ${request.method ?? "GET"} ${request.url ?? "/"} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("Internal Server Error");
      else response.destroy();
    });
  };
}

/** Whether the URL's path decodes: every `%` starts two hex digits, and the bytes they make are UTF-8. */
function isDecodablePath(url: string): boolean {
  const path = url.split("?", 1)[0]!.split("#", 1)[0]!;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
