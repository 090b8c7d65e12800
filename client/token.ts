/**
 * The signed token arrives once as `?token=` and is then dropped from the address bar (DESIGN §11).
 *
 * It is kept in memory, plus in the history entry's state so a reload of the same tab still works:
 * Open WebUI's sandboxed iframe has no storage of its own (opaque origin), and history state is
 * per tab, never sent anywhere, and not shown in the address bar. The dashboard also keeps it in
 * sessionStorage when storage is available.
 */

const STATE_KEY = "openclawAsksToken";

export function takeToken(options: { sessionStorageKey?: string } = {}): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  let token: string | null = fromUrl || null;

  if (fromUrl) {
    url.searchParams.delete("token");
    try {
      const previous: unknown = window.history.state;
      const state = previous && typeof previous === "object" ? previous : {};
      window.history.replaceState({ ...state, [STATE_KEY]: fromUrl }, "", `${url.pathname}${url.search}${url.hash}`);
    } catch {
      // A browser that refuses the rewrite keeps the token in the URL; it still works.
    }
  } else {
    const state: unknown = window.history.state;
    const kept = state && typeof state === "object" ? (state as Record<string, unknown>)[STATE_KEY] : undefined;
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
  return token;
}

/** Forgets a token the server refused (expired, bad signature), so a reload asks for a new link. */
export function forgetToken(options: { sessionStorageKey?: string } = {}): void {
  try {
    const state: unknown = window.history.state;
    if (state && typeof state === "object" && STATE_KEY in state) {
      const { [STATE_KEY]: _dropped, ...rest } = state as Record<string, unknown>;
      window.history.replaceState(rest, "");
    }
  } catch {
    // Nothing to forget.
  }
  if (options.sessionStorageKey) {
    try {
      window.sessionStorage.removeItem(options.sessionStorageKey);
    } catch {
      // No storage.
    }
  }
}
