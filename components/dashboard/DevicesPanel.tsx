import { useCallback, useEffect, useId, useState } from "react";
import { callApi } from "../../client/http-api.ts";
import type {
  DeviceLink as Link,
  DeviceMinter,
  DeviceSummary,
  PushSubscriptionSummary,
} from "../../lib/devices.ts";
import { cx, formatTime } from "../asks/format.ts";
import { card, muted, primaryButton, secondaryButton, textInput } from "../asks/styles.ts";
import { QrCode } from "./QrCode.tsx";

/** Which link made a device, in the words of the list. */
function madeBy(minter: DeviceMinter): string {
  switch (minter.kind) {
    case "owner-link":
      return `made with an owner link (${minter.kid.slice(0, 8)})`;
    case "command-line":
      return "made with npm run owner-link -- --device";
    case "unrecorded":
      return "made by an earlier version (link not recorded)";
  }
}

/** Which link a push subscription was made with: a listed device, else the owner links. */
function subscribedWith(subscription: PushSubscriptionSummary, devices: DeviceSummary[]): string {
  const device = devices.find((candidate) => candidate.kid === subscription.linkKid);
  return device
    ? `with ${device.name}'s link`
    : `with an owner link (${subscription.linkKid.slice(0, 8)})`;
}

/**
 * Signing in from a phone: a device link (a revocable owner token for that one device, 30 days at
 * most) shown as a QR code to scan, the owner's devices with when and through which link each was
 * made, and the browsers pushed to. Minting, revoking and removing need a dashboard opened with an
 * owner link; one opened with a device link lists only.
 */
