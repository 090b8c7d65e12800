// The table of tracked asks alone (tracked-asks.ts): its phases and what each carries, on an injected
// clock. The rules these serve are tested on the broker (broker-*.test.ts).
import { describe, expect, it } from "vitest";
import { CANCELLED_ELSEWHERE, EXPIRED } from "../../lib/outcomes.ts";
import { question, T0 } from "../../test/support/ask-fixtures.ts";
import { ManualClock } from "../../test/support/manual-clock.ts";
import { TrackedAsks } from "./tracked-asks.ts";

const table = () => {
  const clock = new ManualClock(T0);
  const expired: string[] = [];
  const asks = new TrackedAsks(clock);
  asks.on("expired", (ask) => expired.push(ask.id));
  return { clock, expired, asks };
};

describe("TrackedAsks", () => {
  it("an ask ended while it is still received stays as ended, so a replay is ignored, until received", () => {
    const { asks, clock } = table();
    expect(asks.arrive(question("q1", "c1"))).toBe("new");
    asks.track(question("q1", "c1"), { unwritten: true });
    asks.end("q1");
    expect(asks.arrive(question("q1", "c1"))).toBe("ended");
    expect(asks.listed("q1")).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
    expect(asks.received("q1")).toBeNull();
    expect(asks.get("q1")).toBeUndefined();
  });

  it("an end from the source during the arrival is handed back once the arrival is done", () => {
    const { asks } = table();
    asks.arrive(question("q1", "c1"));
    expect(asks.sourceEnded("q1", CANCELLED_ELSEWHERE)).toBeNull();
    asks.track(question("q1", "c1"), { unwritten: true });
    expect(asks.received("q1")).toBe(CANCELLED_ELSEWHERE);
    expect(asks.get("q1")).toMatchObject({ phase: "pending", receiving: null });
  });

  it("the first write is kept only while the ask is received, and made once", async () => {
    const { asks } = table();
    asks.arrive(question("q1", "c1"));
    asks.track(question("q1", "c1"), { unwritten: true });
    const puts: string[] = [];
    const put = async (ask: { id: string }) => (puts.push(ask.id), true);
    expect(await asks.write("q1", put)).toBe(true);
    expect(asks.write("q1", put)).toBeNull();
    expect(await asks.firstWrite("q1")).toBe(true);
    asks.received("q1");
    expect(asks.firstWrite("q1")).toBeNull();
    expect(puts).toEqual(["q1"]);
  });

  it("an answer being delivered survives the confirmation of a restored ask, and holds the source's end back", () => {
    const { asks } = table();
    asks.restore(question("q1", "c1"));
    expect(asks.startAnswer("q1")).toBe(true);
    expect(asks.startAnswer("q1")).toBe(false);
    expect(asks.confirm("q1")).toBe(true);
    expect(asks.get("q1")).toMatchObject({ phase: "pending", answering: { endedMeanwhile: null } });
    expect(asks.sourceEnded("q1", EXPIRED)).toBeNull();
    expect(asks.answered("q1").endedMeanwhile).toBe(EXPIRED);
    expect(asks.sourceEnded("q1", EXPIRED)).toMatchObject({ ending: EXPIRED });
  });

  it("owns each listed ask's timer: it fires once, and none survives an end or a stop", () => {
    const { asks, clock, expired } = table();
    asks.restore(question("q1", "c1"));
    asks.arrive(question("q2", "c1"));
    asks.track(question("q2", "c1"), { unwritten: false });
    expect(asks.activeTimers).toBe(2);
    asks.end("q2");
    clock.advance(900_000);
    expect(expired).toEqual(["q1"]);
    expect(asks.activeTimers).toBe(0);
    asks.restore(question("q3", "c1"));
    asks.stopTimers();
    expect(clock.pendingTimers).toBe(0);
  });
});
