// Makes sure the test-only dependencies outside the repo are present: the pinned real
// OpenClaw Gateway and the pinned Ruff (each in a cache folder), Chromium for the browser tests and
// redis-server for the several-instances tests.
// Run as `node test/setup/ensure-test-deps.ts` (npm `pretest`, CI). Fast when all is there.
// With `--open-webui` it also installs the pinned real Open WebUI (npm run test:openwebui).
// `--gateway-only`: the Gateway and redis-server (npm `bench`: its figures need no browser).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import {
  installedOpenWebuiVersion,
  installOpenWebui,
  OPEN_WEBUI_VERSION,
  openWebuiCacheDir,
} from "../support/open-webui.ts";
import {
  installedOpenclawVersion,
  OPENCLAW_VERSION,
  openclawBin,
  openclawCacheDir,
} from "../support/real-gateway.ts";
import { redisServerBinary } from "../support/redis-server.ts";
import { installedRuffVersion, installRuff, RUFF_VERSION, ruffCacheDir } from "../support/ruff.ts";

const MIN_NODE = { major: 24, minor: 16 } as const;
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const REDIS_SERVER = redisServerBinary();

function log(message: string): void {
  console.log(`[ensure-test-deps] ${message}`);
}

function fail(message: string): never {
  console.error(`[ensure-test-deps] ${message}`);
  process.exit(1);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const result = spawnSync(command, args, { stdio: "inherit", env });
  return result.status === 0;
}

function ensureNode(): void {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major < MIN_NODE.major || (major === MIN_NODE.major && minor < MIN_NODE.minor)) {
    fail(
      `Node ${process.versions.node} is too old; run with Node >= ${MIN_NODE.major}.${MIN_NODE.minor} (e.g. PATH=$PWD/node_modules/.bin:$PATH).`,
    );
  }
}

/** Whether `name` is installed at the pinned `version` in `cacheDir` (said so when it is). */
function present(
  name: string,
  version: string,
  cacheDir: string,
  installed: string | null,
): boolean {
  if (installed !== version) return false;
  log(`${name} ${version} present in ${cacheDir}`);
  return true;
}

function ensureGateway(): void {
  const cacheDir = openclawCacheDir();
  const installed = installedOpenclawVersion(cacheDir);
  if (present("openclaw", OPENCLAW_VERSION, cacheDir, installed)) return;
  log(
    `installing openclaw@${OPENCLAW_VERSION} into ${cacheDir} (${installed ? `found ${installed}` : "not installed"}; about 840 MB, a few minutes the first time)`,
  );
  // openclaw's preinstall refuses old Node: put this Node (24) first for npm and its scripts.
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
  const ok = run(
    "npm",
    ["install", "--prefix", cacheDir, `openclaw@${OPENCLAW_VERSION}`, "--no-audit", "--no-fund"],
    env,
  );
  const after = installedOpenclawVersion(cacheDir);
  if (!ok || after !== OPENCLAW_VERSION) {
    fail(
      `could not install openclaw@${OPENCLAW_VERSION} into ${cacheDir} (found ${after ?? "nothing"} at ${openclawBin(cacheDir)}); retry: npm install --prefix ${cacheDir} openclaw@${OPENCLAW_VERSION}`,
    );
  }
  log(`openclaw ${OPENCLAW_VERSION} installed`);
}

/** Debian packages the tests run: chromium (browser tests) and redis-server (the several-instances tests). */
function ensureDebianPackage(name: string, binary: string, override: string): void {
  if (existsSync(binary)) {
    log(`${name} present at ${binary}`);
    return;
  }
  const isRoot = process.getuid?.() === 0;
  const hasApt = existsSync("/usr/bin/apt-get");
  if (isRoot && hasApt && !process.env[override]) {
    log(`installing ${name} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    if (
      run("apt-get", ["update"], env) &&
      run("apt-get", ["install", "-y", name], env) &&
      existsSync(binary)
    ) {
      log(`${name} installed`);
      return;
    }
  }
  fail(
    `${name} not found at ${binary}: install it with \`sudo apt-get install -y ${name}\` (Debian/Ubuntu) or set ${override}.`,
  );
}

/** Ruff lints and formats the Open WebUI filter in npm test (from PyPI, a few MB, seconds). */
function ensureRuff(): void {
  const cacheDir = ruffCacheDir();
  const installed = installedRuffVersion(cacheDir);
  if (present("ruff", RUFF_VERSION, cacheDir, installed)) return;
  log(
    `installing ruff==${RUFF_VERSION} into ${cacheDir} (${installed ? `found ${installed}` : "not installed"})`,
  );
  const failure = installRuff(cacheDir);
  if (failure) fail(`could not install ruff ${RUFF_VERSION}: ${failure}`);
  log(`ruff ${RUFF_VERSION} installed`);
}

function ensureOpenWebui(): void {
  const cacheDir = openWebuiCacheDir();
  const installed = installedOpenWebuiVersion(cacheDir);
  if (present("open-webui", OPEN_WEBUI_VERSION, cacheDir, installed)) return;
  log(
    `installing open-webui==${OPEN_WEBUI_VERSION} into ${cacheDir}/venv (${installed ? `found ${installed}` : "not installed"}; about 3.3 GB, about 10 minutes the first time)`,
  );
  const failure = installOpenWebui(cacheDir, log);
  if (failure) fail(`could not install open-webui ${OPEN_WEBUI_VERSION}: ${failure}`);
  log(`open-webui ${OPEN_WEBUI_VERSION} installed`);
}

ensureNode();
ensureGateway();
if (!process.argv.includes("--gateway-only")) {
  ensureRuff();
  ensureDebianPackage("chromium", CHROMIUM, "CHROMIUM_PATH");
}
// The benchmark's cross-instance figure needs Redis too.
ensureDebianPackage("redis-server", REDIS_SERVER, "REDIS_SERVER_PATH");
if (process.argv.includes("--open-webui")) ensureOpenWebui();
