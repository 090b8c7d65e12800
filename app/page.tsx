import type { Metadata } from "next";
import { Dashboard } from "../components/dashboard/Dashboard.tsx";

export const metadata: Metadata = { title: "Pending asks · OpenClaw Asks" };

/** The owners' dashboard: `/?token=…` (the link the server prints at start). */
export default function DashboardPage() {
  return <Dashboard />;
}
