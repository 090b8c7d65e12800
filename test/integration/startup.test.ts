// Starting `node server/main.ts` as a supervisor does (issue 11, items 11, 13, 14): a start that fails
// exits non-zero with one line saying why; socket.io debug logging (which prints decoded frames,
// secret values included) is refused unless ALLOW_UNSAFE_DEBUG=1; a short auth-secret file is refused;
// a second deployment on the same Redis and REDIS_KEY_PREFIX with another AUTH_SECRET is refused, and
// so is its `npm run owner-link` (issue 22, item 2). Every case here stops before Next.js, so no UI
// build is needed.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deploymentMarker } from "../../server/store/deployment-marker.ts";
import { PROJECT_ROOT } from "../support/app-server.ts";
import { startRedis, type TestRedis } from "../support/redis-server.ts";

type Run = { code: number | null; stdout: string; stderr: string };

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "asks-startup-"));
  dirs.push(dir);
  return dir;
}

/** The environment of a bare start: nothing inherited but PATH and HOME, so the test's own DEBUG or AUTH_SECRET cannot leak in. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    PORT: "0",
    HOST: "127.0.0.1",
    OPENCLAW_GATEWAY_URL: "ws://127.0.0.1:9",
    ...extra,
  };
}

/** Runs `node server/main.ts` until it exits, or until `until` matches its output (then it is stopped by pid). */
function start(extra: Record<string, string>, until?: RegExp): Promise<Run> {
  return run(["server/main.ts"], extra, until);
}

/** Runs `npm run owner-link [-- args]` (server/owner-link.ts) until it exits. */
function ownerLink(args: string[], extra: Record<string, string>): Promise<Run> {
  return run(["server/owner-link.ts", ...args], extra);
}

function run(args: string[], extra: Record<string, string>, until?: RegExp): Promise<Run> {
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: env(extra),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run: Run = { code: null, stdout: "", stderr: "" };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(
          `${args[0]} neither exited nor printed ${String(until)} within 45 s:\n${run.stdout}\n${run.stderr}`,
        ),
      );
    }, 45_000);
    const check = () => {
      if (until && until.test(run.stdout + run.stderr)) child.kill("SIGKILL");
    };
    child.stdout.on("data", (chunk: Buffer) => {
      run.stdout += chunk.toString("utf8");
      check();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      run.stderr += chunk.toString("utf8");
      check();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      run.code = code;
      resolve(run);
    });
  });
}

const lines = (text: string) => text.split("\n").filter((line) => line.trim() !== "");
const SECRET = "startup-test-secret-startup-test-secret-0123";

describe("a start that fails", () => {
  it("an unusable database exits non-zero with one line saying why (no stack, no exit 0)", async () => {
    const dir = dataDir();
    writeFileSync(
      path.join(dir, "asks.sqlite"),
      "this is not a database, only text long enough to stand where a SQLite header would be.".repeat(
        2,
      ),
    );
    const run = await start({ DATA_DIR: dir, AUTH_SECRET: SECRET });
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^OpenClaw Asks could not start: .*asks\.sqlite.*not a database/),
    ]);
  });

  it("a bad variable exits non-zero with one line naming it", async () => {
    const run = await start({ DATA_DIR: dataDir(), AUTH_SECRET: SECRET, PORT: "eighty" });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/could not start: Invalid configuration: PORT /),
    ]);
  });
});

describe("DEBUG=socket.io* (socket.io-parser prints decoded frames, secret answers included)", () => {
  for (const debug of ["socket.io*", "*", "socket.io-parser", "engine,socket.io:socket"]) {
    it(`DEBUG=${debug} is refused at start with one line, before anything listens`, async () => {
      const run = await start({ DATA_DIR: dataDir(), AUTH_SECRET: SECRET, DEBUG: debug });
      expect(run.code).toBe(1);
      expect(lines(run.stderr)).toEqual([
        expect.stringMatching(
          /DEBUG .*socket\.io debug logging.*secret values.*ALLOW_UNSAFE_DEBUG=1/,
        ),
      ]);
      expect(run.stdout).not.toMatch(/is running on/);
    });
  }

  it("ALLOW_UNSAFE_DEBUG=1 lets it run, with one line saying so; other DEBUG names are no reason to refuse", async () => {
    const unsafe = await start(
      { DATA_DIR: dataDir(), AUTH_SECRET: SECRET, DEBUG: "socket.io*", ALLOW_UNSAFE_DEBUG: "1" },
      /ALLOW_UNSAFE_DEBUG=1: /,
    );
    expect(unsafe.stderr).toMatch(
      /ALLOW_UNSAFE_DEBUG=1: socket\.io debug logging is on and prints every frame, secret values included/,
    );
    expect(unsafe.stderr).not.toMatch(/could not start/);
    const other = await start({
      DATA_DIR: dataDir(),
      AUTH_SECRET: SECRET,
      DEBUG: "express:*,-socket.io*",
      PORT: "eighty",
    });
    expect(lines(other.stderr)).toEqual([expect.stringMatching(/Invalid configuration: PORT /)]);
  });
});

