import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { storeBackends } from "../../test/support/store-backends.ts";
import { isCurrentOwnerLinkKid, mintOwnerLink, revokeOwnerLinks } from "./owner-links.ts";
import { mintTabToken, secretKey, verifyTabToken } from "./tokens.ts";

const key = secretKey("owner-links-test-secret-owner-links-test-secret");

const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;
const expiryOf = (token: string) => decodeJwt(token).exp! * 1000;

describe.each(storeBackends())(
  "owner links on $name (before: none could be revoked)",
  (backend) => {
    const setup = async () => {
      const store = await backend.open();
      return { store, isKnownKid: isCurrentOwnerLinkKid(store) };
    };

    it("an owner link works until it is revoked; the next one works", async () => {
      const { store, isKnownKid } = await setup();
      const first = await mintOwnerLink({
        store,
        key,
        owner: "owner",
        hours: 24,
        baseUrl: "http://127.0.0.1:3000/",
      });
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/\?token=/);
      expect(
        await verifyTabToken(tokenOf(first.url), key, {
          maxTokenDays: 30,
          now: Date.now,
          isKnownKid,
        }),
      ).toEqual({
        userId: "owner",
        chat: null,
        reply: null,
        kid: await store.ownerLinkKid(),
        expiresAt: expiryOf(tokenOf(first.url)),
      });
      await revokeOwnerLinks(store);
      await expect(
        verifyTabToken(tokenOf(first.url), key, { maxTokenDays: 30, now: Date.now, isKnownKid }),
      ).rejects.toThrow(/owner link was revoked/);
      const second = await mintOwnerLink({
        store,
        key,
        owner: "owner",
        hours: 24,
        baseUrl: "http://127.0.0.1:3000",
      });
      expect(
        await verifyTabToken(tokenOf(second.url), key, {
          maxTokenDays: 30,
          now: Date.now,
          isKnownKid,
        }),
      ).toEqual({
        userId: "owner",
        chat: null,
        reply: null,
        kid: await store.ownerLinkKid(),
        expiresAt: expiryOf(tokenOf(second.url)),
      });
    });

    it("a token with a kid is refused where no kid check is given; tokens without a kid (embed, Open WebUI) are untouched by revocation", async () => {
      const { store, isKnownKid } = await setup();
      const link = await mintOwnerLink({
        store,
        key,
        owner: "owner",
        hours: 1,
        baseUrl: "http://x",
      });
      await expect(
        verifyTabToken(tokenOf(link.url), key, { maxTokenDays: 30, now: Date.now }),
      ).rejects.toThrow(/revoked/);
      const embed = await mintTabToken(key, { userId: "alice", chat: "chat-1", ttlSeconds: 60 });
      await revokeOwnerLinks(store);
      expect(
        await verifyTabToken(embed, key, { maxTokenDays: 30, now: Date.now, isKnownKid }),
      ).toEqual({
        userId: "alice",
        chat: "chat-1",
        reply: null,
        kid: null,
        expiresAt: expiryOf(embed),
      });
    });
  },
);
