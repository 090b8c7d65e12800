import { describe, expect, it } from "vitest";
import { derivedKey, type KeyPurpose } from "./keys.ts";

const SECRET = "s".repeat(40);

// Each key as the releases before this table derived it: a changed label would invalidate what was
// signed or sealed with it (push links, subscriptions, the kept VAPID pair, the filter's signatures).
const KNOWN: Record<KeyPurpose, string> = {
  pushActions: "311ab3041cdb33ad",
  openWebuiValve: "20a1df6f6edb6638",
  openWebuiFilter: "604dc62ab0fd7d7d",
  vapidPrivateKey: "39ba1cc63cdc4607",
  pushSubscriptions: "64fdb0442df830f8",
  deploymentMarker: "e25d5cc1d50792ff",
};

describe("the keys derived from AUTH_SECRET", () => {
  it.each(Object.entries(KNOWN))("%s is the key it always was", (purpose, start) => {
    expect(
      derivedKey(SECRET, purpose as KeyPurpose)
        .toString("hex")
        .startsWith(start),
    ).toBe(true);
  });

  it("gives each purpose its own key, and another secret other keys", () => {
    const purposes = Object.keys(KNOWN) as KeyPurpose[];
    const keys = purposes.map((purpose) => derivedKey(SECRET, purpose).toString("hex"));
    const others = purposes.map((purpose) => derivedKey("t".repeat(40), purpose).toString("hex"));
    expect(new Set([...keys, ...others]).size).toBe(purposes.length * 2);
  });
});
