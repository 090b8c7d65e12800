import type { Clock } from "../../lib/clock.ts";
import { Emitter } from "../events.ts";
import type { DeviceStore } from "./device-store.ts";

/**
 * Revoking a device link, as an event. The device store forgets the device first (its next connect is
 * refused on every instance); then `link:revoked` goes to what holds something of the link, and the
 * revocation is answered once each has ended it: the tab server closes the link's sockets (on every
 * instance, through the Socket.IO adapter), push forgets the subscriptions made with it (their
 * notifications carry action tokens). Owner links are revoked by the `owner-link` command, another
 * process: each instance's periodic check of its sockets' links (link-check.ts) closes theirs.
 */

export type RevocationEvents = { "link:revoked": [kid: string] };

export class Revocations extends Emitter<RevocationEvents, void | Promise<void>> {
  private readonly devices: DeviceStore;
  private readonly clock: Clock;

  constructor(options: { devices: DeviceStore; clock: Clock }) {
    super();
    this.devices = options.devices;
    this.clock = options.clock;
  }

  /** Returns whether the owner had such a device. A listener's failure rejects; the device stays revoked. */
  async revokeDevice(kid: string, owner: string): Promise<boolean> {
    if (!(await this.devices.revoke(kid, owner, this.clock.now()))) return false;
    await this.emitAndWait("link:revoked", kid);
    return true;
  }
}
