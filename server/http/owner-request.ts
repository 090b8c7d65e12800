/** Who sent an owner-only HTTP request: the owner, and the device when the token is a device link's. */
export type OwnerRequest = { owner: string; device: string | null };
