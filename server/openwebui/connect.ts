import { errorMessage } from "../../lib/error-message.ts";
import { enableEndpoint, endpointState, openaiBaseUrl } from "../gateway/openai-endpoint.ts";
import {
  type InstalledFunction,
  type ListedModel,
  type OpenaiConfig,
  OpenWebuiAdmin,
} from "./admin-api.ts";
import { endpointRefusal, isUserStatusOff, reason, releaseLine, toolsVerdict } from "./checks.ts";
import {
  type FilterPlan,
  findConnection,
  otherAgents,
  planFilter,
  planValves,
  SESSION_HEADER,
  type ValvePlan,
  withReplySessionHeader,
} from "./plans.ts";
import { plainHttpRefusal, printable } from "./safety.ts";
import { widgetTokenAccepted } from "./widget-check.ts";

export {
  compareVersions,
  type FilterPlan,
  findConnection,
  frontMatterVersion,
  planFilter,
  planValves,
  type ValvePlan,
} from "./plans.ts";

/**
 * `npm run connect-openwebui`: connects an Open WebUI to this server and its Gateway through Open
 * WebUI's admin API, in three stages. First it checks, writing nothing: Open WebUI answers, the key is
 * an admin's, the routes exist, the Gateway's /v1 is on (or can be turned on). Then it writes: the
 * filter (installed, or updated when older), its valves, its switches, and with `--add-connection` the
 * OpenAI connection and the Gateway's endpoint; a failed write of the filter undoes the filter's.
 * Last it checks the chain and says what works and what is left. It never prints a secret or a key.
 */

export const FILTER_ID = "openclaw_asks";
const FILTER_NAME = "OpenClaw Asks";

export type ConnectOptions = {
  openWebuiUrl: string;
  apiKey: string;
  /** Where browsers reach this server, and whether it was given (`--asks-url`, `PUBLIC_URL`) rather than guessed from HOST and PORT. */
  asksUrl: { url: string; explicit: boolean };
  /** The filter's own secret (auth/keys.ts `filterSecret`), for its `auth_secret` valve: never AUTH_SECRET itself. */
  filterSecret: string;
  gatewayUrl: string;
  gatewayToken: string | undefined;
  agentId: string;
  addConnection: boolean;
  /** `--session-header`: the connection names each reply's Gateway session itself (plans.ts `replySessionHeader`). */
  sessionHeader?: boolean;
  /** `--allow-plain-http`: secrets may go over plain http:// to a host other than this machine. */
  allowPlainHttp?: boolean;
  /** The filter to install: its source, and the version its front matter states. */
  filter: { content: string; version: string };
  print: (line: string) => void;
};

/** A refusal: the step that failed and why; nothing was written, or what was is undone. Printable as it is. */
export class ConnectRefused extends Error {
  constructor(message: string) {
    super(printable(message));
  }
}

// --- the run ---------------------------------------------------------------------------------------

