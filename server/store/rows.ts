import { Ask } from "../../lib/ask.ts";

/**
 * Reading stored asks back, for every store: a row that no longer parses (a hand edit, another
 * version's data) is set aside: reported once with its id, skipped, and counted, and readable again
 * once its source writes it over.
 */
export class SetAsideRows {
  private readonly ids = new Set<string>();
  readonly log: (message: string) => void;

  constructor(log: (message: string) => void = () => {}) {
    this.log = log;
  }

  read(id: string, body: string): Ask | null {
    const parsed = parseBody(body);
    if (parsed.ok) return parsed.ask;
    if (!this.ids.has(id)) {
      this.ids.add(id);
      this.log(`set aside unreadable stored ask ${id}: ${parsed.error}`);
    }
    return null;
  }

  readAll(rows: readonly { id: string; body: string }[]): Ask[] {
    const asks: Ask[] = [];
    for (const row of rows) {
      const ask = this.read(row.id, row.body);
      if (ask) asks.push(ask);
    }
    return asks;
  }

  /** The row was written over with a readable ask. */
  healed(id: string): void {
    this.ids.delete(id);
  }

  get count(): number {
    return this.ids.size;
  }
}

/** Why a body does not parse, without quoting it: a stored ask may hold text a log must not. */
function parseBody(body: string): { ok: true; ask: Ask } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, error: "not valid JSON" };
  }
  const result = Ask.safeParse(json);
  if (result.success) return { ok: true, ask: result.data };
  const issue = result.error.issues[0];
  return { ok: false, error: `${issue?.path.join(".") || "ask"}: ${issue?.code ?? "invalid"}` };
}
