import type { Metadata } from "next";
import { EmbedWidget } from "../../../../components/embed/EmbedWidget.tsx";

export const metadata: Metadata = { title: "Agent questions" };

/** The widget for Open WebUI's sandboxed iframe: `/embed/chat/<chatId>?token=…`. */
export default async function EmbedChatPage({ params }: { params: Promise<{ chatId: string }> }) {
  const { chatId } = await params;
  return <EmbedWidget chatId={safeDecode(chatId)} />;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
