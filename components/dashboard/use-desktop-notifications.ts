import { useCallback, useEffect, useState } from "react";
import type { Ask } from "../../lib/ask.ts";
import { askTitle, kindLabel } from "../../lib/wording.ts";
import { useLatest } from "../common/use-latest.ts";

const PREF_KEY = "openclaw-asks:notify";

/**
 * Opt-in desktop notifications (docs/DASHBOARD.md#notifications): only after the person turns them on, only while the tab
 * is hidden. The preference is kept in localStorage when the page has storage.
 */
export function useDesktopNotifications() {
  const [supported, setSupported] = useState(false);
  const [enabled, setEnabled] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const enabledRef = useLatest(enabled);

  useEffect(() => {
    if (typeof Notification === "undefined") return;
    setSupported(true);
    try {
      if (window.localStorage.getItem(PREF_KEY) === "on" && Notification.permission === "granted")
        setEnabled(true);
    } catch {
      // No storage: the preference lasts for this page only.
    }
  }, []);

  const remember = (on: boolean) => {
    try {
      window.localStorage.setItem(PREF_KEY, on ? "on" : "off");
    } catch {
      // No storage.
    }
  };

  const toggle = useCallback(async () => {
    if (typeof Notification === "undefined") return;
    if (enabledRef.current) {
      setEnabled(false);
      remember(false);
      return;
    }
    const permission =
      Notification.permission === "default"
        ? await Notification.requestPermission()
        : Notification.permission;
    if (permission !== "granted") {
      setError(
        "Desktop notifications are blocked for this site; allow them in the browser's site settings.",
      );
      return;
    }
    setError(null);
    setEnabled(true);
    remember(true);
  }, [enabledRef]);

  const notify = useCallback(
    (ask: Ask) => {
      if (
        !enabledRef.current ||
        typeof Notification === "undefined" ||
        Notification.permission !== "granted"
      )
        return;
      if (document.visibilityState !== "hidden") return;
      const where = ask.chatId ? `Chat ${ask.chatId}` : `Agent ${ask.agentId}`;
      const notification = new Notification(`${kindLabel(ask)}: ${askTitle(ask)}`, {
        body: where,
        tag: ask.id,
      });
      notification.onclick = () => {
        window.focus();
        notification.close();
      };
    },
    [enabledRef],
  );

  return { supported, enabled, error, toggle, notify };
}

export type DesktopNotifications = ReturnType<typeof useDesktopNotifications>;
