import type { Metadata } from "next";
import { headers } from "next/headers";
import { connection } from "next/server";
import { Dashboard } from "../components/dashboard/Dashboard.tsx";
import { OPENWEBUI_URL_HEADER } from "../lib/page-headers.ts";

export const metadata: Metadata = { title: "Pending asks · OpenClaw Asks" };

/** The owners' dashboard: `/?token=…` (the link the server prints at start). */
export default async function DashboardPage() {
  // Rendered per request: the CSP nonce (server/http/headers.ts) is new on every response.
  await connection();
  // The server's configuration comes with the request (server/http/pages.ts sets it).
  return <Dashboard openWebUiUrl={(await headers()).get(OPENWEBUI_URL_HEADER)} />;
}
