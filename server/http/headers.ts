import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The security headers of every response Next.js serves (both pages and their assets), set in this
 * one place. Scripts run only from this origin or with the response's nonce: Next.js reads the nonce
 * from the request's Content-Security-Policy header and puts it on its own inline scripts
 * (node_modules/next/dist/docs/01-app/02-guides/content-security-policy.md), so the pages render per
 * request. Only the widget may be framed, and only by the Open WebUI origins; the dashboard (which
 * holds an owner token) may not be framed at all.
 */

export type PageHeaderOptions = {
  /** OPENWEBUI_ORIGINS: who may frame the widget. */
  frameAncestors: readonly string[];
  /** `next dev`: React's dev build needs eval (server error stacks), hot reload a WebSocket. */
  dev: boolean;
  nonce: string;
};

export function isWidgetPath(url: string): boolean {
  return url.startsWith("/embed/");
}

export function contentSecurityPolicy(
  url: string,
  { frameAncestors, dev, nonce }: PageHeaderOptions,
): string {
  const ancestors =
    isWidgetPath(url) && frameAncestors.length > 0 ? frameAncestors.join(" ") : "'none'";
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'${dev ? " 'unsafe-eval'" : ""}`,
    // React writes `style` attributes (the widget's measured layout, the dashboard's modal); no inline <style> carries data.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join("; ");
}

export function securityHeaders(url: string, options: PageHeaderOptions): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Security-Policy": contentSecurityPolicy(url, options),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
  };
  if (!isWidgetPath(url)) headers["X-Frame-Options"] = "DENY";
  return headers;
}

export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

/**
 * Sets the headers on the response, and the policy on the request too: that is where Next.js looks
 * for the nonce to put on the scripts it renders.
 */
export function applySecurityHeaders(
  request: IncomingMessage,
  response: ServerResponse,
  options: Omit<PageHeaderOptions, "nonce">,
): void {
  const headers = securityHeaders(request.url ?? "/", { ...options, nonce: newNonce() });
  request.headers["content-security-policy"] = headers["Content-Security-Policy"];
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
}
