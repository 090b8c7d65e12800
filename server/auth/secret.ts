import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config.ts";
import { preparePrivateDir, PRIVATE_FILE_MODE, restrictFiles } from "../store/data-dir.ts";

/**
 * The HS256 secret tab tokens are signed with: AUTH_SECRET, else DATA_DIR/auth-secret, generated on
 * first start. jose accepts a one-character key, so a short file is refused rather than trusted.
 */

export const MIN_SECRET_LENGTH = 32;

export class AuthSecretError extends Error {}

export function loadOrCreateAuthSecret(config: Pick<Config, "AUTH_SECRET" | "DATA_DIR">): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET;
  preparePrivateDir(config.DATA_DIR);
  const file = path.join(config.DATA_DIR, "auth-secret");
  if (existsSync(file)) {
    const secret = readFileSync(file, "utf8").trim();
    if (secret.length < MIN_SECRET_LENGTH) {
      throw new AuthSecretError(
        `${file} holds a secret of ${secret.length} characters, fewer than ${MIN_SECRET_LENGTH}: replace it, or delete it to have a new one generated (tokens signed with the old one stop working)`,
      );
    }
    restrictFiles(file);
    return secret;
  }
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: PRIVATE_FILE_MODE });
  return secret;
}
