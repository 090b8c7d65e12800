import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ApprovalAsk } from "../../lib/ask.ts";
import { approvalAsk } from "../../test/support/ask-fixtures.ts";
import { ApprovalCard } from "./ApprovalCard.tsx";
import { approvalScopeSummary } from "./ApprovalScope.tsx";

describe("approval scope, in plain words", () => {
  it("says what a payment, a message, a post or a standing grant would do", () => {
    expect(approvalScopeSummary({ kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" })).toBe("Pay 49.99 EUR to Stripe");
    expect(
      approvalScopeSummary({ kind: "message-send", target: "email", recipientCount: 3, recipients: ["alice@example.com", "bob@example.com"], audience: "external" }),
    ).toBe("Email to 3 external recipients: alice@example.com, bob@example.com, +1 more");
    expect(approvalScopeSummary({ kind: "message-send", target: "slack", recipientCount: 1 })).toBe("Message via slack to 1 recipient");
    expect(approvalScopeSummary({ kind: "external-post", target: "github", visibility: "public" })).toBe("Post publicly to github");
    expect(approvalScopeSummary({ kind: "external-post", target: "linkedin", visibility: "restricted" })).toBe("Post to linkedin (restricted audience)");
    expect(approvalScopeSummary({ kind: "standing-grant", automation: "nightly backup", command: "restic backup /srv" })).toBe(
      'Always allow lets "nightly backup" run restic backup /srv without asking, until revoked',
    );
    expect(approvalScopeSummary({ kind: "standing-grant", automation: "nightly backup", command: "restic backup /srv", expiresInDays: 30 })).toMatch(/, for 30 days$/);
  });
});

const render = (ask: ApprovalAsk) => renderToStaticMarkup(<ApprovalCard ask={ask} onAnswer={async () => ({ ok: true, status: "answered" })} />);

describe("the approval card", () => {
  it("shows the scope under the title", () => {
    const html = render(approvalAsk({ scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" } }));
    expect(html).toContain('data-approval-scope="payment"');
    expect(html).toContain("Pay 49.99 EUR to Stripe");
    expect(html.indexOf("Pay invoice")).toBeLessThan(html.indexOf("Pay 49.99 EUR"));
  });

  it("has no scope line when none was declared", () => {
    expect(render(approvalAsk({}))).not.toContain("data-approval-scope");
  });

  it("frames a critical approval and marks it differently from a warning", () => {
    const critical = render(approvalAsk({ severity: "critical" }));
    const warning = render(approvalAsk({ severity: "warning" }));
    expect(critical).toContain('data-severity="critical"');
    expect(critical).toContain("ring-rose-600");
    expect(warning).not.toContain("ring-rose-600");
    expect(critical).toContain("Critical");
  });
});
