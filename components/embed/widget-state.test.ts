import { describe, expect, it } from "vitest";
import type { Ask } from "../../lib/ask.ts";
import { approval, question, secret } from "../../test/support/ask-fixtures.ts";
import {
  INITIAL_WIDGET,
  SENDING,
  type WidgetAction,
  widgetReducer,
  type WidgetState,
} from "./widget-state.ts";

const run = (...actions: WidgetAction[]): WidgetState =>
  actions.reduce(widgetReducer, INITIAL_WIDGET);
const show = (ask: Ask): WidgetAction => ({ type: "show", ask });
const lines = (state: WidgetState) => state.history.map((line) => `${line.id}: ${line.summary}`);
const cards = (state: WidgetState) =>
  state.pending.filter((ask) => !state.sending.includes(ask.id)).map((ask) => ask.id);

describe("the widget's cards and lines", () => {
  it("an answered card gives way to its line at once; the ack names it, the close gives the server's summary, in place", () => {
    let state = run(show(question("q1", "c1")), show(question("q2", "c1")), {
      type: "sending",
      askId: "q1",
      at: 1,
    });
    expect(cards(state)).toEqual(["q2"]);
    expect(lines(state)).toEqual([`q1: ${SENDING}`]);
    state = widgetReducer(state, { type: "answered", askId: "q1", status: "answered", at: 2 });
    expect(state.pending.map((ask) => ask.id)).toEqual(["q2"]);
    expect(state.sending).toEqual([]);
    expect(lines(state)).toEqual(["q1: Answered"]);
    state = widgetReducer(state, {
      type: "close",
      close: { askId: "q1", reason: "answered", summary: "SQLite" },
      at: 3,
    });
    expect(lines(state)).toEqual(["q1: SQLite"]);
  });

  it("a card shown while an answer is on its way never sees the answered card shrink: it was a line before", () => {
    // The next question may come before the ack (the Gateway answers the requester first).
    const state = run(
      show(question("q1", "c1")),
      { type: "sending", askId: "q1", at: 1 },
      show(question("q2", "c1")),
    );
    const before = { cards: cards(state), lines: lines(state) };
    const acked = widgetReducer(state, {
      type: "answered",
      askId: "q1",
      status: "answered",
      at: 2,
    });
    const closed = widgetReducer(acked, {
      type: "close",
      close: { askId: "q1", reason: "answered", summary: "SQLite" },
      at: 3,
    });
    for (const after of [acked, closed]) {
      expect(cards(after)).toEqual(before.cards);
      expect(after.history.map((line) => line.id)).toEqual(["q1"]);
    }
  });

  it("a refused answer brings the card back and drops its line", () => {
    const state = run(
      show(question("q1", "c1")),
      { type: "sending", askId: "q1", at: 1 },
      { type: "unsent", askId: "q1" },
    );
    expect(cards(state)).toEqual(["q1"]);
    expect(state.history).toEqual([]);
  });

  it("a close while the answer is on its way (answered elsewhere first) ends it once, with the close's summary", () => {
    let state = run(show(question("q1", "c1")), { type: "sending", askId: "q1", at: 1 });
    state = widgetReducer(state, {
      type: "close",
      close: { askId: "q1", reason: "answered-elsewhere", summary: "Postgres" },
      at: 2,
    });
    state = widgetReducer(state, { type: "unsent", askId: "q1" });
    expect(state.pending).toEqual([]);
    expect(state.history).toMatchObject([{ id: "q1", summary: "Postgres", status: "answered" }]);
  });

  it("a card handed off to a newer tab while its answer is on its way leaves no line", () => {
    const state = run(
      show(question("q1", "c1")),
      { type: "sending", askId: "q1", at: 1 },
      { type: "close", close: { askId: "q1", reason: "handed-off" }, at: 2 },
    );
    expect(state).toMatchObject({ pending: [], sending: [], history: [], moved: true });
  });

  it("a cancel is a line that says so; answering twice sends once", () => {
    let state = run(
      show(question("q1", "c1")),
      { type: "sending", askId: "q1", at: 1 },
      { type: "sending", askId: "q1", at: 2 },
    );
    expect(state.history).toHaveLength(1);
    state = widgetReducer(state, { type: "answered", askId: "q1", status: "cancelled", at: 3 });
    expect(state.history).toMatchObject([{ id: "q1", summary: "Cancelled", status: "cancelled" }]);
  });

  it("after a reconnect, or once superseded, a line still sending for an ask it no longer holds goes", () => {
    const sending = run(show(question("q1", "c1")), show(question("q2", "c1")), {
      type: "sending",
      askId: "q1",
      at: 1,
    });
    expect(widgetReducer(sending, { type: "keep-only", ids: new Set(["q2"]) })).toMatchObject({
      sending: [],
      history: [],
    });
    expect(widgetReducer(sending, { type: "superseded" })).toMatchObject({
      pending: [],
      sending: [],
      history: [],
      superseded: true,
    });
  });

  it("a line keeps what its ask was: its record is headed question, secret or approval", () => {
    const state = run(
      show(question("q1", "c1")),
      show(secret("s1", "c1")),
      show(approval("p1", "c1")),
      { type: "close", close: { askId: "s1", reason: "cancelled" }, at: 1 },
      { type: "sending", askId: "p1", at: 2 },
      { type: "answered", askId: "p1", status: "answered", at: 3 },
      { type: "close", close: { askId: "q1", reason: "expired" }, at: 4 },
    );
    expect(state.history.map((line) => [line.id, line.kind])).toEqual([
      ["s1", "secret"],
      ["p1", "approval"],
      ["q1", "question"],
    ]);
  });
});
