/** Shared Tailwind class strings: one look for every card (no UI library). */

export const card =
  "rounded-2xl border border-zinc-200 bg-white p-4 text-start shadow-sm outline-none dark:border-zinc-700 dark:bg-zinc-900 sm:p-5";

/**
 * The question card as Open WebUI 0.12 draws its own (AskUserCard.svelte): no border, small type, the
 * colour its tint gives on Open WebUI's page (gray-50/70 on white, white/3.5% on #171717), opaque so
 * its contrast never depends on what is under the frame. Its greys are a step darker than Open
 * WebUI's, for contrast (WCAG AA).
 */
export const askCard =
  "rounded-2xl bg-[#fbfbfb] px-3.5 py-3 text-start text-neutral-900 outline-none dark:bg-[#1f1f1f] dark:text-neutral-100";

/** Secondary text in the question card (Open WebUI's gray-500/400, a step darker/lighter). */
export const quietText = "text-neutral-600 dark:text-neutral-300";

const smallButtonBase =
  "inline-flex min-h-11 shrink-0 items-center justify-center gap-1.5 rounded-lg px-2.5 text-xs font-normal transition widget:min-h-7 disabled:cursor-not-allowed disabled:opacity-60";
export const smallButton = `${smallButtonBase} text-neutral-600 hover:text-neutral-900 dark:text-neutral-300 dark:hover:text-white`;
export const smallPrimaryButton = `${smallButtonBase} bg-neutral-900 text-white hover:bg-black dark:bg-neutral-100 dark:text-neutral-900 dark:hover:bg-white`;

export const cardFocus =
  "focus-visible:ring-2 focus-visible:ring-sky-500/70 focus-visible:outline-none";

const buttonBase =
  "inline-flex min-h-11 items-center justify-center gap-1.5 rounded-lg px-3.5 py-2 text-sm font-medium transition-colors disabled:cursor-not-allowed disabled:opacity-50";

export const primaryButton = `${buttonBase} bg-sky-700 text-white hover:bg-sky-800 dark:bg-sky-500 dark:text-zinc-950 dark:hover:bg-sky-400`;
export const secondaryButton = `${buttonBase} border border-zinc-300 bg-white text-zinc-800 hover:bg-zinc-100 dark:border-zinc-600 dark:bg-zinc-800 dark:text-zinc-100 dark:hover:bg-zinc-700`;
export const ghostButton = `${buttonBase} text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800`;
export const dangerButton = `${buttonBase} bg-rose-700 text-white hover:bg-rose-800 disabled:bg-zinc-400 disabled:opacity-60 dark:bg-rose-500 dark:text-zinc-950 dark:hover:bg-rose-400 dark:disabled:bg-zinc-600`;

export const textInput =
  "block w-full rounded-lg border border-zinc-300 bg-white px-3 py-2 text-sm text-zinc-900 placeholder:text-zinc-500 focus:border-sky-600 focus:outline-none focus:ring-2 focus:ring-sky-500/40 dark:border-zinc-600 dark:bg-zinc-950 dark:text-zinc-100 dark:placeholder:text-zinc-400";

const eyebrowBase = "text-xs font-semibold tracking-wide uppercase";
export const eyebrow = `${eyebrowBase} text-sky-800 dark:text-sky-300`;
export const secretEyebrow = `${eyebrowBase} text-amber-800 dark:text-amber-300`;

export const muted = "text-zinc-600 dark:text-zinc-400";

export const recommendedTag =
  "inline-flex items-center rounded-full bg-emerald-100 px-2 py-0.5 text-xs font-medium text-emerald-900 dark:bg-emerald-900/60 dark:text-emerald-100";

export const errorText = "text-sm font-medium text-rose-700 dark:text-rose-300";
