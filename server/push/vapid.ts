import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import webpush from "web-push";
import { PRIVATE_FILE_MODE, preparePrivateDir, restrictFiles } from "../store/data-dir.ts";

/**
 * The VAPID key pair (RFC 8292) that signs every push this service sends: from VAPID_PUBLIC_KEY and
 * VAPID_PRIVATE_KEY when both are set, otherwise generated on first start into DATA_DIR/vapid.json
 * (0600) and read from there afterwards, so subscriptions survive restarts.
 */

export type VapidKeys = { publicKey: string; privateKey: string };

const Keys = z.object({ publicKey: z.string().min(80), privateKey: z.string().min(40) });

export function loadVapidKeys(options: { dataDir: string; publicKey?: string; privateKey?: string }): VapidKeys {
  if (options.publicKey && options.privateKey) return { publicKey: options.publicKey, privateKey: options.privateKey };
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
