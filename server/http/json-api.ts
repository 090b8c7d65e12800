import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { AnyHttpRoute, BodyOf, ReplyOf } from "../../lib/http-routes.ts";
import { type AckError, fail } from "../../lib/protocol.ts";
import { isOwnerLink, type OwnerRequest } from "../auth/owner-request.ts";
import { parseBody, refused, type Reply, serveJson } from "./json-routes.ts";
import { requestPath } from "./request-target.ts";

/**
 * The owner's JSON endpoints (`/push/*`, `/devices`: docs/PROTOCOL.md), typed as the tab protocol's
 * events are: each route of the table (lib/http-routes.ts: method, path, body and reply schemas) is
 * answered by a handler that says who may call it and returns the typed reply or an `AckError`, as a
 * socket handler returns its ack.
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

/** How the server answers a route of the table (lib/http-routes.ts). */
export type RouteHandler<A extends Access, S extends AnyHttpRoute> = {
  access: A;
  /** The body's schema where the server checks more than the table says (a push service's host). */
  body?: z.core.$ZodType<BodyOf<S>>;
  /** 201 for a route that creates what it was sent. */
  created?: true;
  handle: (input: RouteInput<A, BodyOf<S>>) => Promise<ReplyOf<S> | AckError>;
};

/** A route as the API runs it, its types checked where it was declared. */
type AnyRoute = {
  spec: AnyHttpRoute;
  access: Access;
  body: z.core.$ZodType | null;
  created?: true;
  handle: (input: RouteInput<Access, unknown>) => Promise<{ ok: true } | AckError>;
};

export function route<S extends AnyHttpRoute, const A extends Access>(
  spec: S,
  handler: RouteHandler<A, S>,
): AnyRoute {
  return {
    spec,
    access: handler.access,
    body: handler.body ?? spec.body,
    ...(handler.created ? { created: true } : {}),
    // The API hands each handler the sender its access admits and the body its schema read.
    handle: handler.handle as AnyRoute["handle"],
  };
}

/** The id in `pathname` when it is `spec`'s path ("" for a path without one), else null. */
function matchPath({ path, param }: AnyHttpRoute, pathname: string): string | null {
  if (!path.endsWith(":id")) return path === pathname ? "" : null;
  const prefix = path.slice(0, -":id".length);
  if (!pathname.startsWith(prefix)) return null;
  const id = pathname.slice(prefix.length);
  return param?.test(id) ? id : null;
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

export function jsonApi(options: JsonApiOptions) {
  const hasLink = ({ link }: OwnerRequest, kind: "revocable" | "owner-link") =>
    kind === "revocable" ? link.kid !== null : isOwnerLink(link, options.isOwnerLinkKid);

  /** The route for the request and the id in its path, or null. */
  function find(method: string, pathname: string): { route: AnyRoute; param: string } | null {
    for (const candidate of options.routes) {
      if (candidate.spec.method !== method) continue;
      const param = matchPath(candidate.spec, pathname);
      if (param !== null) return { route: candidate, param };
    }
    return null;
  }

  async function answer(request: IncomingMessage, pathname: string): Promise<Reply> {
    const method = request.method ?? "GET";
    const first = options.ownersOnly ? await options.ownerOf(request) : undefined;
    if (first === null) return refused(NO_OWNER);
    const found = find(method, pathname);
    if (!found)
      return refused(fail("INVALID", `${method} ${pathname} is not a ${options.name}`), 405);
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
    handles: (request: IncomingMessage) => options.paths.test(requestPath(request.url)),
    handle: serveJson(options.name, answer, options.log),
  };
}
