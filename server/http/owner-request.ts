/**
 * Who sent an owner-only HTTP request: the owner, and the link whose token it carried (its key id, a
 * device's or the owner links', null for a token without one; its expiry in epoch ms).
 */
export type OwnerRequest = { owner: string; link: { kid: string | null; expiresAt: number } };
