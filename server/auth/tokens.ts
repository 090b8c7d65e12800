import { errors, jwtVerify, SignJWT } from "jose";
import { errorMessage } from "../../lib/error-message.ts";
import type { ReplyClaim } from "../broker/ports.ts";

// Tab authentication: an HS256 JWT signed with AUTH_SECRET. The user id is `sub`, or `id` so that an
// Open WebUI session token signed with the same secret (WEBUI_SECRET_KEY) works as it is. An optional
// `chat` claim limits the socket to one chat (embed tokens). Every token must expire, and not too far
// ahead: a leaked token is then only good for a while. The limit is judged from `exp` and the clock,
// because older Open WebUI tokens carry no `iat`.

/**
 * `reply`: an embed token's assistant message and mint time; only the newest reply's widget of a chat is live (docs/ARCHITECTURE.md#live-and-idle-widgets; docs/PROTOCOL.md#tab-protocol-v1).
 * `kid`: the key id of an owner or device link (checked current), whose sockets its revocation closes.
 * `expiresAt`: its `exp`, in epoch ms (a push subscription made with the token lasts until then).
 */
export type TabIdentity = {
  userId: string;
  chat: string | null;
  reply: ReplyClaim | null;
  kid: string | null;
  expiresAt: number;
};

export class AuthError extends Error {}
/** Validly signed, but past its `exp`: good for nothing live, still for a reply's summaries. */
export class TokenExpired extends AuthError {}

export type TokenRules = {
  /** The furthest `exp` may lie ahead of now. */
  maxTokenDays: number;
  /** The time the token is judged at, epoch ms: the caller's clock. */
  now: () => number;
  /** Owner links carry a key id (`kid`); one that is not current was revoked. Without this check no kid is accepted. */
  isKnownKid?: (kid: string) => Promise<boolean>;
  /**
   * An expired token is still good for what needs no live token (a reply's summaries): it must be
   * validly signed and well-formed all the same. Sockets never set this.
   */
  allowExpired?: boolean;
  /**
   * The Open WebUI filter's key (auth/keys.ts `filterSecret`), which Open WebUI's valves hold: a token
   * it signed is good only as an embed token, bound to one chat and naming no link.
   */
  embedKey?: Uint8Array;
};

export function secretKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export async function verifyTabToken(
  token: unknown,
  key: Uint8Array,
  rules: TokenRules,
): Promise<TabIdentity> {
  return (await verifiedToken(token, key, rules)).identity;
}

async function verifiedToken(token: unknown, key: Uint8Array, rules: TokenRules) {
  if (typeof token !== "string" || token.length === 0)
    throw new AuthError("missing token: connect with auth: {token}");
  const now = rules.now();
  const { payload, protectedHeader } = await signedClaims(token, key, rules, now);
  // Outside the signature's checks: a store that cannot say whether a kid is current (Redis away) is
  // no verdict on the token, and its error reaches the caller as one.
  if (protectedHeader.kid !== undefined && !(await rules.isKnownKid?.(protectedHeader.kid)))
    throw new AuthError("this owner link was revoked: mint a new one with npm run owner-link");
  const userId =
    typeof payload.sub === "string" && payload.sub
      ? payload.sub
      : typeof payload.id === "string"
        ? payload.id
        : "";
  if (!userId) throw new AuthError("token has no user id (sub or id claim)");
  if (payload.exp! * 1000 - now > rules.maxTokenDays * DAY_MS)
    throw new AuthError(`token lives too long: exp is more than ${rules.maxTokenDays} days ahead`);
  // A claim that is there but not a chat id must not read as "no claim", which would mean every chat.
  const chat = payload.chat;
  if (chat !== undefined && (typeof chat !== "string" || chat === ""))
    throw new AuthError("token has a malformed chat claim: it must be a chat id");
  const identity: TabIdentity = {
    userId,
    chat: chat ?? null,
    reply: replyClaim(payload.msg, payload.mts, chat !== undefined),
    kid: protectedHeader.kid ?? null,
    expiresAt: payload.exp! * 1000,
  };
  return { identity, scope: payload.scope };
}

