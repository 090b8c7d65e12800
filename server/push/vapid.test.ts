import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadVapidKeys } from "./vapid.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("VAPID keys", () => {
  it("are generated once into DATA_DIR/vapid.json (0600) and read back after", () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), "vapid-")), "data");
    dirs.push(path.dirname(dataDir));
    const first = loadVapidKeys({ dataDir });
    expect(first.publicKey).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect(statSync(path.join(dataDir, "vapid.json")).mode & 0o777).toBe(0o600);
    expect(loadVapidKeys({ dataDir })).toEqual(first);
  });

  it("come from the environment when both are set", () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "vapid-"));
    dirs.push(dataDir);
    expect(loadVapidKeys({ dataDir, publicKey: "pub", privateKey: "priv" })).toEqual({ publicKey: "pub", privateKey: "priv" });
  });
});
