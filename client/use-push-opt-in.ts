import { useCallback, useEffect, useState } from "react";
import { errorMessage } from "../lib/error-message.ts";
import { callApi } from "./http-api.ts";

/**
 * The dashboard's service worker and Web Push opt-in. The worker (public/sw.js) is registered on every
 * visit (it makes the dashboard installable and caches its shell); push is on only after the owner
 * turns it on here: the browser subscribes with the server's VAPID key and the subscription is stored
 * with the owner (`POST /push/subscriptions`, the owner's token as Bearer). The server pushes to it only
 * while the link it was stored with works, so each visit stores it again with this visit's link. Needs a
 * secure context: localhost, or HTTPS (docs/DASHBOARD.md#reaching-the-dashboard-from-a-phone).
 */

export type PushOptIn = {
  supported: boolean;
  enabled: boolean;
  busy: boolean;
  error: string | null;
  toggle(): Promise<void>;
};

function base64UrlBytes(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

/** What the server stores of a subscription (the rest of `toJSON()` it would not read). */
function stored(subscription: PushSubscription) {
  const { endpoint = "", keys = {} } = subscription.toJSON();
  return { endpoint, keys: { p256dh: keys.p256dh ?? "", auth: keys.auth ?? "" } };
}

export function usePushOptIn(token: string | null): PushOptIn {
  const [registration, setRegistration] = useState<ServiceWorkerRegistration | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!window.isSecureContext || !("serviceWorker" in navigator)) return;
    let live = true;
    navigator.serviceWorker
      .register("/sw.js", { scope: "/" })
      .then(async (registered) => {
        if (!live) return;
        setRegistration(registered);
        if ("pushManager" in registered)
          setEnabled((await registered.pushManager.getSubscription()) !== null);
      })
      .catch(
        (failure: unknown) =>
          live && setError(`The app could not be installed here: ${errorMessage(failure)}`),
      );
    return () => {
      live = false;
    };
  }, []);

  // Renews the stored subscription with this visit's link (the one it was stored with may have expired).
  useEffect(() => {
    if (!registration || !token || !("pushManager" in registration)) return;
    registration.pushManager
      .getSubscription()
      .then(async (current) => {
        if (!current) return;
        const renewed = await callApi("subscribe", { token, body: stored(current) });
        if (!renewed.ok) setError(`Push to this device could not be renewed: ${renewed.message}`);
      })
      .catch((failure: unknown) =>
        setError(`Push to this device could not be renewed: ${errorMessage(failure)}`),
      );
  }, [registration, token]);

  const toggle = useCallback(async () => {
    if (!registration || !token || busy) return;
    setBusy(true);
    setError(null);
    try {
      const current = await registration.pushManager.getSubscription();
      if (current) {
        const removed = await callApi("unsubscribe", {
          token,
          body: { endpoint: current.endpoint },
        });
        await current.unsubscribe();
        setEnabled(false);
        if (!removed.ok) setError(`Push turned off here; the server said: ${removed.message}`);
        return;
      }
      if ((await Notification.requestPermission()) !== "granted") {
        setError(
          "Notifications are blocked for this site; allow them in the browser's site settings.",
        );
        return;
      }
      const key = await callApi("pushKey", {});
      if (!key.ok) throw new Error(key.message);
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64UrlBytes(key.reply.publicKey),
      });
      const saved = await callApi("subscribe", { token, body: stored(subscription) });
      if (!saved.ok) {
        await subscription.unsubscribe();
        throw new Error(saved.message);
      }
      setEnabled(true);
    } catch (failure) {
      setError(`Push could not be turned on: ${errorMessage(failure)}`);
    } finally {
      setBusy(false);
    }
  }, [registration, token, busy]);

  return {
    supported: registration !== null && "pushManager" in registration,
    enabled,
    busy,
    error,
    toggle,
  };
}
