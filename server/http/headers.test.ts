import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, securityHeaders } from "./headers.ts";

const origins = ["https://chat.example.com", "http://localhost:8080"];
const directives = (policy: string) =>
  new Map(
    policy.split("; ").map((part) => [part.split(" ")[0]!, part.slice(part.indexOf(" ") + 1)]),
  );

describe("security headers", () => {
  it("lets only this origin and the response's nonce run scripts in production", () => {
    const policy = directives(
      contentSecurityPolicy("/", { frameAncestors: origins, dev: false, nonce: "abc123" }),
    );
    expect(policy.get("script-src")).toBe("'self' 'nonce-abc123'");
    expect(policy.get("object-src")).toBe("'none'");
    expect(policy.get("base-uri")).toBe("'none'");
  });

  it("adds only eval for React's dev build under next dev", () => {
    const policy = directives(
      contentSecurityPolicy("/", { frameAncestors: origins, dev: true, nonce: "abc123" }),
    );
    expect(policy.get("script-src")).toBe("'self' 'nonce-abc123' 'unsafe-eval'");
  });

  it("forbids framing the dashboard", () => {
    const headers = securityHeaders("/?token=x", {
      frameAncestors: origins,
      dev: false,
      nonce: "n",
    });
    expect(headers["X-Frame-Options"]).toBe("DENY");
    expect(directives(headers["Content-Security-Policy"]!).get("frame-ancestors")).toBe("'none'");
  });

  it("lets only the Open WebUI origins frame the widget", () => {
    const headers = securityHeaders("/embed/chat/c1?token=x", {
      frameAncestors: origins,
      dev: false,
      nonce: "n",
    });
    expect(headers["X-Frame-Options"]).toBeUndefined();
    expect(directives(headers["Content-Security-Policy"]!).get("frame-ancestors")).toBe(
      "https://chat.example.com http://localhost:8080",
    );
    const unconfigured = securityHeaders("/embed/chat/c1", {
      frameAncestors: [],
      dev: false,
      nonce: "n",
    });
    expect(directives(unconfigured["Content-Security-Policy"]!).get("frame-ancestors")).toBe(
      "'none'",
    );
  });
});