/** Connects Open WebUI; resolves true when the whole chain works, false when something is left to do. Rejects with ConnectRefused. */
export async function connectOpenWebui(options: ConnectOptions): Promise<boolean> {
  // Open WebUI's strings are printed too: none of their control characters reach the terminal.
  const print = (line: string) => options.print(printable(line));
  const insecure = plainHttpRefusal(options.openWebuiUrl, options.allowPlainHttp ?? false);
  if (insecure) throw new ConnectRefused(insecure);
  const admin = new OpenWebuiAdmin(options.openWebuiUrl, options.apiKey);
  const gatewayBase = openaiBaseUrl(options.gatewayUrl);
  print(`Connecting Open WebUI at ${admin.url} to OpenClaw Asks at ${options.asksUrl.url}`);

  // 1. Checks: nothing is written until they pass.
  const version = await step("reach Open WebUI", () => admin.version());
  // An unsupported release is connected anyway, flagged: every route and setting used is checked below.
  const release = releaseLine(version);
  const user = await step("check the API key", () =>
    admin.sessionUser().catch((error: unknown) => {
      if (isUserStatusOff(error)) return null; // Then /openai/config, admins only, tells.
      throw error;
    }),
  );
  if (user && user.role !== "admin")
    throw new ConnectRefused(
      `✗ check the API key: it is ${user.name ?? user.id}'s, whose role is ${user.role}; connecting needs an admin's key (Open WebUI → Settings → Account → API keys)`,
    );
  const functions = await step("find the Functions API", () => admin.listFunctions());
  const openai = await step("find the OpenAI connections API", () => admin.openaiConfig());
  print(
    `✓ Open WebUI ${version}; the key is an admin's${user ? ` (${user.name ?? user.id})` : ""}`,
  );
  if (release) print(release);
  const endpoint = await endpointState(options.gatewayUrl, options.gatewayToken);
  if (endpoint !== "on" && !(endpoint === "off" && options.addConnection))
    throw new ConnectRefused(endpointRefusal(endpoint, gatewayBase));
  const installed = functions.some((item) => item.id === FILTER_ID)
    ? await step("read the installed filter", () => admin.getFunction(FILTER_ID))
    : null;
  const current = installed
    ? await step("read the filter's valves", () => admin.valves(FILTER_ID))
    : null;

  // 2. The filter, all or nothing.
  const filterPlan = planFilter(installed, options.filter.version);
  const valvePlan = planValves(current, {
    asksUrl: options.asksUrl,
    filterSecret: options.filterSecret,
  });
  await writeFilter(admin, options, installed, current, filterPlan, valvePlan);
  print(filterLine(filterPlan, options.filter.version));
  print(
    `✓ valves: ${valvePlan.set.length ? `${valvePlan.set.join(", ")} set` : "asks_url and auth_secret already this server's"}${valvePlan.kept.length ? `; kept as you set them: ${valvePlan.kept.join(", ")}` : ""}`,
  );
  print(
    "✓ filter on, for every chat: it acts only on OpenClaw's models (ids starting with openclaw), or on its model_ids valve",
  );

  // 3. The connection to the Gateway's /v1.
  let left = release !== null;
  let connections = openai;
  let connection = findConnection(connections, gatewayBase, options.agentId);
  if (connection === null && options.addConnection) {
    const added = {
      ...openai,
      ENABLE_OPENAI_API: true,
      OPENAI_API_BASE_URLS: [...openai.OPENAI_API_BASE_URLS, gatewayBase],
      OPENAI_API_KEYS: [...openai.OPENAI_API_KEYS, options.gatewayToken ?? ""],
    };
    await step("add the OpenAI connection", () => admin.updateOpenaiConfig(added));
    connections = added;
    connection = { index: openai.OPENAI_API_BASE_URLS.length, sessionHeader: "none" };
    print(`✓ OpenAI connection added: ${gatewayBase}, with the Gateway token`);
  } else if (connection === null) {
    left = true;
    print(
      `! no OpenAI connection to this Gateway (${gatewayBase}): run again with --add-connection, or add it in Admin Panel → Settings → Connections with the Gateway token as its key`,
    );
  } else {
    print(`✓ OpenAI connection to the Gateway: ${gatewayBase}`);
  }
  const listed = await admin.models().catch(() => null);
  const models = (listed ?? []).map((model) => model.id);
  if (connection !== null && options.sessionHeader && connection.sessionHeader !== "per-reply") {
    const set = { connections, index: connection.index, agentId: options.agentId };
    if (await setSessionHeader(admin, set, listed, print))
      connection = { ...connection, sessionHeader: "per-reply" };
    else left = true;
  }
  if (connection?.sessionHeader === "per-reply")
    print(
      `✓ the connection names each reply's Gateway session (${SESSION_HEADER}), also for a Gateway that ignores the OpenAI user`,
    );
  else if (connection?.sessionHeader === "other" && !options.sessionHeader) {
    left = true;
    print(
      `! that connection sets ${SESSION_HEADER}: every reply of a chat then shares one Gateway session (the model gets the history twice, and the filter's one session per reply is overridden). Remove the header in Admin Panel → Settings → Connections, or run again with --session-header`,
    );
  }
  if (endpoint === "off") {
    await enableEndpoint(options.gatewayUrl, options.gatewayToken).then(
      () =>
        print(
          "✓ the Gateway's /v1 endpoint turned on (gateway.http.endpoints.chatCompletions.enabled)",
        ),
      (error: unknown) => {
        throw new ConnectRefused(
          `✗ turn on the Gateway's /v1 endpoint: ${errorMessage(error)}. Set gateway.http.endpoints.chatCompletions.enabled: true in the Gateway's config and run this again`,
        );
      },
    );
  } else {
    print("✓ the Gateway's /v1 endpoint is on");
  }

  // 4. The whole chain.
  const model = `openclaw/${options.agentId}`;
  if (models.includes(model)) print(`✓ Open WebUI lists ${model}: chat with it`);
  else {
    left = true;
    print(
      `! Open WebUI does not list ${model}${models.some((id) => id.startsWith("openclaw")) ? ` (it lists ${models.filter((id) => id.startsWith("openclaw")).join(", ")}: is AGENT_ID right?)` : ""}`,
    );
  }
  // What decides the tools Open WebUI sends: one it adds that the Gateway refuses fails every reply.
  const tools = await admin.modelSettings(model).then(
    (settings) => toolsVerdict({ version, model, settings, valves: valvePlan.valves }),
    (error: unknown) => {
      left = true;
      return { ok: true, line: `! could not read ${model}'s settings: ${reason(error)}` };
    },
  );
  print(tools.line);
  const accepted = await widgetTokenAccepted(options.asksUrl.url, options.filterSecret);
  if (accepted === true)
    print(
      `✓ OpenClaw Asks at ${options.asksUrl.url} accepts a widget token signed with these valves`,
    );
  else {
    left = true;
    print(`! OpenClaw Asks at ${options.asksUrl.url} ${accepted}`);
  }
  if (!tools.ok)
    throw new ConnectRefused(
      `✗ not connected: every reply of a chat on ${model} would fail (the step marked ✗ above)`,
    );
  print(
    left
      ? "Connected, with the steps above marked ! left to do."
      : "Connected: a question, secret request or approval of an OpenClaw chat now shows as a card in its reply.",
  );
  return !left;
}

