import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Redis } from "ioredis";
import { z } from "zod";
import webpush from "web-push";
import { PRIVATE_FILE_MODE, preparePrivateDir, restrictFiles } from "../store/data-dir.ts";
import { parseStored, unavailableAs } from "../store/redis-scripts.ts";

/**
 * The VAPID key pair (RFC 8292) that signs every push this service sends: from VAPID_PUBLIC_KEY and
 * VAPID_PRIVATE_KEY when both are set, otherwise generated once and kept, so subscriptions survive
 * restarts: one process keeps it in DATA_DIR/vapid.json (0600); several instances in their Redis,
 * where the first instance's pair wins and every other reads it.
 */

export type VapidKeys = { publicKey: string; privateKey: string };

const Keys = z.object({ publicKey: z.string().min(80), privateKey: z.string().min(40) });

type VapidSource = { publicKey?: string; privateKey?: string };

const fromEnvironment = (options: VapidSource): VapidKeys | null => (options.publicKey && options.privateKey ? { publicKey: options.publicKey, privateKey: options.privateKey } : null);

export function loadVapidKeys(options: VapidSource & { dataDir: string }): VapidKeys {
  const given = fromEnvironment(options);
  if (given) return given;
  const file = path.join(options.dataDir, "vapid.json");
  if (existsSync(file)) {
    restrictFiles(file);
    const parsed = Keys.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success) throw new Error(`${file} is not a VAPID key pair: delete it to generate a new one (owners then opt in again)`);
    return parsed.data;
  }
  preparePrivateDir(options.dataDir);
  const keys = webpush.generateVAPIDKeys();
  writeFileSync(file, `${JSON.stringify(keys)}\n`, { mode: PRIVATE_FILE_MODE });
  return keys;
}

/** The deployment's pair in Redis (`<prefix>vapid`): written once (SET NX), whichever instance starts first. */
export async function loadSharedVapidKeys(options: VapidSource & { redis: Redis; key: string }): Promise<VapidKeys> {
  const given = fromEnvironment(options);
  if (given) return given;
  const { redis, key } = options;
  await unavailableAs(redis, () => redis.set(key, JSON.stringify(webpush.generateVAPIDKeys()), "NX"));
  const stored = await unavailableAs(redis, () => redis.get(key));
  const keys = parseStored(Keys, stored);
  if (!keys) throw new Error(`Redis key ${key} is not a VAPID key pair: delete it to generate a new one (owners then opt in again)`);
  return keys;
}
