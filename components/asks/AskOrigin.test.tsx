import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Ask, AskOrigin } from "../../lib/ask.ts";
import { originText } from "../../lib/wording.ts";
import { approvalAsk, question, secretAsk } from "../../test/support/ask-fixtures.ts";
import { InboxRow } from "../dashboard/InboxRow.tsx";
import { AskView } from "./AskView.tsx";

const answer = async () => ({ ok: true, status: "answered" }) as const;
const card = (ask: Ask) => renderToStaticMarkup(<AskView ask={ask} onAnswer={answer} />);
const row = (ask: Ask) =>
  renderToStaticMarkup(
    <InboxRow
      ask={ask}
      expanded={false}
      onExpand={() => {}}
      selected={false}
      onSelect={() => {}}
      onAnswer={answer}
      openWebUiUrl={null}
      onModal={() => {}}
      onSecretOutcome={() => {}}
    />,
  );
const REPLY: AskOrigin = { kind: "reply", userId: "u-7", name: "Dana <b>" };

describe("whose run asked, on every card and inbox row", () => {
  it.for([
    ["question", question("q1", "c1")],
    ["secret", secretAsk()],
    ["approval", approvalAsk({})],
  ] as const)("the %s card and its inbox row name the Open WebUI user, as text", ([, ask]) => {
    for (const html of [card({ ...ask, origin: REPLY }), row({ ...ask, origin: REPLY })]) {
      expect(html).toContain("Asked by Dana &lt;b&gt; in Open WebUI");
      expect(html.match(/data-ask-origin/g)).toHaveLength(1);
    }
    expect(card(ask)).not.toContain("data-ask-origin");
  });

  it("words every origin: a reply's user (by id without a name), an unvouched run, the Gateway's own sessions", () => {
    expect(originText({ kind: "reply", userId: "u-7" })).toBe("Asked by u-7 in Open WebUI");
    expect(originText({ kind: "unvouched" })).toBe(
      "Asked by a /v1 request no Open WebUI reply vouches for",
    );
    expect(originText({ kind: "session", channel: "main" })).toBe(
      "Asked from OpenClaw's main session (Control UI)",
    );
    expect(originText({ kind: "session", channel: "telegram" })).toBe(
      "Asked from OpenClaw's telegram session",
    );
    expect(originText({ kind: "session", channel: "openwebui" })).toBe(
      "Asked from an Open WebUI chat (the Pipe)",
    );
    expect(originText(undefined)).toBeNull();
  });
});
