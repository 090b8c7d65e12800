/**
 * The request target (`GET <target> HTTP/1.1`) as every route reads it. Only origin-form is served
 * (`/path?query`): that is what a browser, Open WebUI and a proxy in front send. Anything else (`*`,
 * an absolute URL, `http://[/…` that does not parse, `//…` that `new URL(target, base)` reads as a
 * host) is answered 400 by the server before any route looks at it, so no route throws on one and no
 * log line carries its query (a token).
 */

const BASE = "http://target.invalid";

/** The target as a URL, or null when it is not origin-form or does not parse. */
export function requestTarget(target: string | undefined): URL | null {
  if (target === undefined || !target.startsWith("/") || target.startsWith("//")) return null;
  try {
    // Appended, not resolved against a base: nothing in the target can name a host.
    return new URL(`${BASE}${target}`);
  } catch {
    return null;
  }
}

/** The target's path (no query: it may hold a token), or "" when the target is not served. */
export function requestPath(target: string | undefined): string {
  return requestTarget(target)?.pathname ?? "";
}
