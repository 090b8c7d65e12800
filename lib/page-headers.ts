/**
 * What the server hands a page with each request, as a request header it sets itself
 * (server/http/pages.ts) and no client can supply: the configuration a page needs, parsed once at
 * start, so no page reads or parses the environment.
 */

/** Open WebUI's address (`OPENWEBUI_URL`), absent when it is not configured: the dashboard links each chat into it. */
export const OPENWEBUI_URL_HEADER = "x-openclaw-asks-openwebui-url";