/** The token's claims once its signature (by `key`, or by `rules.embedKey` for an embed token) and `exp` hold. */
async function signedClaims(token: string, key: Uint8Array, rules: TokenRules, now: number) {
  const options = {
    algorithms: ["HS256"],
    requiredClaims: ["exp"],
    currentDate: new Date(now),
    // jose takes no "ignore exp": a tolerance reaching back to the epoch admits every past exp.
    ...(rules.allowExpired ? { clockTolerance: Math.ceil(now / 1000) } : {}),
  };
  try {
    return await jwtVerify(token, key, options).catch(async (error: unknown) => {
      if (!rules.embedKey || !(error instanceof errors.JWSSignatureVerificationFailed)) throw error;
      const embed = await jwtVerify(token, rules.embedKey, options);
      if (embed.payload.chat === undefined || embed.protectedHeader.kid !== undefined)
        throw new AuthError(
          "a token signed with the Open WebUI filter's key must be bound to one chat",
        );
      return embed;
    });
  } catch (error) {
    if (error instanceof AuthError) throw error;
    if (error instanceof errors.JWTExpired) throw new TokenExpired("token expired");
    if (error instanceof errors.JWSSignatureVerificationFailed)
      throw new AuthError("token signature is invalid");
    if (error instanceof errors.JWTClaimValidationFailed && error.claim === "exp")
      throw new AuthError("token has no exp: every token must expire");
    throw new AuthError(`token rejected: ${errorMessage(error)}`);
  }
}

const DAY_MS = 24 * 3600 * 1000;

/** `msg` and `mts` come together, on an embed token only; a malformed pair must not read as "no reply" (never live) silently. */
function replyClaim(msg: unknown, mts: unknown, hasChat: boolean): ReplyClaim | null {
  if (msg === undefined && mts === undefined) return null;
  if (!hasChat) throw new AuthError("token has a msg claim but no chat claim");
  if (typeof msg !== "string" || msg === "" || msg.length > 200)
    throw new AuthError("token has a malformed msg claim: it must be a message id");
  if (typeof mts !== "number" || !Number.isSafeInteger(mts) || mts < 0)
    throw new AuthError(
      "token has a malformed mts claim: it must be the mint time in epoch milliseconds",
    );
  return { msg, mts };
}

/**
 * `now`: the mint time, epoch ms, from the minter's clock (a device link's, whose expiry is stored with
 * it); without it jose reads the wall clock, as for the tokens the tests and the commands mint.
 */
export async function mintTabToken(
  key: Uint8Array,
  claims: {
    userId: string;
    chat?: string;
    reply?: ReplyClaim;
    ttlSeconds: number;
    kid?: string;
    now?: number;
    /** `act`: an act token (see `verifyActToken`); minted by this server only, never stored in a chat. */
    scope?: typeof ACT_SCOPE;
  },
): Promise<string> {
  const issuedAt = claims.now === undefined ? undefined : Math.floor(claims.now / 1000);
  const chatClaims = claims.chat
    ? {
        chat: claims.chat,
        ...(claims.reply ?? {}),
        ...(claims.scope ? { scope: claims.scope } : {}),
      }
    : {};
  const jwt = new SignJWT(chatClaims)
    .setProtectedHeader(claims.kid ? { alg: "HS256", kid: claims.kid } : { alg: "HS256" })
    .setSubject(claims.userId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(
      issuedAt === undefined ? `${claims.ttlSeconds}s` : issuedAt + claims.ttlSeconds,
    );
  return jwt.sign(key);
}

const ACT_SCOPE = "act";

/** What an act token lets do: act (answer, approve, enter a secret) as `userId` in the widget of `chat`'s reply `msg`. */
export type ActClaims = { userId: string; chat: string; msg: string };

/**
 * An act token (docs/SECURITY.md#a-stored-token-never-acts): the power to answer in one reply's widget,
 * which the filter hands only to the browser that sent the reply's message, never through the chat. So it
 * must be signed with AUTH_SECRET's key, never the filter's (which Open WebUI's valves hold), and say
 * `scope: "act"`; a widget's own token (stored on the message, copied into every share) only views.
 */
export async function mintActToken(
  key: Uint8Array,
  claims: { userId: string; chat: string; reply: ReplyClaim; ttlSeconds: number; now: number },
): Promise<string> {
  return mintTabToken(key, { ...claims, scope: ACT_SCOPE });
}

export async function verifyActToken(
  token: string,
  key: Uint8Array,
  rules: Pick<TokenRules, "maxTokenDays" | "now">,
): Promise<ActClaims> {
  // No `embedKey`: a token the filter's key signed never acts.
  const { identity, scope } = await verifiedToken(token, key, rules);
  if (scope !== ACT_SCOPE || identity.chat === null || identity.reply === null)
    throw new AuthError("not an act token: the widget's own token only shows its chat's asks");
  return { userId: identity.userId, chat: identity.chat, msg: identity.reply.msg };
}
