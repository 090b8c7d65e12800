import { describe, expect, it } from "vitest";
import { approvalAsk, secretAsk } from "../test/support/ask-fixtures.ts";
import { approvalScopeSummary, commandConsequence, kindLabel, summaryPrefix } from "./wording.ts";

describe("approval scope, in plain words", () => {
  it("says what a payment, a message, a post or a standing grant would do", () => {
    expect(
      approvalScopeSummary({ kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" }),
    ).toBe("Pay 49.99 EUR to Stripe");
    expect(
      approvalScopeSummary({
        kind: "message-send",
        target: "email",
        recipientCount: 3,
        recipients: ["alice@example.com", "bob@example.com"],
        audience: "external",
      }),
    ).toBe("Email to 3 external recipients: alice@example.com, bob@example.com, +1 more");
    expect(approvalScopeSummary({ kind: "message-send", target: "slack", recipientCount: 1 })).toBe(
      "Message via slack to 1 recipient",
    );
    expect(
      approvalScopeSummary({ kind: "external-post", target: "github", visibility: "public" }),
    ).toBe("Post publicly to github");
    expect(
      approvalScopeSummary({ kind: "external-post", target: "linkedin", visibility: "restricted" }),
    ).toBe("Post to linkedin (restricted audience)");
    expect(
      approvalScopeSummary({
        kind: "standing-grant",
        automation: "nightly backup",
        command: "restic backup /srv",
      }),
    ).toBe(
      'Always allow lets "nightly backup" run restic backup /srv without asking, until revoked',
    );
    expect(
      approvalScopeSummary({
        kind: "standing-grant",
        automation: "nightly backup",
        command: "restic backup /srv",
        expiresInDays: 30,
      }),
    ).toMatch(/, for 30 days$/);
  });
});
describe("the words of an ask", () => {
  it("names a critical approval so wherever it is listed", () => {
    expect(kindLabel(approvalAsk({ severity: "critical" }))).toBe("Critical approval");
    expect(kindLabel(approvalAsk({ severity: "warning" }))).toBe("Approval");
    expect(kindLabel(secretAsk())).toBe("Secret");
  });

  it("says what a command would do in one sentence, or nothing", () => {
    expect(commandConsequence(["deletes", "deploys"])).toBe(
      "It deletes files or data and deploys.",
    );
    expect(commandConsequence(["deletes", "overwrites", "pipes-to-shell"])).toBe(
      "It deletes files or data, overwrites files and pipes into a shell.",
    );
    expect(commandConsequence([])).toBeNull();
  });

  it("puts the status before a record's summary only when the summary does not say it", () => {
    expect(summaryPrefix("answered", "Postgres")).toBe("Answer: ");
    expect(summaryPrefix(undefined, "Postgres")).toBe("Answer: ");
    expect(summaryPrefix("expired", "Timed out")).toBe("Expired: ");
    expect(summaryPrefix("cancelled", "Cancelled (nothing entered)")).toBe("");
  });
});
