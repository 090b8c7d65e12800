import { uiDocument } from "../server/http/ui-document.ts";

/** The owners' dashboard: `/?token=…` (the link the server prints at start). */
export function GET(): Response {
  return uiDocument("dashboard", "Pending asks · OpenClaw Asks");
}
