import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { type Ack, type AckError, fail } from "../../lib/protocol.ts";
import { isOwnerLink, type OwnerRequest } from "../auth/owner-request.ts";
import { HTTP_STATUS, parseBody, type Reply, serveJson } from "./json-routes.ts";

/**
 * The owner's JSON endpoints (`/push/*`, `/devices`: docs/PROTOCOL.md), typed as the tab protocol's
 * events are: each route declares its method and path, who may call it and the zod schema of its
 * body, and its handler returns a typed reply or an `AckError`, as a socket handler returns its ack.
 * The status is read from the error's code (HTTP_STATUS), or is 200 (201 for a route that creates).
 * A request is judged in this order: its route (405 for none), its sender (403), the link the route
 * needs (403), its body (413, 400), then the handler; a handler that meets the shared store away is
 * answered 503 (json-routes.ts).
 */

/** Who may call a route: anyone, an owner's dashboard token, or one whose link is of a kind (else `refusal`, a 403). */
export type Access =
  "anyone" | "owner" | { link: "revocable" | "owner-link"; refusal(sender: OwnerRequest): string };

/** An owner's request whose token's link has a key id: what a route needing a kind of link is sent. */
export type LinkedOwnerRequest = OwnerRequest & { link: { kid: string } };

export type RouteInput<A extends Access, B> = {
  /** The owner and the link of the token, for every route but one anyone may call. */
  sender: A extends "anyone" ? null : A extends "owner" ? OwnerRequest : LinkedOwnerRequest;
  body: B;
  /** A path pattern's first group: the id in the path. */
  param: string;
};

export type Route<A extends Access, B, R extends object> = {
  method: "GET" | "POST" | "DELETE";
  /** The path, or a pattern matching all of it whose first group is the route's `param`. */
  path: string | RegExp;
  access: A;
  /** The JSON body, read with this schema; a route without one reads none. */
  body?: z.ZodType<B>;
  /** 201 for a route that creates what it was sent. */
  created?: true;
  handle(input: RouteInput<A, B>): Promise<Ack<R>>;
};

/** A route as the API runs it, its types checked where it was declared. */
type AnyRoute = Route<Access, unknown, object>;

export function route<const A extends Access, B = undefined, R extends object = object>(
  declared: Route<A, B, R>,
): AnyRoute {
  return declared;
}

export type JsonApiOptions = {
  /** How the log names a failed request and a reply names a path of no route: "push endpoint". */
  name: string;
  /** The paths that are this API's: a request to one answered by no route is a 405. */
  paths: RegExp;
  routes: readonly AnyRoute[];
  bodyLimit: number;
  /** Every request needs an owner's dashboard token, one to no route too: the device endpoints show nobody else which exist. */
  ownersOnly?: true;
  ownerOf: (request: IncomingMessage) => Promise<OwnerRequest | null>;
  /** Whether a key id is the owner links' current one. */
  isOwnerLinkKid: (kid: string) => Promise<boolean>;
  log: (message: string) => void;
};

const NO_OWNER = fail("FORBIDDEN", "an owner's dashboard token is needed (Authorization: Bearer)");

/** An error answered with its code's status. */
const refused = (error: AckError): Reply => ({
  status: HTTP_STATUS[error.error.code],
  body: error,
});

export function jsonApi(options: JsonApiOptions) {
  const hasLink = ({ link }: OwnerRequest, kind: "revocable" | "owner-link") =>
    kind === "revocable" ? link.kid !== null : isOwnerLink(link, options.isOwnerLinkKid);

  /** The route for the request and the id in its path, or null. */
  function find(method: string, pathname: string): { route: AnyRoute; param: string } | null {
    for (const candidate of options.routes) {
      if (candidate.method !== method) continue;
      if (typeof candidate.path === "string") {
        if (candidate.path === pathname) return { route: candidate, param: "" };
        continue;
      }
      const match = candidate.path.exec(pathname);
      if (match && match[0] === pathname) return { route: candidate, param: match[1] ?? "" };
    }
    return null;
  }

  async function answer(request: IncomingMessage, pathname: string): Promise<Reply> {
    const method = request.method ?? "GET";
    const first = options.ownersOnly ? await options.ownerOf(request) : undefined;
    if (first === null) return refused(NO_OWNER);
    const found = find(method, pathname);
    if (!found)
      return {
        status: 405,
        body: fail("INVALID", `${method} ${pathname} is not a ${options.name}`),
      };
    const { route: chosen, param } = found;
    let sender: OwnerRequest | null = null;
    if (chosen.access !== "anyone") {
      sender = first ?? (await options.ownerOf(request));
      if (!sender) return refused(NO_OWNER);
      if (typeof chosen.access === "object" && !(await hasLink(sender, chosen.access.link)))
        return refused(fail("FORBIDDEN", chosen.access.refusal(sender)));
    }
    let body: unknown;
    if (chosen.body) {
      const parsed = await parseBody(request, chosen.body, options.bodyLimit);
      if (!parsed.ok) return parsed.reply;
      body = parsed.value;
    }
    const reply = await chosen.handle({ sender, body, param });
    return reply.ok ? { status: chosen.created ? 201 : 200, body: reply } : refused(reply);
  }

  return {
    handles: (request: IncomingMessage) =>
      options.paths.test(new URL(request.url ?? "/", "http://x").pathname),
    handle: serveJson(options.name, answer, options.log),
  };
}
