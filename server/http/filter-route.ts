import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { displayText } from "../../lib/display-text.ts";
import { fail } from "../../lib/protocol.ts";
import { derivedKey } from "../auth/keys.ts";
import type { ReplyStart } from "../broker/ports.ts";
import { unavailable } from "../store/store.ts";
import { parseJson, readBody, refused, type Reply, serveJson } from "./json-routes.ts";
import { requestPath } from "./request-target.ts";

/**
 * The endpoints the Open WebUI filter calls from Open WebUI's server (docs/PROTOCOL.md, "Open WebUI
 * filter"): `POST /openwebui/replies`, before a reply's request goes to the model, says whose chat it is
 * and which reply starts, so the chat's owner is known before the reply's first ask can arrive (a
 * guest's approvals and secret requests are then refused at once, in a brand-new chat too), and the
 * chat's title when it has one; `POST /openwebui/titles` gives a title Open WebUI made after a reply.
 *
 * Only the filter can call it: the body is signed with a key derived from AUTH_SECRET (never a tab
 * token's key, so no token a browser holds can sign it), Stripe-style, in the header
 * `X-OpenClaw-Asks-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, and a signature
 * older (or newer) than five minutes is refused. A replay within them changes nothing: the first owner
 * of a chat is kept, and a reply is noted once.
 */

export const FILTER_SIGNATURE_HEADER = "x-openclaw-asks-signature";
const SIGNATURE_TOLERANCE_MS = 5 * 60_000;
const BODY_LIMIT = 2 * 1024;

const Id = z.string().min(1).max(200);
const TITLE_LENGTH = 120;
const NAME_LENGTH = 80;
/** Text from users: one clean line, shown where the chat's id was. */
const Title = z
  .string()
  .max(2_000)
  .transform((title) => displayText(title, TITLE_LENGTH))
  .pipe(z.string().min(1, "must not be empty"));
export const ReplyStartBody = z.object({
  chatId: Id,
  /** The assistant message about to be written (Open WebUI's `message_id`). */
  replyId: Id,
  /** The reply's user (Open WebUI's user id): the run is judged by them. */
  userId: Id,
  /** The chat's user as Open WebUI records it (filter 0.5.0 on): recorded as its owner, not the reply's user. */
  chatOwnerId: Id.optional(),
  /** Their name in Open WebUI, which every card of the run shows (filter 0.5.0 on). */
  userName: z
    .string()
    .max(2_000)
    .transform((name) => displayText(name, NAME_LENGTH))
    .optional()
    .transform((name) => name || undefined),
  /** When the filter saw the reply start, epoch ms: orders a chat's replies as an embed token's `mts` does. */
  startedAt: z.number().int().positive(),
  /** The chat's title in Open WebUI, once it has one. */
  title: Title.optional(),
});
/** A chat's title, when Open WebUI gives it one after a reply (its title task runs once the reply is done). */
export const ChatTitleBody = z.object({ chatId: Id, title: Title });

/** The key the filter signs its requests with, from the secret its `auth_secret` valve holds (auth/keys.ts `filterSecret`). */
export function filterKey(valveSecret: string): Buffer {
  return derivedKey(valveSecret, "openWebuiFilter");
}

/** The signature header for `body` at `now`, as the filter computes it (tests, and the filter's own tests, use it). */
export function signFilterRequest(key: Buffer, body: string, now: number): string {
  const t = Math.floor(now / 1000);
  return `t=${t},v1=${createHmac("sha256", key).update(`${t}.${body}`).digest("hex")}`;
}

function verified(key: Buffer, header: string | undefined, body: Buffer, now: number): boolean {
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!match) return false;
  const [, t = "", signature = ""] = match;
  if (Math.abs(now - Number(t) * 1000) > SIGNATURE_TOLERANCE_MS) return false;
  const expected = createHmac("sha256", key).update(`${t}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signature, "hex"));
}

export type FilterRouteOptions = {
  key: Buffer;
  /**
   * The key of a valve that still holds AUTH_SECRET itself (set by hand, or by connect-openwebui before
   * the filter had its own secret): accepted, and the log says once how to take AUTH_SECRET out of it.
   */
  legacyKey?: Buffer;
  now: () => number;
  /** A reply of the chat starts for this user (the broker records the owner and notes the reply, and the title). */
  replyStarted(start: ReplyStart): Promise<void>;
  /** The act token of a reply that starts, for its user: the filter hands it to their browser only. */
  mintAct(start: ReplyStart): Promise<string>;
  chatTitled(chatId: string, title: string): Promise<void>;
  log: (message: string) => void;
};

const ROUTES: ReadonlySet<string> = new Set(["/openwebui/replies", "/openwebui/titles"]);

const LEGACY_VALVE_WARNING =
  "the Open WebUI filter's auth_secret valve holds AUTH_SECRET itself, which mints owner links: run npm run connect-openwebui to give it the filter's own secret";

export function createFilterRoute(options: FilterRouteOptions) {
  let warnedLegacy = false;
  async function route(request: IncomingMessage, pathname: string): Promise<Reply> {
    if (!ROUTES.has(pathname) || request.method !== "POST")
      return refused(
        fail("INVALID", `${request.method ?? "GET"} ${pathname} is not a filter endpoint`),
        405,
      );
    const read = await readBody(request, BODY_LIMIT);
    if (!read.ok) return read.reply;
    const header = request.headers[FILTER_SIGNATURE_HEADER];
    const signature = typeof header === "string" ? header : undefined;
    const signedWith = (key: Buffer | undefined) =>
      key !== undefined && verified(key, signature, read.body, options.now());
    const current = signedWith(options.key);
    const legacy = !current && signedWith(options.legacyKey);
    if (legacy && !warnedLegacy) {
      warnedLegacy = true;
      options.log(LEGACY_VALVE_WARNING);
    }
    if (!current && !legacy) {
      return refused(
        fail(
          "FORBIDDEN",
          "the body must be signed by the Open WebUI filter with the secret its auth_secret valve holds (X-OpenClaw-Asks-Signature), within five minutes",
        ),
        401,
      );
    }
    try {
      if (pathname === "/openwebui/titles") {
        const parsed = parseJson(read.body, ChatTitleBody);
        if (!parsed.ok) return parsed.reply;
        await options.chatTitled(parsed.value.chatId, parsed.value.title);
      } else {
        const parsed = parseJson(read.body, ReplyStartBody);
        if (!parsed.ok) return parsed.reply;
        const { replyId, startedAt, ...rest } = parsed.value;
        const start = { ...rest, reply: { msg: replyId, mts: startedAt } };
        await options.replyStarted(start);
        return { status: 200, body: { ok: true, act: await options.mintAct(start) } };
      }
    } catch (error) {
      const away = unavailable(
        error,
        (why) => `not recorded: ${why}; the filter goes on without it`,
      );
      if (away) return refused(away);
      throw error;
    }
    return { status: 200, body: { ok: true } };
  }

  return {
    handles: (request: IncomingMessage) => /^\/openwebui(\/|$)/.test(requestPath(request.url)),
    handle: serveJson("filter endpoint", route, options.log),
  };
}
