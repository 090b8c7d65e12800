import type { ReplyClaim } from "../../server/broker/ports.ts";

/**
 * The reply embed tokens are minted for unless a test names another. All of a chat's embed tokens are
 * then one reply's widgets, so they are live and follow the v1 rule among themselves (newest view wins).
 */
export const TEST_REPLY: ReplyClaim = { msg: "reply-1", mts: 1 };