describe("the auth-secret file", () => {
  it("an existing auth-secret shorter than 32 characters is refused with one clear line", async () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "auth-secret"), "x\n");
    const run = await start({ DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(
        /could not start: .*auth-secret holds a secret of 1 characters, fewer than 32/,
      ),
    ]);
  });

  it("a generated secret, DATA_DIR and the database are readable by the service's user only (0600 / 0700)", async () => {
    const parent = dataDir();
    const dir = path.join(parent, "data");
    // Stops after the store is open: an unreachable Next build or not, the files exist by then.
    await start({ DATA_DIR: dir, NODE_ENV: "production" }, /is running on|could not start/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const file of ["auth-secret", "asks.sqlite"])
      expect(statSync(path.join(dir, file)).mode & 0o777, file).toBe(0o600);
  });
});

describe("two deployments on one Redis (issue 22, item 2)", () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  /** Every key under the prefix with its value: what a refused start must leave as it was. */
  /**
   * What a deployment keeps under `prefix`, but its instances' heartbeats: those lapse by design
   * (HEARTBEAT_TTL_MS after the instance that wrote one stopped), so whether one is still there says
   * how long the steps took, not what they wrote.
   */
  async function contents(prefix: string): Promise<Record<string, unknown>> {
    const entries: Record<string, unknown> = {};
    const heartbeat = `${prefix}presence:instance:`;
    const keys = (await client.keys(`${prefix}*`)).filter((key) => !key.startsWith(heartbeat));
    for (const key of keys.sort()) {
      const type = await client.type(key);
      entries[key] =
        type === "string"
          ? await client.get(key)
          : type === "hash"
            ? await client.hgetall(key)
            : type;
    }
    return entries;
  }

  it("22.2 a second deployment with another AUTH_SECRET on the same REDIS_KEY_PREFIX refuses to start, and so does its owner-link, with one line naming the prefix and nothing written; the first deployment's instances and another prefix start", async () => {
    const prefix = "two-deployments:";
    const OTHER = "another-deployment-secret-another-deployment-0123";
    const first = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, AUTH_SECRET: SECRET };
    const second = { ...first, AUTH_SECRET: OTHER };

    // The first deployment starts (past the store: the build may be there or not) and its owner link is minted.
    const started = await start({ DATA_DIR: dataDir(), ...first }, /is running on|could not start/);
    expect(started.stdout + started.stderr).not.toMatch(/REDIS_KEY_PREFIX|another deployment/);
    expect((await ownerLink([], { DATA_DIR: dataDir(), ...first })).code).toBe(0);
    const before = await contents(prefix);
    expect(Object.keys(before).length).toBeGreaterThan(1);

    const refused = [
      await start({ DATA_DIR: dataDir(), ...second }),
      await ownerLink([], { DATA_DIR: dataDir(), ...second }),
      await ownerLink(["--revoke"], { DATA_DIR: dataDir(), ...second }),
      await ownerLink(["--device", "Mallory's phone"], { DATA_DIR: dataDir(), ...second }),
    ];
    for (const [index, attempt] of refused.entries()) {
      expect(attempt.code, `attempt ${index}`).toBe(1);
      expect(lines(attempt.stderr), `attempt ${index}`).toEqual([
        expect.stringMatching(
          /^(OpenClaw Asks could not start|owner-link): REDIS_KEY_PREFIX "two-deployments:" is in use in this Redis by another deployment, with another AUTH_SECRET: give each deployment its own REDIS_KEY_PREFIX/,
        ),
      ]);
      expect(attempt.stdout, `attempt ${index}`).not.toMatch(/is running on|token=/);
      // Neither secret nor either marker is ever printed.
      for (const hidden of [SECRET, OTHER, deploymentMarker(SECRET), deploymentMarker(OTHER)])
        expect(attempt.stdout + attempt.stderr).not.toContain(hidden);
    }
    // Nothing of the first deployment changed: no owner link revoked, no device added.
    expect(await contents(prefix)).toEqual(before);

    // Another instance of the first deployment starts; the second deployment starts under a prefix of its own.
    const again = await start({ DATA_DIR: dataDir(), ...first }, /is running on|could not start/);
    expect(again.stdout + again.stderr).not.toMatch(/REDIS_KEY_PREFIX/);
    const own = await ownerLink([], {
      DATA_DIR: dataDir(),
      ...second,
      REDIS_KEY_PREFIX: "second-deployment:",
    });
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(
      /^Dashboard \(owner "owner", valid 24 h\): http:\/\/127\.0\.0\.1:0\/\?token=/m,
    );
  });
});
