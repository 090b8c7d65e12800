import type { ApprovalScope as Scope } from "../../lib/ask.ts";
import { cx } from "./format.ts";

/**
 * What an approval would do, in one plain sentence: the facts an owner decides on ("Pay 49.99 EUR to
 * Stripe", "Email to 3 external recipients: …"). The scope is declared by the plugin (or, for an
 * automation's exec approval, by the Gateway); it never changes what the decision allows.
 */
export function approvalScopeSummary(scope: Scope): string {
  switch (scope.kind) {
    case "payment":
      return `Pay ${scope.amount} ${scope.currency} to ${scope.target}`;
    case "message-send": {
      const what = scope.target.toLowerCase() === "email" ? "Email" : `Message via ${scope.target}`;
      const who = `${scope.recipientCount} ${scope.audience ? `${scope.audience} ` : ""}${scope.recipientCount === 1 ? "recipient" : "recipients"}`;
      const shown = scope.recipients ?? [];
      const more = scope.recipientCount - shown.length;
      const preview = shown.length > 0 ? `: ${[...shown, ...(more > 0 ? [`+${more} more`] : [])].join(", ")}` : "";
      return `${what} to ${who}${preview}`;
    }
    case "external-post":
      return scope.visibility === "public" ? `Post publicly to ${scope.target}` : `Post to ${scope.target} (restricted audience)`;
    case "standing-grant": {
      const term = scope.expiresInDays === undefined ? "until revoked" : `for ${scope.expiresInDays} days`;
      return `Always allow lets "${scope.automation}" run ${scope.command} without asking, ${term}`;
    }
  }
}

/** Facts that reach people outside (external recipients, a public post) or move money stand out. */
function reachesOutside(scope: Scope): boolean {
  return scope.kind === "payment" || (scope.kind === "message-send" && scope.audience === "external") || (scope.kind === "external-post" && scope.visibility === "public");
}

export function ApprovalScope({ scope }: { scope: Scope }) {
  return (
    <p
      data-approval-scope={scope.kind}
      dir="auto"
      className={cx(
        "mt-2 rounded-lg border px-3 py-2 text-sm font-semibold break-words",
        reachesOutside(scope)
          ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-700 dark:bg-amber-950/50 dark:text-amber-50"
          : "border-zinc-200 bg-zinc-50 text-zinc-900 dark:border-zinc-700 dark:bg-zinc-800 dark:text-zinc-100",
      )}
    >
      <span className="sr-only">What it does: </span>
      {approvalScopeSummary(scope)}
    </p>
  );
}
