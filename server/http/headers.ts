/**
 * Response headers for pages. The widget lives in Open WebUI's sandboxed iframe, so only its routes
 * may be framed, and only by the configured Open WebUI origins.
 */
export function securityHeaders(url: string, openWebUiOrigins: readonly string[]): Record<string, string> {
  const embeddable = url.startsWith("/embed/");
  const ancestors = embeddable ? ["'self'", ...openWebUiOrigins].join(" ") : "'self'";
  return {
    "Content-Security-Policy": `frame-ancestors ${ancestors}`,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
  };
}
