import type { Metadata } from "next";
import { connection } from "next/server";
import { EmbedWidget } from "../../../../components/embed/EmbedWidget.tsx";

export const metadata: Metadata = { title: "Agent questions" };

/** The widget for Open WebUI's sandboxed iframe: `/embed/chat/<chatId>?token=…`. */
export default async function WidgetPage({ params }: { params: Promise<{ chatId: string }> }) {
  // Rendered per request: the CSP nonce (server/http/headers.ts) is new on every response.
  await connection();
  const { chatId } = await params;
  return <EmbedWidget chatId={chatId} />;
}
