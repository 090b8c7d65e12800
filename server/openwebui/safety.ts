/**
 * What `npm run connect-openwebui` does not take on trust from the server it is pointed at: it sends
 * no secret over plain http:// to another host unless told to, prints none of that server's control
 * characters (a terminal runs escape sequences: OSC 52 writes the clipboard), and reads no answer
 * past a cap.
 */

/** The flag that allows plain http:// to a host other than this machine. */
export const PLAIN_HTTP_FLAG = "--allow-plain-http";
/** The most of an answer read; Open WebUI's largest answer here (its models list) is far below. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** The longest line printed. */
export const MAX_LINE_CHARS = 2000;

/** Whether `hostname` (as `URL` gives it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "::1" ||
    /^127(?:\.\d{1,3}){3}$/.test(host) ||
    /^::ffff:127(?:\.\d{1,3}){3}$/.test(host)
  );
}

/**
 * Why sending secrets to `url` is refused, or null: plain http:// to another host carries the API
 * key, the filter's secret (its auth_secret valve) and the Gateway token unencrypted.
 */
export function plainHttpRefusal(url: string, allowed: boolean): string | null {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" || allowed || isLoopback(parsed.hostname)) return null;
  return `✗ ${parsed.host} over plain http:// would carry the API key, the filter's secret and the Gateway token unencrypted: give its https:// URL, or pass ${PLAIN_HTTP_FLAG} if the network in between is yours`;
}

/** `text` with control characters (C0, DEL, C1) shown as U+FFFD, cut to `max` characters. */
export function printable(text: string, max = MAX_LINE_CHARS): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "\ufffd");
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** An answer's body as text, or null when it is longer than `max` bytes (reading stops there). */
export async function readCapped(
  response: Response,
  max = MAX_ANSWER_BYTES,
): Promise<string | null> {
  const length = Number(response.headers.get("content-length"));
  if (length > max) {
    await response.body?.cancel();
    return null;
  }
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
