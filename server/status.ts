import type { GatewayStatus } from "../lib/protocol.ts";
import { Emitter } from "./events.ts";
import type { SharedLink } from "./store/backend.ts";
import type { StatusSource } from "./tabs/io.ts";

/**
 * What tabs and /healthz are told about this instance: the Gateway's link, and, with several
 * instances, whether the Redis they share is reachable. While it is not, the instance is degraded:
 * answers are refused (UNAVAILABLE) rather than taken where they could be lost.
 */

export const REDIS_DOWN = "Redis unreachable: answers are refused until it is back";

export class ServiceStatus
  extends Emitter<{ "gateway:status": [status: GatewayStatus] }>
  implements StatusSource
{
  private readonly gateway: StatusSource;
  private readonly link: SharedLink;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(gateway: StatusSource, link: SharedLink) {
    super();
    this.gateway = gateway;
    this.link = link;
    const changed = () => this.emit("gateway:status", this.status);
    this.unsubscribe.push(gateway.on("gateway:status", changed), link.watch(changed));
  }

  get status(): GatewayStatus {
    const status = this.gateway.status;
    return this.link.up ? status : { ...status, degraded: REDIS_DOWN };
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
  }
}
