import type { IncomingMessage, ServerResponse } from "node:http";
import { OPENWEBUI_URL_HEADER } from "../../lib/page-headers.ts";
import { applySecurityHeaders } from "./headers.ts";
import { requestPath } from "./request-target.ts";

/**
 * The HTTP handler for everything that is not Socket.IO or /healthz: Next.js serves the pages and
 * their assets, with the security headers of server/http/headers.ts. A path that is not valid
 * percent-encoding is refused here with 400: Next.js fails to decode it into a route parameter
 * (`/embed/chat/%E0%A4%A`) and answers 500 without a word. A request Next.js fails on is logged and
 * answered 500, so no rejection escapes the server. What a page needs of the configuration comes with
 * the request (lib/page-headers.ts): the pages never parse it themselves.
 */

export type NextRequestHandler = (
  request: IncomingMessage,
  response: ServerResponse,
) => Promise<void>;

export type PagesOptions = {
  handle: NextRequestHandler;
  frameAncestors: readonly string[];
  dev: boolean;
  /** OPENWEBUI_URL, or null: the dashboard's links into Open WebUI. */
  openWebUiUrl: string | null;
  log: (message: string) => void;
};

export function createPagesHandler({
  handle,
  frameAncestors,
  dev,
  openWebUiUrl,
  log,
}: PagesOptions) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    applySecurityHeaders(request, response, { frameAncestors, dev });
    // Set on every request, so a value the client sent never reaches the page.
    if (openWebUiUrl === null) delete request.headers[OPENWEBUI_URL_HEADER];
    else request.headers[OPENWEBUI_URL_HEADER] = openWebUiUrl;
    if (!isDecodablePath(request.url ?? "/")) {
      response
        .writeHead(400, { "content-type": "text/plain; charset=utf-8" })
        .end("Bad Request: the path is not valid percent-encoding");
      return;
    }
    handle(request, response).catch((error: unknown) => {
      log(
        `page ${request.method ?? "GET"} ${requestPath(request.url)} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      if (!response.headersSent)
        response
          .writeHead(500, { "content-type": "text/plain; charset=utf-8" })
          .end("Internal Server Error");
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
