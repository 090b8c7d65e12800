/**
 * The tab protocol's version, apart from the schemas so the browser bundles carry no zod. It is raised
 * only by a change a page of the previous release cannot follow. A page sends it in the handshake
 * (`auth.protocol`; absent means 1, the protocol before it carried a number), and the server refuses
 * any other with `INCOMPATIBLE_PROTOCOL`: the page says to reload it.
 */
export const TAB_PROTOCOL_VERSION = 1;

/** The `data` of the connect error a page of another version gets. */
export type IncompatibleProtocol = { code: "INCOMPATIBLE_PROTOCOL"; serverProtocol: number };

/** The `data` of the connect error a page gets when the server could not check its token just now: it tries again. */
export type CheckUnavailable = { code: "UNAVAILABLE" };
