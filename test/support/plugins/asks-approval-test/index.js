// A real OpenClaw plugin for the test harness (never part of the product). The test Gateway loads it
// from this folder (test/support/real-gateway.ts). It registers one harmless tool, `asks_touch_marker`,
// and its `before_tool_call` hook asks for approval before every call of it, so tests see approvals
// arrive the way users' approvals do: from a live agent run, through `plugin.approval.requested`.
//
// The approval's text, severity, scope, decisions and timeout come from the call's own `approval`
// argument: the scripted stub model chooses them, so one plugin covers every kind a test needs.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, relative } from "node:path";

const TOOL_NAME = "asks_touch_marker";

/** How each call's approval was resolved (`onResolution`), by marker path: the tool reports it. */
const resolutions = new Map();

function insideTmp(path) {
  const rel = relative(tmpdir(), path);
  return isAbsolute(path) && rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

export default {
  id: "asks-approval-test",
  name: "Asks approval test",
  description: "Test harness only: asks for approval before its marker tool runs.",
  register(api) {
    api.registerTool({
      name: TOOL_NAME,
      description:
        "Writes a marker file (test harness). Every call needs the owner's approval first.",
      parameters: {
        type: "object",
        properties: {
          path: {
            type: "string",
            description: "Absolute path of the marker file, inside the system temp folder.",
          },
          approval: {
            type: "object",
            description:
              "How to ask: title, description, severity, scope, allowedDecisions, timeoutMs.",
          },
        },
        required: ["path"],
      },
      async execute(_toolCallId, params) {
        const path = String(params.path ?? "");
        if (!insideTmp(path)) throw new Error(`refusing to write outside ${tmpdir()}: ${path}`);
        writeFileSync(path, "approved\n");
        const decision = resolutions.get(path) ?? "unknown";
        resolutions.delete(path);
        return {
          content: [{ type: "text", text: `marker written: ${path} (approved with ${decision})` }],
        };
      },
    });

    api.on("before_tool_call", (event) => {
      if (event.toolName !== TOOL_NAME) return undefined;
      const path = String(event.params?.path ?? "");
      const ask = event.params?.approval ?? {};
      return {
        requireApproval: {
          title: ask.title ?? "Write a marker file",
          description: ask.description ?? `Writes ${path}`,
          ...(ask.severity ? { severity: ask.severity } : {}),
          ...(ask.scope ? { scope: ask.scope } : {}),
          ...(ask.allowedDecisions ? { allowedDecisions: ask.allowedDecisions } : {}),
          ...(ask.timeoutMs ? { timeoutMs: ask.timeoutMs } : {}),
          onResolution(decision) {
            resolutions.set(path, decision);
          },
        },
      };
    });
  },
};
