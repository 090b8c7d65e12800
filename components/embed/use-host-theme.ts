import { useEffect } from "react";

/** What the host page says (the relay the Open WebUI filter runs there): Open WebUI's chosen theme. */
export const HOST_THEME = "openclaw-asks:theme";
/** What the widget asks its host page when it loads (the relay may be there before it). */
export const HOST_THEME_QUERY = "openclaw-asks:theme?";

type Theme = "light" | "dark";

function themeOf(data: unknown): Theme | null {
  if (typeof data !== "object" || data === null) return null;
  const { type, theme } = data as { type?: unknown; theme?: unknown };
  return type === HOST_THEME && (theme === "light" || theme === "dark") ? theme : null;
}

/**
 * Takes Open WebUI's chosen theme, light or dark, from the host page. Open WebUI keeps it in its
 * page (`localStorage.theme`, the `dark` class on its root) and tells its embeds nothing, and the
 * frame's own `prefers-color-scheme` is the system's: with Dark chosen on a light system the card
 * was a white box on a dark page. The filter runs a small relay in Open WebUI's page (its `execute`
 * event) that posts the theme to the widget and again on each change (integrations/open-webui,
 * THEME_RELAY_JS). Until one comes the widget follows the system, as before; opened on its own it
 * always does. Only the host page itself is listened to, and only these two words are taken.
 */
export function useHostTheme(): void {
  useEffect(() => {
    if (window.parent === window) return;
    const root = document.documentElement;
    const onMessage = (event: MessageEvent) => {
      if (event.source !== window.parent) return;
      const theme = themeOf(event.data);
      if (theme) root.dataset.theme = theme;
    };
    window.addEventListener("message", onMessage);
    window.parent.postMessage({ type: HOST_THEME_QUERY }, "*");
    return () => window.removeEventListener("message", onMessage);
  }, []);
}
