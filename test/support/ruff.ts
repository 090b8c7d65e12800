// The pinned Ruff that lints and formats the Open WebUI filter, kept in a cache folder outside the
// clone (as the Gateway is): `pip install --target` puts its one binary under bin/.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const RUFF_VERSION = "0.17.6";

export function ruffCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cacheRoot, `ruff-${RUFF_VERSION}`);
}

export function ruffBin(cacheDir: string = ruffCacheDir()): string {
  return join(cacheDir, "bin", "ruff");
}

/** The version the cached Ruff reports ("ruff 0.17.6"), or null when there is none. */
export function installedRuffVersion(cacheDir: string = ruffCacheDir()): string | null {
  const bin = ruffBin(cacheDir);
  if (!existsSync(bin)) return null;
  const result = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return result.status === 0 ? (/^ruff (\S+)/.exec(result.stdout)?.[1] ?? null) : null;
}

/** Installs the pinned Ruff wheel from PyPI into `cacheDir`. Returns what failed, or null. */
export function installRuff(cacheDir: string = ruffCacheDir()): string | null {
  const args = [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--quiet",
    "--no-deps",
    "--root-user-action=ignore",
    "--only-binary",
    ":all:",
    "--upgrade",
    "--target",
    cacheDir,
    `ruff==${RUFF_VERSION}`,
  ];
  const result = spawnSync("python3", args, { stdio: "inherit" });
  if (result.status !== 0)
    return `python3 ${args.join(" ")} exited with ${result.status ?? result.signal}`;
  const installed = installedRuffVersion(cacheDir);
  return installed === RUFF_VERSION
    ? null
    : `found ${installed ?? "nothing"} at ${ruffBin(cacheDir)}`;
}
