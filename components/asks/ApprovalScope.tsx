import type { ApprovalScope as Scope } from "../../lib/ask.ts";
import { approvalScopeSummary } from "../../lib/wording.ts";
import { cx } from "./format.ts";

/** Facts that reach people outside (external recipients, a public post) or move money stand out. */
function reachesOutside(scope: Scope): boolean {
  return (
    scope.kind === "payment" ||
    (scope.kind === "message-send" && scope.audience === "external") ||
    (scope.kind === "external-post" && scope.visibility === "public")
  );
}

/** The card's line of what an approval would do, in the words of lib/wording.ts; facts that reach outside stand out. */
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
