// The typed event source: every listener hears an event, whatever another one does.
import { describe, expect, it } from "vitest";
import { Emitter } from "./events.ts";

class Source extends Emitter<{ ping: [n: number] }> {
  ping(n: number): void {
    this.emit("ping", n);
  }
}

describe("Emitter", () => {
  it("calls the listeners after one that threw, then throws what it threw", () => {
    const source = new Source();
    const heard: string[] = [];
    source.on("ping", (n) => heard.push(`first ${n}`));
    source.on("ping", () => {
      throw new Error("a broken listener");
    });
    source.on("ping", (n) => heard.push(`last ${n}`));
    expect(() => source.ping(1)).toThrow("a broken listener");
    expect(heard).toEqual(["first 1", "last 1"]);
  });

  it("throws every failure when several listeners threw", () => {
    const source = new Source();
    for (const which of ["one", "two"])
      source.on("ping", () => {
        throw new Error(which);
      });
    let thrown: unknown;
    try {
      source.ping(2);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AggregateError);
    expect((thrown as AggregateError).errors.map((error: Error) => error.message)).toEqual([
      "one",
      "two",
    ]);
  });

  it("does not skip a listener when an earlier one unsubscribes while called", () => {
    const source = new Source();
    const heard: number[] = [];
    const off = source.on("ping", () => off());
    source.on("ping", (n) => heard.push(n));
    source.ping(3);
    source.ping(4);
    expect(heard).toEqual([3, 4]);
  });
});
