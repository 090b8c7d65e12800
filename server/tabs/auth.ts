import { SignJWT, errors, jwtVerify } from "jose";

/**
 * Tab authentication: an HS256 JWT signed with AUTH_SECRET. The user id is `sub`, or `id` so that an
 * Open WebUI session token signed with the same secret (WEBUI_SECRET_KEY) works as it is.
 * An optional `chat` claim limits the socket to one chat (embed tokens).
 */
export type TabIdentity = { userId: string; chat: string | null };

export class AuthError extends Error {}

export function secretKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export type VerifyOptions = {
  /** Owner links carry a key id (`kid`); one that is not current was revoked. Without this check no kid is accepted. */
  isKnownKid?: (kid: string) => boolean;
};

export async function verifyTabToken(token: unknown, key: Uint8Array, options: VerifyOptions = {}): Promise<TabIdentity> {
  if (typeof token !== "string" || token.length === 0) throw new AuthError("missing token: connect with auth: {token}");
  try {
    const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: ["HS256"] });
    if (protectedHeader.kid !== undefined && !options.isKnownKid?.(protectedHeader.kid)) throw new AuthError("this owner link was revoked: mint a new one with npm run owner-link");
    const userId = typeof payload.sub === "string" && payload.sub ? payload.sub : typeof payload.id === "string" ? payload.id : "";
    if (!userId) throw new AuthError("token has no user id (sub or id claim)");
    const chat = typeof payload.chat === "string" && payload.chat ? payload.chat : null;
    return { userId, chat };
  } catch (error) {
    if (error instanceof AuthError) throw error;
    if (error instanceof errors.JWTExpired) throw new AuthError("token expired");
    if (error instanceof errors.JWSSignatureVerificationFailed) throw new AuthError("token signature is invalid");
    throw new AuthError(`token rejected: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function mintTabToken(key: Uint8Array, claims: { userId: string; chat?: string; ttlSeconds: number; kid?: string }): Promise<string> {
  const jwt = new SignJWT(claims.chat ? { chat: claims.chat } : {})
    .setProtectedHeader(claims.kid ? { alg: "HS256", kid: claims.kid } : { alg: "HS256" })
    .setSubject(claims.userId)
    .setIssuedAt()
    .setExpirationTime(`${claims.ttlSeconds}s`);
  return jwt.sign(key);
}
