/**
 * Where each part of a deployment keeps its keys in Redis, all under REDIS_KEY_PREFIX: the one list
 * of namespaces, so two parts never share one by accident. Each part's own keys inside its namespace
 * are named in that part's header (the file given beside each).
 */
export function redisNamespaces(prefix: string) {
  return {
    /** The deployment marker (store/deployment-marker.ts): which AUTH_SECRET owns the prefix. */
    deployment: `${prefix}deployment`,
    /** Asks, their history and tombstones (store/redis.ts). */
    store: `${prefix}store:`,
    /** Tabs, viewers, shown cards, instances, and each instance's card channel (broker/redis-presence.ts). */
    presence: `${prefix}presence:`,
    /** Device links (auth/redis-device-store.ts). */
    devices: `${prefix}devices:`,
    /** Push subscriptions and which asks were announced (push/redis-push-store.ts, push/announcements.ts). */
    push: `${prefix}push:`,
    /** The shared VAPID pair, its private key sealed (push/vapid.ts). */
    vapid: `${prefix}push:vapid`,
    /** The Socket.IO adapter's channels (@socket.io/redis-adapter). */
    socketIo: `${prefix}socket.io`,
  } as const;
}
