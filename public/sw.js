// The dashboard's service worker: it caches the app shell (Next's hashed static files, the icons and
// the manifest) and nothing else (never a page: each carries a fresh CSP nonce and the app holds a
// token; never a socket, an answer or a push endpoint), shows pushed asks as notifications, and sends
// a notification's Allow once / Deny with the single-use action token that came in the push. It holds
// no owner token.

const SHELL_CACHE = "openclaw-asks-shell-v1";
const SHELL_FILES = [
  "/manifest.webmanifest",
  "/icon.svg",
  "/icon-192.png",
  "/icon-512.png",
  "/icon-maskable-512.png",
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(SHELL_CACHE)
      .then((cache) => cache.addAll(SHELL_FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names.filter((name) => name !== SHELL_CACHE).map((name) => caches.delete(name)),
        ),
      )
      .then(() => self.clients.claim()),
  );
});

function isShell(url) {
  return (
    url.origin === self.location.origin &&
    (url.pathname.startsWith("/_next/static/") || SHELL_FILES.includes(url.pathname))
  );
}

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || !isShell(url)) return;
  event.respondWith(
    caches.open(SHELL_CACHE).then(async (cache) => {
      const cached = await cache.match(event.request);
      if (cached) return cached;
      const response = await fetch(event.request);
      if (response.ok) await cache.put(event.request, response.clone());
      return response;
    }),
  );
});

/** Shows a push: an ask (with its decisions, for an approval), or how it ended (same tag: it replaces the first). */
async function showPush(payload) {
  if (!payload || typeof payload.title !== "string" || typeof payload.tag !== "string") {
    // A push must always show something; this one could not be read.
    return self.registration.showNotification("OpenClaw Asks", {
      body: "Something needs you on the dashboard.",
      tag: "openclaw-asks",
    });
  }
  const actions = Array.isArray(payload.actions) ? payload.actions : [];
  return self.registration.showNotification(payload.title, {
    body: payload.body,
    tag: payload.tag,
    icon: "/icon-192.png",
    badge: "/icon-192.png",
    renotify: payload.type === "ask",
    requireInteraction: payload.type === "ask" && actions.length > 0,
    actions: actions.map((action) => ({ action: action.action, title: action.title })),
    data: {
      type: payload.type,
      askId: payload.askId,
      url: payload.url,
      title: payload.title,
      tag: payload.tag,
      actions,
    },
  });
}

self.addEventListener("push", (event) => {
  let payload = null;
  try {
    payload = event.data ? event.data.json() : null;
  } catch {
    payload = null;
  }
  event.waitUntil(showPush(payload));
});

async function openDashboard(url) {
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
  if (open) {
    await open.navigate(url).catch(() => undefined);
    return open.focus();
  }
  return self.clients.openWindow(url);
}

/** Failures after which the action was not taken and may be tried again: the server unreachable, or its Redis (503). */
const RETRYABLE = new Set(["NETWORK", "UNAVAILABLE"]);

/**
 * A notification was tapped. With one of its actions, the action's token is posted to the server,
 * which checks it, claims the ask and decides it; the notification then says what happened (and keeps
 * its buttons when nothing was decided and trying again can work). Without
 * an action (or for a question, which needs its options) the dashboard opens at the ask.
 * Set on `self` so tests can call it with an action directly: no DevTools command clicks a notification.
 */
async function handleNotificationClick(action, data) {
  const chosen =
    action && data && Array.isArray(data.actions)
      ? data.actions.find((candidate) => candidate.action === action)
      : undefined;
  if (!chosen) {
    await openDashboard(data && data.url ? data.url : "/");
    return { ok: true, opened: true };
  }
  let result;
  try {
    const response = await fetch("/push/actions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ askId: data.askId, decision: chosen.action, token: chosen.token }),
    });
    result = await response.json();
  } catch {
    result = {
      ok: false,
      error: {
        code: "NETWORK",
        message:
          "The server could not be reached: nothing was decided. Try again, or open the dashboard to decide.",
      },
    };
  }
  if (!result.ok && RETRYABLE.has(result.error.code)) {
    // Nothing was decided, and the same buttons work once the server (or its Redis) is back: they stay.
    await showPush({
      type: "ask",
      askId: data.askId,
      url: data.url,
      title: data.title,
      tag: data.tag,
      body: result.error.message,
      actions: data.actions,
    });
    return result;
  }
  await self.registration.showNotification(data.title, {
    body: result.ok ? `${chosen.title}: sent` : result.error.message,
    tag: data.tag,
    icon: "/icon-192.png",
    data: {
      type: "outcome",
      askId: data.askId,
      url: data.url,
      title: data.title,
      tag: data.tag,
      actions: [],
    },
  });
  return result;
}
self.handleNotificationClick = handleNotificationClick;

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(handleNotificationClick(event.action, event.notification.data));
});
