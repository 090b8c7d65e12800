import { readFileSync } from "node:fs";
import path from "node:path";
import type { UiEntry, UiManifest } from "./build-ui.ts";

/**
 * The HTML shell of a UI page: one stylesheet and one script from the build's manifest. Everything
 * else (the token, the chat, the asks) arrives in the browser, so the shell is the same for everyone.
 */

let manifest: UiManifest | undefined;

function readManifest(): UiManifest {
  manifest ??= JSON.parse(readFileSync(path.join(process.cwd(), "public", "ui", "manifest.json"), "utf8")) as UiManifest;
  return manifest;
}

export function uiDocument(entry: UiEntry, title: string): Response {
  const { css, [entry]: script } = readManifest();
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/${css}">
</head>
<body>
<div id="root"></div>
<script src="/ui/${script}" defer></script>
</body>
</html>
`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } });
}
