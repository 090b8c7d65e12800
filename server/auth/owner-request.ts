/** The link a token is: its key id (a device's or the owner links', null for a token without one) and its expiry in epoch ms. */
export type TokenLink = { kid: string | null; expiresAt: number };

/** Who sent an owner-only HTTP request: the owner, and the link whose token it carried. */
export type OwnerRequest = { owner: string; link: TokenLink };
