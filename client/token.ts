/**
 * The signed token arrives once as `?token=` and is then dropped from the address bar (docs/ARCHITECTURE.md#user-interface).
 *
 * It is kept in memory, plus in the history entry's state so a reload of the same tab still works:
 * Open WebUI's sandboxed iframe has no storage of its own (opaque origin), and history state is
 * per tab, never sent anywhere, and not shown in the address bar. The dashboard also keeps it in
 * sessionStorage when storage is available, and a device link's token (`?device=1&token=…`, from the
 * dashboard's QR code) in localStorage: the installed app opens at `/` with no token in its address
 * and signs in with the one it keeps, until it expires or is revoked.
 */

const STATE_KEY = "openclawAsksToken";

export type TokenStorage = { sessionStorageKey?: string; deviceStorageKey?: string };

export function takeToken(options: TokenStorage = {}): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  const isDeviceLink = url.searchParams.get("device") === "1";
  let token: string | null = fromUrl || null;

  if (fromUrl) {
    url.searchParams.delete("token");
    url.searchParams.delete("device");
    try {
      const previous: unknown = window.history.state;
      const state = previous && typeof previous === "object" ? previous : {};
      window.history.replaceState(
        { ...state, [STATE_KEY]: fromUrl },
        "",
        `${url.pathname}${url.search}${url.hash}`,
      );
    } catch {
      // A browser that refuses the rewrite keeps the token in the URL; it still works.
    }
  } else {
    const state: unknown = window.history.state;
    const kept =
      state && typeof state === "object"
        ? (state as Record<string, unknown>)[STATE_KEY]
        : undefined;
    if (typeof kept === "string" && kept) token = kept;
  }

  if (options.sessionStorageKey) {
    try {
      if (token) window.sessionStorage.setItem(options.sessionStorageKey, token);
      else token = window.sessionStorage.getItem(options.sessionStorageKey);
    } catch {
      // No storage (sandboxed, private mode): memory and history state only.
    }
  }
  if (options.deviceStorageKey) {
    try {
      if (fromUrl && isDeviceLink) window.localStorage.setItem(options.deviceStorageKey, fromUrl);
      else if (!token) token = window.localStorage.getItem(options.deviceStorageKey);
    } catch {
      // No storage: this device link lasts as long as the tab.
    }
  }
  return token;
}

/** Forgets a token the server refused (expired, bad signature, revoked), so a reload asks for a new link. */
export function forgetToken(refused: string | null, options: TokenStorage = {}): void {
  try {
    const state: unknown = window.history.state;
    if (state && typeof state === "object" && STATE_KEY in state) {
      const { [STATE_KEY]: _dropped, ...rest } = state as Record<string, unknown>;
      window.history.replaceState(rest, "");
    }
  } catch {
    // Nothing to forget.
  }
  try {
    if (options.sessionStorageKey) window.sessionStorage.removeItem(options.sessionStorageKey);
    // The device's own link is forgotten only when it was the one refused.
    if (
      options.deviceStorageKey &&
      refused !== null &&
      window.localStorage.getItem(options.deviceStorageKey) === refused
    ) {
      window.localStorage.removeItem(options.deviceStorageKey);
    }
  } catch {
    // No storage.
  }
}

/**
 * The reply an embed token was minted for (its `msg` claim), read without verifying it: the widget
 * only uses it to pick its own reply's summaries among the asks the server let this token see.
 */
export function tokenReplyId(token: string): string | null {
  try {
    const payload: unknown = JSON.parse(
      atob(token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/")),
    );
    const msg =
      payload && typeof payload === "object" ? (payload as Record<string, unknown>).msg : undefined;
    return typeof msg === "string" && msg ? msg : null;
  } catch {
    return null;
  }
}
