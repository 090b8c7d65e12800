import { renderUnicodeCompact } from "uqr";
import { systemClock } from "../lib/clock.ts";
import { DeviceName } from "../lib/devices.ts";
import { errorMessage } from "../lib/error-message.ts";
import { mintDeviceLink } from "./auth/device-links.ts";
import { describeOwnerLink, mintOwnerLink, revokeOwnerLinks } from "./auth/owner-links.ts";
import { loadOrCreateAuthSecret } from "./auth/secret.ts";
import { secretKey } from "./auth/tokens.ts";
import { parseConfig } from "./config.ts";
import { openBackend } from "./store/backend.ts";

/**
 * `npm run owner-link`: prints a new dashboard link for the first owner, valid OWNER_LINK_HOURS.
 * `npm run owner-link -- --revoke` first revokes every owner link minted so far and every device link
 * minted through one (a running server refuses them from then on and closes their open sockets at its
 * next check), then prints a new one. `npm run owner-link -- --device "Alice's phone"` prints a device
 * link (and its QR code) instead: valid 30 days at most, revocable alone on the dashboard, and not
 * touched by `--revoke`. Same environment as `npm start`.
 */

const USAGE = 'usage: npm run owner-link [-- --revoke] | [-- --device "<name>"]';

type Args = { revoke: boolean; device: string | null };

function parseArgs(args: readonly string[]): Args {
  const parsed: Args = { revoke: false, device: null };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--revoke") parsed.revoke = true;
    else if (arg === "--device" && args[i + 1] !== undefined)
      parsed.device = deviceName(args[++i]!);
    else throw new Error(`unknown argument ${arg}: ${USAGE}`);
  }
  if (parsed.revoke && parsed.device)
    throw new Error(`--revoke and --device do not go together: ${USAGE}`);
  return parsed;
}

/** The name as the dashboard would store it (normalized), or why it cannot be one. */
function deviceName(given: string): string {
  const parsed = DeviceName.safeParse(given);
  if (!parsed.success)
    throw new Error(
      `--device ${parsed.error.issues[0]?.message ?? "is not a device name"}: ${USAGE}`,
    );
  return parsed.data;
}

async function main(args: readonly string[]): Promise<void> {
  const { revoke, device } = parseArgs(args);
  const config = parseConfig(process.env);
  const authSecret = loadOrCreateAuthSecret(config);
  const baseUrl = config.PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}`;
  const owner = [...config.owners][0] ?? "owner";
  const clock = systemClock();
  // With REDIS_URL the owner-link key id and the devices live in Redis, where every instance checks them.
  const backend = await openBackend(config, authSecret, {
    log: (message) => console.error(message),
    clock,
  });
  const { store, devices } = backend;
  try {
    if (device) {
      const link = await mintDeviceLink({
        store: devices,
        key: secretKey(authSecret),
        owner,
        name: device,
        mintedBy: { kind: "command-line" },
        maxTokenDays: config.MAX_TOKEN_DAYS,
        baseUrl,
        now: clock.now(),
      });
      console.log(renderUnicodeCompact(link.url));
      console.log(
        `Device link for "${link.name}" (owner "${owner}", until ${new Date(link.expiresAt).toISOString()}; revoke it on the dashboard): ${link.url}`,
      );
      return;
    }
    if (revoke) {
      // The key id first: an owner link minting a device meanwhile then finds its link revoked after its write.
      await revokeOwnerLinks(store);
      const revokedDevices = await devices.revokeMintedThroughOwnerLinks(clock.now());
      console.log(
        `Every earlier owner link is revoked, and the ${revokedDevices === 1 ? "1 device link" : `${revokedDevices} device links`} minted through them.`,
      );
    }
    const link = await mintOwnerLink({
      store,
      key: secretKey(authSecret),
      owner,
      hours: config.OWNER_LINK_HOURS,
      baseUrl,
    });
    console.log(describeOwnerLink(link));
  } finally {
    await backend.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`owner-link: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}`);
  process.exit(1);
}
