import type { IncomingMessage, ServerResponse } from "node:http";
import type { Ask } from "../../lib/ask.ts";
import {
  askQuestionText,
  endingSummary,
  RECORD_HEADINGS,
  summaryPrefix,
} from "../../lib/wording.ts";
import { AuthError, type TabIdentity, TokenExpired, verifyTabToken } from "../auth/tokens.ts";
import type { ReplyClaim, Tab } from "../broker/ports.ts";
import { newNonce, securityHeaders } from "./headers.ts";
import { requestTarget } from "./request-target.ts";

/**
 * The widget page of a reply that is not its chat's live one (docs/ARCHITECTURE.md#live-and-idle-widgets): Open WebUI mounts a widget
 * for every reply that has one, so all but the latest reply's get this page instead of the app. It is
 * served here, before Next.js: the records (❓ Ask User, 🔑 Secret, 🛡️ Approval) of the asks that finished in that reply,
 * rendered on the server, and one inline script (with the response's CSP nonce) that reports the
 * page's height, 0 when there is nothing to show. No socket, no framework, a few kB in all.
 *
 * The live widget (the token's reply is the chat's newest embed, and the token has not expired) is
 * left to Next.js, and so is a request this page cannot judge (no token, a bad one, another chat's):
 * the app's widget says what is wrong.
 */

export type WidgetPageOptions = {
  broker: {
    isLiveReply(chatId: string, reply: ReplyClaim): Promise<boolean>;
    replySummaries(
      viewer: Pick<Tab, "userId" | "isOwner">,
      chatId: string,
      replyId: string,
    ): Promise<Ask[]>;
  };
  key: Uint8Array;
  /** The Open WebUI filter's key: it signs widget tokens, good for one chat each (auth/tokens.ts). */
  embedKey?: Uint8Array;
  owners: ReadonlySet<string>;
  maxTokenDays: number;
  /** OPENWEBUI_ORIGINS: who may frame the widget. */
  frameAncestors: readonly string[];
  now?: () => number;
};

