import "../components/styles.css";
import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";

/** The one document shell of both pages; each page brings its own title. */

export const metadata: Metadata = {
  robots: { index: false, follow: false },
  referrer: "no-referrer",
  icons: { icon: { url: "/icon.svg", type: "image/svg+xml" } },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  colorScheme: "light dark",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
