import type { GatewayStatus, InstanceStatus } from "../lib/protocol.ts";
import { Emitter, type Subscribable } from "./events.ts";
import type { SharedLink } from "./store/backend.ts";

/** A status and its changes: the Gateway adapter's link, or this instance's as tabs are told it. */
export interface StatusSource<S> extends Subscribable<{ "gateway:status": [status: S] }> {
  readonly status: S;
}

/**
 * What tabs and /healthz are told about this instance: the Gateway's link, and, with several
 * instances, whether the Redis they share is reachable. While it is not, the instance is degraded:
 * answers are refused (UNAVAILABLE) rather than taken where they could be lost.
 */

export const REDIS_DOWN = "Redis unreachable: answers are refused until it is back";

export class ServiceStatus
  extends Emitter<{ "gateway:status": [status: InstanceStatus] }>
  implements StatusSource<InstanceStatus>
{
  private readonly gateway: StatusSource<GatewayStatus>;
  private readonly link: SharedLink;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(gateway: StatusSource<GatewayStatus>, link: SharedLink) {
    super();
    this.gateway = gateway;
    this.link = link;
    const changed = () => this.emit("gateway:status", this.status);
    this.unsubscribe.push(gateway.on("gateway:status", changed), link.watch(changed));
  }

  get status(): InstanceStatus {
    const status = this.gateway.status;
    return this.link.up ? status : { ...status, degraded: REDIS_DOWN };
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
  }
}