/** One step of the run: its failure is a refusal naming the step. */
async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new ConnectRefused(`✗ ${what}: ${reason(error)}`);
  }
}

/**
 * `--session-header`: the connection's header set to name each reply's session (plans.ts
 * `replySessionHeader`), unless the connection lists another agent's model, which it would run as
 * this one: then a `!` line says what to do. Resolves whether it was set.
 */
async function setSessionHeader(
  admin: OpenWebuiAdmin,
  { connections, index, agentId }: { connections: OpenaiConfig; index: number; agentId: string },
  listed: ListedModel[] | null,
  print: (line: string) => void,
): Promise<boolean> {
  if (listed === null) {
    print(
      `! ${SESSION_HEADER} not set: Open WebUI did not list its models, so which agents this connection serves is unknown`,
    );
    return false;
  }
  // A model that names no connection counts as this one's: the header is set only when surely safe.
  const others = otherAgents(
    listed.filter((model) => (model.urlIdx ?? index) === index).map((model) => model.id),
    agentId,
  );
  if (others.length > 0) {
    const named = others.slice(0, 3).map((agent) => `openclaw/${agent}`);
    const more = others.length > 3 ? ` and ${others.length - 3} more` : "";
    print(
      `! ${SESSION_HEADER} not set: Open WebUI also lists ${named.join(", ")}${more} on this connection, and a header naming agent ${agentId} would run their chats as ${agentId}. Limit the connection to openclaw/${agentId} (its Model IDs, in Admin Panel → Settings → Connections) and give each other agent a connection of its own`,
    );
    return false;
  }
  await step("set the connection's session header", () =>
    admin.updateOpenaiConfig(withReplySessionHeader(connections, index, agentId)),
  );
  print(`✓ connection header ${SESSION_HEADER} set`);
  return true;
}

function filterLine(plan: FilterPlan, ours: string): string {
  switch (plan.action) {
    case "install":
      return `✓ filter ${FILTER_ID} installed (version ${ours})`;
    case "update":
      return `✓ filter ${FILTER_ID} updated from ${plan.from} to ${ours}`;
    case "keep":
      return plan.newer
        ? `✓ filter ${FILTER_ID} kept: the installed ${plan.version} is newer than this server's ${ours}`
        : `✓ filter ${FILTER_ID} already at ${ours}`;
  }
}

/** Installs or updates the filter, its valves and its switches; a failure undoes what this step wrote. */
async function writeFilter(
  admin: OpenWebuiAdmin,
  options: ConnectOptions,
  installed: InstalledFunction | null,
  current: Record<string, unknown> | null,
  plan: FilterPlan,
  valves: ValvePlan,
): Promise<void> {
  const form = {
    id: FILTER_ID,
    name: FILTER_NAME,
    content: options.filter.content,
    meta: {
      description:
        "Shows the OpenClaw agent's questions, secret requests and approvals as cards in the reply.",
    },
  };
  const undo: (() => Promise<unknown>)[] = [];
  try {
    if (plan.action === "install") {
      await admin.createFunction(form);
      undo.push(() => admin.deleteFunction(FILTER_ID));
    } else if (plan.action === "update" && installed) {
      await admin.updateFunction(form);
      undo.push(() =>
        admin.updateFunction({ ...form, name: installed.name, content: installed.content }),
      );
    }
    if (valves.set.length > 0 || plan.action === "install") {
      await admin.updateValves(FILTER_ID, valves.valves);
      if (current) undo.push(() => admin.updateValves(FILTER_ID, current));
    }
    const now = installed ?? { is_active: false, is_global: false };
    if (!now.is_active) {
      await admin.toggleActive(FILTER_ID);
      undo.push(() => admin.toggleActive(FILTER_ID));
    }
    if (!now.is_global) {
      await admin.toggleGlobal(FILTER_ID);
      undo.push(() => admin.toggleGlobal(FILTER_ID));
    }
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => {});
    throw new ConnectRefused(
      `✗ write the filter: ${reason(error)} (what this step had written is undone)`,
    );
  }
}
