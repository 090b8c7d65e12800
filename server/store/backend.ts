import { randomUUID } from "node:crypto";
import path from "node:path";
import { createAdapter } from "@socket.io/redis-adapter";
import type { Redis } from "ioredis";
import type { ServerOptions } from "socket.io";
import type { Clock } from "../../lib/clock.ts";
import { errorMessage } from "../../lib/error-message.ts";
import { type DeviceStore, SqliteDeviceStore } from "../auth/device-store.ts";
import { RedisDeviceStore } from "../auth/redis-device-store.ts";
import type { Presence } from "../broker/ports.ts";
import { MemoryPresence } from "../broker/presence.ts";
import { RedisPresence } from "../broker/redis-presence.ts";
import type { Config } from "../config.ts";
import {
  MemoryPushAnnouncements,
  type PushAnnouncements,
  RedisPushAnnouncements,
} from "../push/announcements.ts";
import type { PushStore } from "../push/push-store.ts";
import { RedisPushStore } from "../push/redis-push-store.ts";
import { SqlitePushStore } from "../push/sqlite-push-store.ts";
import { subscriptionKey } from "../push/subscription-signature.ts";
import { loadSharedVapidKeys, loadVapidKeys, type VapidKeys } from "../push/vapid.ts";
import { claimDeploymentPrefix } from "./deployment-marker.ts";
import { RedisAskStore } from "./redis.ts";
import { connectRedis } from "./redis-client.ts";
import { redisNamespaces } from "./redis-keys.ts";
import { SqliteAskStore } from "./sqlite.ts";
import type { ServiceStore } from "./store.ts";

/**
 * Where an instance keeps what it knows, chosen here and nowhere else (as Hocuspocus' extension-redis
 * or socket.io's adapters plug in). With REDIS_URL, every store lives in the Redis all instances
 * share, under REDIS_KEY_PREFIX once that prefix is known to be this deployment's (signed with the
 * same AUTH_SECRET), and presence and the Socket.IO fan-out go through it. Without it, this one
 * process keeps its SQLite files in DATA_DIR and its presence in memory.
 */
export type Backend = {
  /** This instance among those sharing the backend: its tabs' presence and its answers' claims name it. */
  instanceId: string;
  store: ServiceStore;
  presence: Presence;
  devices: DeviceStore;
  push: PushBackend;
  /** The tab server's Socket.IO adapter: Redis's carries events to every instance; none keeps them in this process. */
  socketAdapter: ServerOptions["adapter"] | undefined;
  link: SharedLink;
  /** Joins the deployment (presence's heartbeat and card channel) once the instance is about to serve. */
  start(): Promise<void>;
  /** Leaves the deployment if it joined, closes every store and ends the connections. */
  close(): Promise<void>;
};

export type PushBackend = {
  store: PushStore;
  announcements: PushAnnouncements;
  /** The pair that signs pushes: the environment's, else the kept one (generated once). Only the server loads it: it alone pushes. */
  vapidKeys(): Promise<VapidKeys>;
};

/** Whether what the instances share is reachable now: one process's own files always are. */
export type SharedLink = {
  readonly up: boolean;
  /** Calls `changed` after each loss and each return of it; returns how to stop. */
  watch(changed: () => void): () => void;
  /** What an owner's /healthz says of it. */
  health(): Record<string, unknown>;
};

type BackendOptions = { log: (message: string) => void; clock: Clock };
type BackendConfig = Pick<
  Config,
  "REDIS_URL" | "REDIS_KEY_PREFIX" | "DATA_DIR" | "VAPID_PUBLIC_KEY" | "VAPID_PRIVATE_KEY"
>;

/** Opens the backend the configuration asks for; an unusable DATA_DIR, database or Redis fails here. */
export async function openBackend(
  config: BackendConfig,
  authSecret: string,
  options: BackendOptions,
): Promise<Backend> {
  return config.REDIS_URL
    ? redisBackend(config.REDIS_URL, config, authSecret, options)
    : sqliteBackend(config, authSecret, options);
}

