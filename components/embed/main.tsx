import { createRoot } from "react-dom/client";
import { EmbedWidget } from "./EmbedWidget.tsx";

/** The widget bundle's entry: the chat id is the last segment of `/embed/chat/<chatId>`. */
const segment = location.pathname.split("/").filter(Boolean).at(-1) ?? "";
createRoot(document.getElementById("root")!).render(<EmbedWidget chatId={safeDecode(segment)} />);

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