export function DevicesPanel({ token, active }: { token: string | null; active: boolean }) {
  const [devices, setDevices] = useState<DeviceSummary[]>([]);
  const [subscriptions, setSubscriptions] = useState<PushSubscriptionSummary[]>([]);
  /** Whether this dashboard's link may mint, revoke and remove; null until the server said. */
  const [canManage, setCanManage] = useState<boolean | null>(null);
  const [name, setName] = useState("");
  const [link, setLink] = useState<Link | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();

  const refresh = useCallback(async () => {
    if (!token) return;
    const [listed, pushed] = await Promise.all([
      callApi("devices", { token }),
      callApi("subscriptions", { token }),
    ]);
    if (listed.ok) {
      setDevices(listed.reply.devices);
      setCanManage(listed.reply.canManage);
    } else setMessage(`Devices could not be listed: ${listed.message}`);
    if (pushed.ok) setSubscriptions(pushed.reply.subscriptions);
    else setMessage(`Push subscriptions could not be listed: ${pushed.message}`);
  }, [token]);

  useEffect(() => {
    if (active) void refresh();
  }, [active, refresh]);

  const create = async () => {
    if (!token || busy) return;
    setBusy(true);
    setMessage(null);
    const created = await callApi("mintDevice", { token, body: { name } });
    setBusy(false);
    if (!created.ok) {
      setMessage(created.message);
      return;
    }
    setLink(created.reply);
    setName("");
    await refresh();
  };

  const revoke = async (device: DeviceSummary) => {
    if (!token) return;
    const revoked = await callApi("revokeDevice", { token, id: device.kid });
    setMessage(
      revoked.ok ? `${device.name} is revoked: its link no longer signs in.` : revoked.message,
    );
    if (link && revoked.ok && link.name === device.name) setLink(null);
    await refresh();
  };

  const remove = async (subscription: PushSubscriptionSummary) => {
    if (!token) return;
    const removed = await callApi("removeSubscription", {
      token,
      id: subscription.id,
    });
    setMessage(
      removed.ok
        ? `Push to ${subscription.service} is removed: that browser gets no more notifications.`
        : removed.message,
    );
    await refresh();
  };

  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <section aria-labelledby={`${id}-add`} className={card}>
        <h3 id={`${id}-add`} className="text-base font-semibold">
          Sign in on a phone
        </h3>
        <p className={cx("mt-1 text-sm", muted)}>
          A device link signs that one device in as you for 30 days at most; revoke it here at any
          time. Install the dashboard from the phone&apos;s browser menu and it keeps the link.
        </p>
        {canManage === true && (
          <form
            className="mt-3 flex flex-wrap items-end gap-2"
            onSubmit={(event) => {
              event.preventDefault();
              void create();
            }}
          >
            <div className="min-w-0 flex-[1_1_12rem]">
              <label
                htmlFor={`${id}-name`}
                className={cx("mb-0.5 block text-xs font-medium", muted)}
              >
                Device name
              </label>
              <input
                id={`${id}-name`}
                value={name}
                onChange={(event) => setName(event.target.value)}
                maxLength={60}
                required
                className={cx(textInput, "min-h-11")}
              />
            </div>
            <button
              type="submit"
              className={primaryButton}
              disabled={busy || !token || name.trim() === ""}
            >
              {busy ? "Creating…" : "Create device link"}
            </button>
          </form>
        )}
        {canManage === false && (
          <p className="mt-3 text-sm">
            Device links are made and revoked from a dashboard opened with an owner link (npm run
            owner-link), not from this one.
          </p>
        )}
        {link && (
          <div className="mt-4 flex flex-col items-center gap-2 text-center">
            <QrCode text={link.url} label={`QR code: device link for ${link.name}`} />
            <p className="text-sm">
              Scan with <strong>{link.name}</strong>. Valid until {formatTime(link.expiresAt)}.
            </p>
            <label htmlFor={`${id}-link`} className="sr-only">
              Device link for {link.name}
            </label>
            <input
              id={`${id}-link`}
              readOnly
              value={link.url}
              onFocus={(event) => event.target.select()}
              className={cx(textInput, "min-h-11 font-mono text-xs")}
            />
          </div>
        )}
      </section>

      <section aria-labelledby={`${id}-list`} className={card}>
        <h3 id={`${id}-list`} className="text-base font-semibold">
          Devices
        </h3>
        <p role="status" className={cx("mt-1 text-sm empty:hidden", muted)}>
          {message}
        </p>
        {devices.length === 0 ? (
          <p className={cx("mt-2 text-sm", muted)}>No device links yet.</p>
        ) : (
          <ul aria-label="Devices" className="mt-2 divide-y divide-zinc-200 dark:divide-zinc-800">
            {devices.map((device) => (
              <li key={device.kid} className="flex items-center gap-3 py-2">
                <span className="min-w-0 flex-1">
                  <bdi className="block font-medium break-words">{device.name}</bdi>
                  <span className={cx("block text-xs", muted)}>
                    added {formatTime(device.createdAt)}, {madeBy(device.mintedBy)} · until{" "}
                    {formatTime(device.expiresAt)}
                  </span>
                </span>
                {canManage && (
                  <button
                    type="button"
                    className={secondaryButton}
                    aria-label={`Revoke ${device.name}`}
                    onClick={() => void revoke(device)}
                  >
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}

        <h3 id={`${id}-push`} className="mt-4 text-base font-semibold">
          Push notifications
        </h3>
        {subscriptions.length === 0 ? (
          <p className={cx("mt-2 text-sm", muted)}>No browser gets push notifications.</p>
        ) : (
          <ul
            aria-labelledby={`${id}-push`}
            className="mt-2 divide-y divide-zinc-200 dark:divide-zinc-800"
          >
            {subscriptions.map((subscription) => (
              <li key={subscription.id} className="flex items-center gap-3 py-2">
                <span className="min-w-0 flex-1">
                  <span className="block font-medium break-words">
                    {new URL(subscription.service).host}
                  </span>
                  <span className={cx("block text-xs", muted)}>
                    since {formatTime(subscription.createdAt)},{" "}
                    <bdi>{subscribedWith(subscription, devices)}</bdi>
                    {subscription.failures > 0 && ` · the last ${subscription.failures} failed`}
                  </span>
                </span>
                {canManage && (
                  <button
                    type="button"
                    className={secondaryButton}
                    aria-label={`Remove push to ${new URL(subscription.service).host} (since ${formatTime(subscription.createdAt)})`}
                    onClick={() => void remove(subscription)}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
