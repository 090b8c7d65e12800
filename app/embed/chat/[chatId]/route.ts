import { uiDocument } from "../../../../server/http/ui-document.ts";

/** The widget for Open WebUI's sandboxed iframe: `/embed/chat/<chatId>?token=…`. */
export function GET(): Response {
  return uiDocument("widget", "Agent questions");
}
