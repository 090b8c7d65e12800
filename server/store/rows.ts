import type { z } from "zod";
import { Ask } from "../../lib/ask.ts";

/**
 * Reading stored records back, for every store: one that no longer parses (a hand edit, another
 * version's data) is set aside: reported once with its id, never its fields (a stored ask may hold
 * text a log must not), skipped, and counted, and readable again once it is written over.
 */
export class SetAside<T> {
  private readonly ids = new Set<string>();
  private readonly noun: string;
  private readonly schema: z.ZodType<T>;
  readonly log: (message: string) => void;

  constructor(noun: string, schema: z.ZodType<T>, log: (message: string) => void = () => {}) {
    this.noun = noun;
    this.schema = schema;
    this.log = log;
  }

  /** The record from its stored fields, or null when they do not parse. */
  read(id: string, fields: unknown): T | null {
    const parsed = this.schema.safeParse(fields);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    return this.setAside(id, `${issue?.path.join(".") || this.noun}: ${issue?.code ?? "invalid"}`);
  }

  /** The record stored as JSON text. */
  readJson(id: string, body: string): T | null {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return this.setAside(id, "not valid JSON");
    }
    return this.read(id, json);
  }

  readAll(rows: readonly { id: string; body: string }[]): T[] {
    const records: T[] = [];
    for (const row of rows) {
      const record = this.readJson(row.id, row.body);
      if (record) records.push(record);
    }
    return records;
  }

  /** The record was written over with a readable one. */
  healed(id: string): void {
    this.ids.delete(id);
  }

  get count(): number {
    return this.ids.size;
  }

  private setAside(id: string, why: string): null {
    if (!this.ids.has(id)) {
      this.ids.add(id);
      this.log(`set aside unreadable stored ${this.noun} ${id}: ${why}`);
    }
    return null;
  }
}

/** The stored asks of every ask store. */
export const setAsideAsks = (log?: (message: string) => void): SetAside<Ask> =>
  new SetAside("ask", Ask, log);
