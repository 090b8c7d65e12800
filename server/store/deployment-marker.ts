import type { Redis } from "ioredis";
import { derivedKey } from "../auth/keys.ts";
import { redisNamespaces } from "./redis-keys.ts";
import { unavailableAs } from "./redis-scripts.ts";

/**
 * Which deployment a Redis key prefix belongs to. Two deployments given one Redis and the same
 * REDIS_KEY_PREFIX would share every key (asks, owner-link key id, devices, push subscriptions, VAPID
 * keys) and merge without a word. So the first instance to start writes a marker under the prefix
 * (`SET NX`), and every later start, and `npm run owner-link`, compares it with its own: one made with
 * another AUTH_SECRET refuses the start. The marker is an HMAC of a fixed label keyed with AUTH_SECRET:
 * equal for equal secrets, and it reveals nothing of the secret (nor is it a key anything else uses).
 */

export class DeploymentCollision extends Error {}

export function deploymentMarker(authSecret: string): string {
  return derivedKey(authSecret, "deploymentMarker").toString("hex");
}

/** Claims the prefix for this deployment, or throws DeploymentCollision (naming neither the secret nor the marker). */
export async function claimDeploymentPrefix(
  redis: Redis,
  prefix: string,
  authSecret: string,
): Promise<void> {
  const key = redisNamespaces(prefix).deployment;
  const marker = deploymentMarker(authSecret);
  await unavailableAs(redis, () => redis.set(key, marker, "NX"));
  const stored = await unavailableAs(redis, () => redis.get(key));
  if (stored === marker) return;
  throw new DeploymentCollision(
    `REDIS_KEY_PREFIX "${prefix}" is in use in this Redis by another deployment, with another AUTH_SECRET: give each deployment its own REDIS_KEY_PREFIX (after changing AUTH_SECRET on purpose for every instance, delete the Redis key ${key} first)`,
  );
}
