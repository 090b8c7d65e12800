import type { Metadata } from "next";
import { connection } from "next/server";
import { Dashboard } from "../components/dashboard/Dashboard.tsx";
import { parseConfig } from "../server/config.ts";

export const metadata: Metadata = { title: "Pending asks · OpenClaw Asks" };

/** The owners' dashboard: `/?token=…` (the link the server prints at start). */
export default async function DashboardPage() {
  // Rendered per request: the CSP nonce (server/http/headers.ts) is new on every response.
  await connection();
  return <Dashboard openWebUiUrl={parseConfig(process.env).OPENWEBUI_URL ?? null} />;
}
