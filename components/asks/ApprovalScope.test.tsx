import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ApprovalAsk } from "../../lib/ask.ts";
import { approvalAsk } from "../../test/support/ask-fixtures.ts";
import { ApprovalCard } from "./ApprovalCard.tsx";

const render = (ask: ApprovalAsk) =>
  renderToStaticMarkup(
    <ApprovalCard ask={ask} onAnswer={async () => ({ ok: true, status: "answered" })} />,
  );

describe("the approval card", () => {
  it("shows the scope under the title", () => {
    const html = render(
      approvalAsk({
        scope: { kind: "payment", amount: "49.99", currency: "EUR", target: "Stripe" },
      }),
    );
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
