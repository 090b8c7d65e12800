import { useCallback, useEffect, useId, useState } from "react";
import { cx, formatTime } from "../asks/format.ts";
import { card, muted, primaryButton, secondaryButton, textInput } from "../asks/styles.ts";
import { QrCode } from "./QrCode.tsx";

type Device = { kid: string; name: string; createdAt: number; expiresAt: number };
type Link = { url: string; name: string; expiresAt: number };

async function call<T>(path: string, token: string, init: RequestInit = {}): Promise<{ ok: true; body: T } | { ok: false; message: string }> {
  try {
    const response = await fetch(path, { ...init, headers: { "content-type": "application/json", authorization: `Bearer ${token}` } });
    const body = (await response.json()) as T & { ok?: boolean; error?: { message?: string } };
    return body.ok ? { ok: true, body } : { ok: false, message: body.error?.message ?? `HTTP ${response.status}` };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Signing in from a phone: a device link (a revocable owner token for that one device, 30 days at
 * most) shown as a QR code to scan, and the owner's devices, each revocable.
 */
export function DevicesPanel({ token, active }: { token: string | null; active: boolean }) {
  const [devices, setDevices] = useState<Device[]>([]);
  const [name, setName] = useState("");
  const [link, setLink] = useState<Link | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();

  const refresh = useCallback(async () => {
    if (!token) return;
    const listed = await call<{ devices: Device[] }>("/devices", token);
    if (listed.ok) setDevices(listed.body.devices);
    else setMessage(`Devices could not be listed: ${listed.message}`);
  }, [token]);

  useEffect(() => {
    if (active) void refresh();
  }, [active, refresh]);

  const create = async () => {
    if (!token || busy) return;
    setBusy(true);
    setMessage(null);
    const created = await call<Link>("/devices", token, { method: "POST", body: JSON.stringify({ name }) });
    setBusy(false);
    if (!created.ok) {
      setMessage(created.message);
      return;
    }
    setLink(created.body);
    setName("");
    await refresh();
  };

  const revoke = async (device: Device) => {
    if (!token) return;
    const revoked = await call<object>(`/devices/${encodeURIComponent(device.kid)}`, token, { method: "DELETE" });
    setMessage(revoked.ok ? `${device.name} is revoked: its link no longer signs in.` : revoked.message);
    if (link && revoked.ok && link.name === device.name) setLink(null);
    await refresh();
  };

  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <section aria-labelledby={`${id}-add`} className={card}>
        <h3 id={`${id}-add`} className="text-base font-semibold">
          Sign in on a phone
        </h3>
        <p className={cx("mt-1 text-sm", muted)}>
          A device link signs that one device in as you for 30 days at most; revoke it here at any time. Install the dashboard from the phone&apos;s browser
          menu and it keeps the link.
        </p>
        <form
          className="mt-3 flex flex-wrap items-end gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            void create();
          }}
        >
          <div className="min-w-0 flex-[1_1_12rem]">
            <label htmlFor={`${id}-name`} className={cx("mb-0.5 block text-xs font-medium", muted)}>
              Device name
            </label>
            <input id={`${id}-name`} value={name} onChange={(event) => setName(event.target.value)} maxLength={60} required className={cx(textInput, "min-h-11")} />
          </div>
          <button type="submit" className={primaryButton} disabled={busy || !token || name.trim() === ""}>
            {busy ? "Creating…" : "Create device link"}
          </button>
        </form>
        {link && (
          <div className="mt-4 flex flex-col items-center gap-2 text-center">
            <QrCode text={link.url} label={`QR code: device link for ${link.name}`} />
            <p className="text-sm">
              Scan with <strong>{link.name}</strong>. Valid until {formatTime(link.expiresAt)}.
            </p>
            <label htmlFor={`${id}-link`} className="sr-only">
              Device link for {link.name}
            </label>
            <input id={`${id}-link`} readOnly value={link.url} onFocus={(event) => event.target.select()} className={cx(textInput, "min-h-11 font-mono text-xs")} />
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
                  <span className="block font-medium break-words">{device.name}</span>
                  <span className={cx("block text-xs", muted)}>
                    added {formatTime(device.createdAt)} · until {formatTime(device.expiresAt)}
                  </span>
                </span>
                <button type="button" className={secondaryButton} aria-label={`Revoke ${device.name}`} onClick={() => void revoke(device)}>
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