function sqliteBackend(
  config: BackendConfig,
  authSecret: string,
  { log, clock }: BackendOptions,
): Backend {
  const file = (name: string) => path.join(config.DATA_DIR, name);
  const store = new SqliteAskStore(file("asks.sqlite"), { log, clock });
  const devices = new SqliteDeviceStore(file("devices.sqlite"), log);
  const push = new SqlitePushStore(file("push.sqlite"), {
    signingKey: subscriptionKey(authSecret),
    log,
  });
  return {
    instanceId: randomUUID(),
    store,
    presence: new MemoryPresence(),
    devices,
    push: {
      store: push,
      announcements: new MemoryPushAnnouncements(),
      vapidKeys: async () =>
        loadVapidKeys({ ...vapidSource(config, authSecret, log), dataDir: config.DATA_DIR }),
    },
    socketAdapter: undefined,
    link: { up: true, watch: () => () => {}, health: () => ({}) },
    start: async () => {},
    async close() {
      push.close();
      devices.close();
      await store.close();
    },
  };
}

async function redisBackend(
  url: string,
  config: BackendConfig,
  authSecret: string,
  { log, clock }: BackendOptions,
): Promise<Backend> {
  const redis = await connectRedis(url, log);
  try {
    await claimDeploymentPrefix(redis, config.REDIS_KEY_PREFIX, authSecret);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const keys = redisNamespaces(config.REDIS_KEY_PREFIX);
  const instanceId = randomUUID();
  const store = new RedisAskStore(redis, { prefix: keys.store, log, clock });
  const presence = new RedisPresence({
    redis,
    instanceId,
    clock,
    prefix: keys.presence,
    log,
  });
  const devices = new RedisDeviceStore(redis, keys.devices, log);
  const push = new RedisPushStore(redis, keys.push, {
    signingKey: subscriptionKey(authSecret),
    log,
  });
  // Pub/sub clients of their own; they queue while Redis is away (the adapter does not await its
  // publishes), and what they queued goes out once it is back.
  const adapterClient = () =>
    redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null }).on("error", () => {});
  const [publisher, subscriber] = [adapterClient(), adapterClient()];
  let joined = false;
  return {
    instanceId,
    store,
    presence,
    devices,
    push: {
      store: push,
      announcements: new RedisPushAnnouncements(redis, keys.push),
      vapidKeys: () =>
        loadSharedVapidKeys({
          ...vapidSource(config, authSecret, log),
          redis,
          key: keys.vapid,
        }),
    },
    socketAdapter: createAdapter(publisher, subscriber, { key: keys.socketIo }),
    link: redisLink(redis),
    async start() {
      joined = true;
      await presence.start();
    },
    async close() {
      if (joined)
        await presence
          .stop()
          .catch((error: unknown) => log(`leaving presence failed: ${errorMessage(error)}`));
      push.close();
      devices.close();
      await store.close();
      for (const client of [publisher, subscriber, redis]) client.disconnect();
    },
  };
}

function vapidSource(config: BackendConfig, authSecret: string, log: (message: string) => void) {
  return {
    publicKey: config.VAPID_PUBLIC_KEY,
    privateKey: config.VAPID_PRIVATE_KEY,
    authSecret,
    log,
  };
}

/** Redis's reachability as the connection reports it: down from its close until it is ready again. */
function redisLink(redis: Redis): SharedLink {
  let up = redis.status === "ready";
  const listeners = new Set<() => void>();
  const changed = (now: boolean) => {
    if (now === up) return;
    up = now;
    for (const listener of listeners) listener();
  };
  redis.on("ready", () => changed(true));
  redis.on("close", () => changed(false));
  return {
    get up() {
      return up;
    },
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    health: () => ({ redis: { connected: up } }),
  };
}
