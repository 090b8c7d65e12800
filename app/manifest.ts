import type { MetadataRoute } from "next";

/** The dashboard as an installable app (PWA): its icons, and where it starts. */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: "OpenClaw Asks",
    short_name: "Asks",
    description: "Your agents' questions, secret requests and approvals, most urgent first.",
    start_url: "/",
    scope: "/",
    display: "standalone",
    background_color: "#fafafa",
    theme_color: "#0369a1",
    icons: [
      { src: "/icon-192.png", sizes: "192x192", type: "image/png", purpose: "any" },
      { src: "/icon-512.png", sizes: "512x512", type: "image/png", purpose: "any" },
      { src: "/icon-maskable-512.png", sizes: "512x512", type: "image/png", purpose: "maskable" },
      { src: "/icon.svg", sizes: "any", type: "image/svg+xml" },
    ],
  };
}
