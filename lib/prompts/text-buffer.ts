/**
 * The text of one reply as it arrived, for the scanner to read back: held-back text, the prompt,
 * and the old text when a snapshot replaces it. Reads are rare and mostly near the end.
 *
 * A reply may stream in one character at a time, and feeding it that way must cost only a small
 * factor more than one single-chunk pass (docs/BENCHMARK.md#targets). Keeping each small delta as a string (an
 * array slot per delta, or `+=`) or turning blocks of them back into strings as they fill up costs
 * more than the scan itself, so short deltas are copied as UTF-16 code units into fixed-size
 * blocks that are decoded only when read. Long deltas are kept as the strings they are.
 * Nothing is copied twice, except by `toString`, which joins everything once.
 */
export class TextBuffer {
  /** A delta at least this long is kept as a string of its own. */
  private static readonly LONG_DELTA = 64;
  private static readonly BLOCK_SIZE = 4096;
  /** A read that would walk back over more parts than this joins the buffer once instead. */
  private static readonly MAX_PARTS_WALKED = 64;

  /** Sealed text, oldest first; the open block's first `blockLength` units follow it. */
  private parts: (string | Uint16Array)[] = [];
  private block = new Uint16Array(TextBuffer.BLOCK_SIZE);
  private blockLength = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  append(delta: string): void {
    const n = delta.length;
    if (n === 1 && this.blockLength < TextBuffer.BLOCK_SIZE) {
      // A reply streamed one character at a time: this is the hot path.
      this.block[this.blockLength++] = delta.charCodeAt(0);
      this.size++;
      return;
    }
    if (n === 0) return;
    this.size += n;
    if (n >= TextBuffer.LONG_DELTA) {
      this.sealBlock();
      this.parts.push(delta);
      return;
    }
    if (this.blockLength + n > TextBuffer.BLOCK_SIZE) this.sealBlock();
    for (let i = 0; i < n; i++) this.block[this.blockLength++] = delta.charCodeAt(i);
  }

  /** Replaces the whole content (a cumulative snapshot carries the reply so far). */
  reset(text: string): void {
    this.parts = text === "" ? [] : [text];
    this.blockLength = 0;
    this.size = text.length;
  }

  /** The text between two positions, like `String.prototype.slice` with in-range bounds. */
  slice(from: number, to: number): string {
    if (from >= to) return "";
    const blockStart = this.size - this.blockLength;
    if (from >= blockStart) return decode(this.block, from - blockStart, to - blockStart);
    const found: string[] = [];
    if (to > blockStart) found.push(decode(this.block, 0, to - blockStart));
    let end = blockStart;
    let walked = 0;
    for (let i = this.parts.length - 1; i >= 0 && end > from; i--) {
      if (++walked > TextBuffer.MAX_PARTS_WALKED) return this.toString().slice(from, to);
      const part = this.parts[i] ?? "";
      const start = end - part.length;
      if (start < to)
        found.push(read(part, Math.max(from, start) - start, Math.min(to, end) - start));
      end = start;
    }
    return found.length === 1 ? (found[0] ?? "") : found.reverse().join("");
  }

  /** The whole text; joins everything once so later reads are direct. */
  toString(): string {
    this.sealBlock();
    if (this.parts.length !== 1 || typeof this.parts[0] !== "string") {
      this.parts = [this.parts.map((part) => read(part, 0, part.length)).join("")];
    }
    return typeof this.parts[0] === "string" ? this.parts[0] : "";
  }

  private sealBlock(): void {
    if (this.blockLength === 0) return;
    this.parts.push(this.block.subarray(0, this.blockLength));
    this.block = new Uint16Array(TextBuffer.BLOCK_SIZE);
    this.blockLength = 0;
  }
}

function read(part: string | Uint16Array, from: number, to: number): string {
  return typeof part === "string" ? part.slice(from, to) : decode(part, from, to);
}

/** Below this many code units, building the string unit by unit beats one bulk call. */
const SHORT_DECODE = 32;

/** Code units back to a string, exactly (lone surrogates included, unlike a TextDecoder). */
function decode(units: Uint16Array, from: number, to: number): string {
  if (to - from < SHORT_DECODE) {
    // Held-back text is this short: a line's indentation and part of a trigger phrase.
    let text = "";
    for (let i = from; i < to; i++) text += String.fromCharCode(units[i] ?? 0);
    return text;
  }
  return Reflect.apply(String.fromCharCode, null, units.subarray(from, to)) as string;
}
