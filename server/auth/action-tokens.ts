import { randomUUID } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import type { Decision } from "../../lib/ask.ts";
import { derivedKey } from "./keys.ts";

/**
 * Action tokens: what a push notification's Allow once / Deny buttons carry instead of an owner token
 * (the service worker holds none). Each is signed (HS256, with a key of its own derived from
 * AUTH_SECRET, so a tab token is never an action token nor the other way round), bound to one ask, one
 * decision and the owner it was sent to, valid until the ask's expiry (or its link's, if sooner), and
 * single-use (its `jti` is claimed in the push store when it is redeemed). It names the link its
 * subscription was made with (`kid`: every subscription has one), which must still be current when it is
 * redeemed: revoking a device or the owner links ends what their notifications can decide.
 */

export type ActionClaims = {
  askId: string;
  decision: Decision;
  owner: string;
  kid: string;
  jti: string;
  expiresAt: number;
};

export class ActionTokenError extends Error {
  readonly code: "INVALID" | "EXPIRED";
  constructor(code: "INVALID" | "EXPIRED", message: string) {
    super(message);
    this.code = code;
  }
}

const TYPE = "openclaw-asks/push-action";

export function actionTokenKey(authSecret: string): Uint8Array {
  return derivedKey(authSecret, "pushActions");
}

export async function mintActionToken(
  key: Uint8Array,
  claims: Omit<ActionClaims, "jti">,
): Promise<string> {
  return (
    new SignJWT({ typ: TYPE, ask: claims.askId, dec: claims.decision, kid: claims.kid })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(claims.owner)
      .setJti(randomUUID())
      // Never later than the ask (or the link) itself: rounded down to the second.
      .setExpirationTime(Math.floor(claims.expiresAt / 1000))
      .sign(key)
  );
}

export async function verifyActionToken(
  key: Uint8Array,
  token: string,
  now: number,
): Promise<ActionClaims> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ["HS256"],
      requiredClaims: ["exp", "jti", "sub"],
      currentDate: new Date(now),
    });
    const { typ, ask, dec, kid } = payload as {
      typ?: unknown;
      ask?: unknown;
      dec?: unknown;
      kid?: unknown;
    };
    // One without a kid was sent to a subscription made with a token that cannot be revoked: refused, so it cannot outlive that.
    if (
      typ !== TYPE ||
      typeof ask !== "string" ||
      (dec !== "allow-once" && dec !== "deny") ||
      typeof kid !== "string"
    )
      throw new ActionTokenError("INVALID", "not an action token");
    return {
      askId: ask,
      decision: dec,
      owner: payload.sub!,
      kid,
      jti: payload.jti!,
      expiresAt: payload.exp! * 1000,
    };
  } catch (error) {
    if (error instanceof ActionTokenError) throw error;
    if (error instanceof errors.JWTExpired)
      throw new ActionTokenError(
        "EXPIRED",
        "this action has expired with its ask (or with the link its notification was sent to)",
      );
    throw new ActionTokenError("INVALID", "action token rejected");
  }
}
