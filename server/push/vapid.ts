import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Redis } from "ioredis";
import webpush from "web-push";
import { z } from "zod";
import { derivedKey } from "../auth/keys.ts";
import { preparePrivateDir, PRIVATE_FILE_MODE, restrictFiles } from "../store/data-dir.ts";
import { Flag, parseStored, redisScripts, unavailableAs } from "../store/redis-scripts.ts";

/**
 * The VAPID key pair (RFC 8292) that signs every push this service sends: from VAPID_PUBLIC_KEY and
 * VAPID_PRIVATE_KEY when both are set, otherwise generated once and kept, so subscriptions survive
 * restarts: one process keeps it in DATA_DIR/vapid.json (0600); several instances in their Redis,
 * where the first instance's pair wins and every other reads it.
 *
 * The private key is kept encrypted (AES-256-GCM with a key derived from AUTH_SECRET, the public key
 * as associated data): whoever reads Redis or the file cannot sign pushes to the owners' phones with
 * it. A pair an earlier version kept in clear is read once and written back encrypted.
 */

export type VapidKeys = { publicKey: string; privateKey: string };

const PublicKey = z.string().min(80);
const Keys = z.object({ publicKey: PublicKey, privateKey: z.string().min(40) });
/** As stored: encrypted, or (by an earlier version) in clear. */
const Stored = z.union([z.object({ publicKey: PublicKey, encryptedPrivateKey: z.string() }), Keys]);
type Stored = z.infer<typeof Stored>;

type VapidSource = { publicKey?: string; privateKey?: string };
/** What reading the kept pair needs: the secret its private key is encrypted with, and where to say it was rewritten. */
type Keeping = { authSecret: string; log: (message: string) => void };

const fromEnvironment = (options: VapidSource): VapidKeys | null =>
  options.publicKey && options.privateKey
    ? { publicKey: options.publicKey, privateKey: options.privateKey }
    : null;

function encryptionKey(authSecret: string): Buffer {
  return derivedKey(authSecret, "vapidPrivateKey");
}

/** `v1.<iv>.<ciphertext>.<tag>`, base64url. */
function sealed(keys: VapidKeys, authSecret: string): Stored {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", encryptionKey(authSecret), iv).setAAD(
    Buffer.from(keys.publicKey),
  );
  const ciphertext = Buffer.concat([cipher.update(keys.privateKey, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return {
    publicKey: keys.publicKey,
    encryptedPrivateKey: `v1.${iv.toString("base64url")}.${ciphertext.toString("base64url")}.${tag.toString("base64url")}`,
  };
}

/** The pair, or null when the private key does not decrypt with this secret (another AUTH_SECRET, or altered). */
function opened(stored: Stored, authSecret: string): VapidKeys | null {
  if ("privateKey" in stored) return stored;
  const [version, iv, ciphertext, tag] = stored.encryptedPrivateKey.split(".");
  if (version !== "v1" || !iv || !ciphertext || !tag) return null;
  try {
    const decipher = createDecipheriv(
      "aes-256-gcm",
      encryptionKey(authSecret),
      Buffer.from(iv, "base64url"),
    ).setAAD(Buffer.from(stored.publicKey));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const privateKey = Buffer.concat([
      decipher.update(Buffer.from(ciphertext, "base64url")),
      decipher.final(),
    ]).toString("utf8");
    return { publicKey: stored.publicKey, privateKey };
  } catch {
    return null;
  }
}

const replaceHint = "delete it to generate a new pair (owners then opt in again)";

function readable(stored: Stored | null, where: string, authSecret: string): VapidKeys {
  if (!stored) throw new Error(`${where} is not a VAPID key pair: ${replaceHint}`);
  const keys = opened(stored, authSecret);
  if (!keys)
    throw new Error(
      `${where} does not decrypt with this AUTH_SECRET (it was written with another one): set that AUTH_SECRET again, or ${replaceHint}`,
    );
  return keys;
}

function writePrivately(file: string, stored: Stored): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(stored)}\n`, { mode: PRIVATE_FILE_MODE });
  renameSync(temporary, file);
}

export function loadVapidKeys(options: VapidSource & Keeping & { dataDir: string }): VapidKeys {
  const given = fromEnvironment(options);
  if (given) return given;
  const file = path.join(options.dataDir, "vapid.json");
  if (existsSync(file)) {
    restrictFiles(file);
    const stored = parseStored(Stored, readFileSync(file, "utf8"));
    const keys = readable(stored, file, options.authSecret);
    if (stored && "privateKey" in stored) {
      writePrivately(file, sealed(keys, options.authSecret));
      options.log(`${file} held the VAPID private key in clear: written back encrypted`);
    }
    return keys;
  }
  preparePrivateDir(options.dataDir);
  const keys = webpush.generateVAPIDKeys();
  writePrivately(file, sealed(keys, options.authSecret));
  return keys;
}

/** Replaces a value only if it is still the one read: instances starting together rewrite a clear pair once. */
const REPLACE_IF_UNCHANGED = `
if redis.call('GET', ARGV[2]) ~= ARGV[3] then return 0 end
redis.call('SET', ARGV[2], ARGV[4])
return 1
`;

/** The deployment's pair in Redis (`<prefix>vapid`): written once (SET NX), whichever instance starts first. */
export async function loadSharedVapidKeys(
  options: VapidSource & Keeping & { redis: Redis; key: string },
): Promise<VapidKeys> {
  const given = fromEnvironment(options);
  if (given) return given;
  const { redis, key, authSecret } = options;
  await unavailableAs(redis, () =>
    redis.set(key, JSON.stringify(sealed(webpush.generateVAPIDKeys(), authSecret)), "NX"),
  );
  const text = await unavailableAs(redis, () => redis.get(key));
  const stored = parseStored(Stored, text);
  const keys = readable(stored, `Redis key ${key}`, authSecret);
  if (stored && "privateKey" in stored) {
    // The scripts' first argument is a key prefix; this one is given the whole key.
    const replace = redisScripts(redis, "", {
      replace: { lua: REPLACE_IF_UNCHANGED, reply: Flag },
    });
    if (await replace("replace", key, text!, JSON.stringify(sealed(keys, authSecret))))
      options.log(`Redis key ${key} held the VAPID private key in clear: written back encrypted`);
  }
  return keys;
}
