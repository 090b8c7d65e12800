import type { Metadata } from "next";
import { headers } from "next/headers";
import { connection } from "next/server";
import { EmbedWidget } from "../../../../components/embed/EmbedWidget.tsx";

export const metadata: Metadata = { title: "Agent questions" };

/**
 * Open WebUI's frame is 150 px tall until the page inside reports a height (EMBEDS.md). The widget
 * renders empty until its socket shows a card, so it says 0 at once, before the app has loaded.
 */
const EARLY_HEIGHT = 'if(parent!==window)parent.postMessage({type:"iframe:height",height:0},"*")';

/** The widget for Open WebUI's sandboxed iframe: `/embed/chat/<chatId>?token=…` (older replies get server/http/widget-page.ts). */
export default async function WidgetPage({ params }: { params: Promise<{ chatId: string }> }) {
  // Rendered per request: the CSP nonce (server/http/headers.ts) is new on every response.
  await connection();
  const { chatId } = await params;
  const nonce = /'nonce-([^']+)'/.exec((await headers()).get("content-security-policy") ?? "")?.[1];
  return (
    <>
      <script nonce={nonce} dangerouslySetInnerHTML={{ __html: EARLY_HEIGHT }} />
      <EmbedWidget chatId={chatId} />
    </>
  );
}