const WIDGET_PATH = /^\/embed\/chat\/([^/?#]+)\/?$/;

/** Answers the request with the idle widget page and resolves true, or resolves false for the app to serve it. */
export function createWidgetPageRoute(
  options: WidgetPageOptions,
): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  const now = options.now ?? Date.now;
  return async (request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") return false;
    const url = requestTarget(request.url);
    const match = url && WIDGET_PATH.exec(url.pathname);
    if (!match) return false;
    let chatId: string;
    try {
      chatId = decodeURIComponent(match[1]!);
    } catch {
      // Not valid percent-encoding: the pages handler refuses it (400).
      return false;
    }
    const judged = await judge(url.searchParams.get("token"), chatId);
    if (judged === null || judged.live) return false;
    const { identity } = judged;
    const summaries = identity.reply
      ? await options.broker.replySummaries(
          { userId: identity.userId, isOwner: options.owners.has(identity.userId) },
          chatId,
          identity.reply.msg,
        )
      : [];
    const nonce = newNonce();
    const body = renderIdlePage(summaries, nonce);
    response.writeHead(200, {
      ...securityHeaders(request.url ?? "/", {
        frameAncestors: options.frameAncestors,
        dev: false,
        nonce,
      }),
      "Content-Type": "text/html; charset=utf-8",
      "Content-Length": Buffer.byteLength(body),
      // Whether a reply is live changes as the chat goes on: never reuse a stored copy.
      "Cache-Control": "no-store",
    });
    response.end(request.method === "HEAD" ? undefined : body);
    return true;
  };

  /** Live, idle, or null when this page cannot judge the request. */
  async function judge(
    token: string | null,
    chatId: string,
  ): Promise<{ live: boolean; identity: TabIdentity } | null> {
    const rules = { maxTokenDays: options.maxTokenDays, now, embedKey: options.embedKey };
    try {
      const identity = await verifyTabToken(token, options.key, rules);
      if (identity.chat !== chatId) return null;
      // A token of the first filter names no reply: its widget is never live (docs/PROTOCOL.md#one-live-widget-per-chat).
      return {
        live: identity.reply !== null && (await options.broker.isLiveReply(chatId, identity.reply)),
        identity,
      };
    } catch (error) {
      if (!(error instanceof TokenExpired)) {
        if (error instanceof AuthError) return null;
        throw error;
      }
    }
    // Expired: a validly signed token still shows its reply's summaries, but never a card.
    const identity = await verifyTabToken(token, options.key, {
      ...rules,
      allowExpired: true,
    }).catch((error: unknown) => {
      if (error instanceof AuthError) return null;
      throw error;
    });
    return identity && identity.chat === chatId ? { live: false, identity } : null;
  }
}

/** The page: its summaries (question and answer; a secret's summary never holds the value) and the height reporter. */
export function renderIdlePage(asks: readonly Ask[], nonce: string): string {
  const items = asks.map((ask) => {
    const summary = endingSummary(ask);
    const prefix = summaryPrefix(ask.status, summary);
    const heading = RECORD_HEADINGS[ask.kind];
    return `<details dir="auto"><summary><span aria-hidden="true" class="m">▶</span><b data-record="${ask.kind}"><span aria-hidden="true">${heading.icon}</span> ${heading.label}</b><span class="m s" dir="auto">${escapeHtml(summary)}</span></summary><div><p dir="auto">${escapeHtml(askQuestionText(ask))}</p><p dir="auto"><span class="m">${prefix}</span><b>${escapeHtml(summary)}</b></p></div></details>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow"><title>Agent questions</title><style>${IDLE_STYLE}</style></head><body><main aria-label="Agent questions">${items.join("")}</main><script nonce="${nonce}">${HEIGHT_SCRIPT};${THEME_SCRIPT}</script></body></html>`;
}

/** The dark colours, under `root`. */
const dark = (root: string) =>
  `${root} body{color:#f4f4f5}${root} details{background:#18181b;border-color:#3f3f46}${root} details>div{border-color:#3f3f46}${root} .m{color:#a1a1aa}`;

// The look (and, from lib/wording.ts, the words) of components/asks/AskSummary.tsx, without Tailwind: the page must stay a few kB. No
// color-scheme: a frame whose scheme differs from the host's (Open WebUI leaves its own at light) gets
// an opaque backdrop; the colours follow the system through the media query instead.
const IDLE_STYLE = [
  "html,body{margin:0;background:transparent;color:#18181b;font:14px/1.4 ui-sans-serif,system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}",
  "main{display:flex;flex-direction:column;gap:6px}main:not(:empty){padding:6px}",
  "details{border:1px solid #e4e4e7;border-radius:12px;background:#fff}",
  "summary{display:flex;gap:8px;align-items:center;padding:8px 12px;cursor:pointer;list-style:none}summary::-webkit-details-marker{display:none}",
  "details[open] summary .m:first-child{transform:rotate(90deg)}",
  "details>div{border-top:1px solid #e4e4e7;padding:8px 12px}p{margin:0 0 6px;white-space:pre-line;overflow-wrap:anywhere}",
  ".m{color:#52525b}.s{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}",
  // Dark as Open WebUI's chosen theme says (data-theme, THEME_SCRIPT), else as the system says.
  dark("[data-theme=dark]"),
  `@media (prefers-color-scheme:dark){${dark(":root:not([data-theme])")}}`,
].join("");

// Open WebUI's FullHeightIframe sizes the frame from {type: "iframe:height"}
// (src/lib/components/common/FullHeightIframe.svelte:161, 0.12.4): 0 when empty.
const HEIGHT_SCRIPT =
  'if(parent!==window){var m=document.querySelector("main"),l=-1,r=function(){var h=Math.ceil(m.getBoundingClientRect().height);if(h!==l){l=h;parent.postMessage({type:"iframe:height",height:h},"*")}};new ResizeObserver(r).observe(m);r()}';

// Open WebUI's chosen theme from the relay the filter runs in its page (components/embed/use-host-theme.ts).
const THEME_SCRIPT =
  'if(parent!==window){addEventListener("message",function(e){var d=e.data;if(e.source===parent&&d&&d.type==="openclaw-asks:theme"&&(d.theme==="light"||d.theme==="dark"))document.documentElement.dataset.theme=d.theme});parent.postMessage({type:"openclaw-asks:theme?"},"*")}';

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}
