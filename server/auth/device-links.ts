import { randomBytes } from "node:crypto";
import type { DeviceLink, DeviceMinter } from "../../lib/devices.ts";
import type { DeviceStore } from "./device-store.ts";
import { mintTabToken } from "./tokens.ts";

/**
 * Device links: an owner's dashboard link for one device (a phone scanning the QR code), valid at most
 * 30 days (and never longer than MAX_TOKEN_DAYS allows), carrying the device's own key id so it can be
 * revoked alone. The installed app keeps the token in localStorage (`device=1` in the link says so).
 * Only an owner link (or the `owner-link` command on the server) mints one, and the device records
 * which: a device link never mints another, so revoking the owner links ends every link they led to.
 */

export const DEVICE_LINK_MAX_DAYS = 30;

const DAY_MS = 24 * 3600 * 1000;

/** Key ids of device links start with this, owner links' never do. */
export const DEVICE_KID_PREFIX = "device-";

export async function mintDeviceLink(options: {
  store: DeviceStore;
  key: Uint8Array;
  owner: string;
  name: string;
  mintedBy: DeviceMinter;
  maxTokenDays: number;
  baseUrl: string;
  now: number;
}): Promise<DeviceLink> {
  const days = Math.min(DEVICE_LINK_MAX_DAYS, options.maxTokenDays);
  const kid = `${DEVICE_KID_PREFIX}${randomBytes(12).toString("base64url")}`;
  const ttlSeconds = Math.floor((days * DAY_MS) / 1000);
  const expiresAt = options.now + ttlSeconds * 1000;
  await options.store.add({
    kid,
    owner: options.owner,
    name: options.name,
    createdAt: options.now,
    expiresAt,
    mintedBy: options.mintedBy,
  });
  const token = await mintTabToken(options.key, {
    userId: options.owner,
    ttlSeconds,
    kid,
    now: options.now,
  });
  return {
    url: `${options.baseUrl.replace(/\/$/, "")}/?device=1&token=${token}`,
    kid,
    name: options.name,
    expiresAt,
  };
}
