import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import tailwind from "@tailwindcss/postcss";
import postcss from "postcss";
import { build } from "rolldown";

/**
 * Builds the two browser bundles (the widget and the dashboard) and their stylesheet into
 * `public/ui/`, with a manifest the routes read. The widget loads in an iframe under every assistant
 * message, so each page ships React, socket.io-client and its own components as one classic script,
 * without a framework router (a module script would need CORS from the sandbox's opaque origin).
 */

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const UI_DIR = path.join(projectRoot, "public", "ui");

export const UI_ENTRIES = {
  widget: "components/embed/main.tsx",
  dashboard: "components/dashboard/main.tsx",
} as const;
export type UiEntry = keyof typeof UI_ENTRIES;

export type UiManifest = { css: string } & Record<UiEntry, string>;

function hashed(name: string, extension: string, content: string): string {
  return `${name}-${createHash("sha256").update(content).digest("hex").slice(0, 10)}.${extension}`;
}

export async function buildUi(): Promise<UiManifest> {
  rmSync(UI_DIR, { recursive: true, force: true });
  mkdirSync(UI_DIR, { recursive: true });
  const manifest: Partial<UiManifest> = {};
  for (const [entry, input] of Object.entries(UI_ENTRIES) as [UiEntry, string][]) {
    const result = await build({
      input,
      cwd: projectRoot,
      platform: "browser",
      logLevel: "warn",
      transform: { define: { "process.env.NODE_ENV": '"production"' }, jsx: "react-jsx" },
      output: { format: "iife", minify: true },
      write: false,
    });
    const code = result.output.map((chunk) => ("code" in chunk ? chunk.code : "")).join("\n");
    const file = hashed(entry, "js", code);
    writeFileSync(path.join(UI_DIR, file), code);
    manifest[entry] = file;
  }
  const stylesheet = path.join(projectRoot, "components", "styles.css");
  const css = await postcss([tailwind({ base: projectRoot, optimize: { minify: true } })]).process(readFileSync(stylesheet, "utf8"), { from: stylesheet });
  manifest.css = hashed("ui", "css", css.css);
  writeFileSync(path.join(UI_DIR, manifest.css), css.css);
  writeFileSync(path.join(UI_DIR, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest as UiManifest;
}

if (import.meta.main) {
  const manifest = await buildUi();
  console.log(`UI bundles built into public/ui: ${[manifest.widget, manifest.dashboard, manifest.css].join(", ")}`);
}
