/** Display helpers shared by the cards, the widget and the dashboard. Pure; the words of an ask are in lib/wording.ts. */

// Hebrew, Arabic (with supplements and presentation forms), Syriac, Thaana, N'Ko.
const RTL_CHAR = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
const LTR_CHAR = /[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]/;

/** "rtl" when the first strong character of the text is right-to-left (Hebrew, Arabic), else "ltr". */
export function textDirection(...texts: (string | undefined | null)[]): "rtl" | "ltr" {
  for (const text of texts) {
    if (!text) continue;
    for (const char of text) {
      if (RTL_CHAR.test(char)) return "rtl";
      if (LTR_CHAR.test(char)) return "ltr";
    }
  }
  return "ltr";
}

/** `1:05`, `12:00`, `1:02:03`: a countdown. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0
    ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}`
    : `${minutes}:${seconds}`;
}

/** `just now`, `40 s`, `3 min`, `2 h 5 min`, `3 d`: an age or a time left, in words. */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

export function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** Joins class names, skipping falsy ones. */
export function cx(...names: (string | false | null | undefined)[]): string {
  return names.filter(Boolean).join(" ");
}
