import type { Redis } from "ioredis";
import type { GatewayStatus } from "../lib/protocol.ts";
import { Emitter } from "./events.ts";
import type { StatusSource } from "./tabs/io.ts";

/**
 * What tabs and /healthz are told about this instance: the Gateway's link, and, with several
 * instances, whether the Redis they share is reachable. While it is not, the instance is degraded:
 * answers are refused (UNAVAILABLE) rather than taken where they could be lost.
 */

export const REDIS_DOWN = "Redis unreachable: answers are refused until it is back";

export class ServiceStatus extends Emitter<{ "gateway:status": [status: GatewayStatus] }> implements StatusSource {
  private readonly gateway: StatusSource;
  private redisUp: boolean;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(gateway: StatusSource, redis: Redis | null) {
    super();
    this.gateway = gateway;
    this.redisUp = redis === null || redis.status === "ready";
    this.unsubscribe.push(gateway.on("gateway:status", () => this.emit("gateway:status", this.status)));
    if (redis) {
      const up = () => this.changed(true);
      const down = () => this.changed(false);
      redis.on("ready", up);
      redis.on("close", down);
      this.unsubscribe.push(() => {
        redis.off("ready", up);
        redis.off("close", down);
      });
    }
  }

  get status(): GatewayStatus {
    const status = this.gateway.status;
    return this.redisUp ? status : { ...status, degraded: REDIS_DOWN };
  }

  get redisConnected(): boolean {
    return this.redisUp;
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
  }

  private changed(up: boolean): void {
    if (up === this.redisUp) return;
    this.redisUp = up;
    this.emit("gateway:status", this.status);
  }
}
