import { GatewayClient } from "@openclaw/gateway-client";
import { PROTOCOL_VERSION } from "@openclaw/gateway-protocol/version";
import { z } from "zod";

/**
 * The Gateway's OpenAI-compatible endpoint (`/v1`, docs/gateway/openai-http-api.md in the openclaw
 * package), which Open WebUI's chats run on: whether it answers, and turning it on in the Gateway's
 * config (off by default), for `npm run connect-openwebui`.
 */

/** Where the endpoint is, from the Gateway's WebSocket URL (they share the port). */
export function openaiBaseUrl(gatewayUrl: string): string {
  return `${gatewayUrl.replace(/^ws(s?):/, "http$1:").replace(/\/+$/, "")}/v1`;
}

export type EndpointState = "on" | "off" | "token refused" | "unreachable";

/** `GET /v1/models` with the Gateway token: 200 on, 404 off (the route is not served). */
export async function endpointState(
  gatewayUrl: string,
  token: string | undefined,
): Promise<EndpointState> {
  try {
    const response = await fetch(`${openaiBaseUrl(gatewayUrl)}/models`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    if (response.ok) return "on";
    return response.status === 401 || response.status === 403 ? "token refused" : "off";
  } catch {
    return "unreachable";
  }
}

const ConfigGet = z.object({ hash: z.string() }).passthrough();

/**
 * Sets `gateway.http.endpoints.chatCompletions.enabled: true` with `config.patch` (an operator with
 * `operator.admin`; the Gateway reloads it by itself), then waits until the endpoint answers.
 * Rejects with the Gateway's reason when it refuses.
 */
export async function enableEndpoint(
  gatewayUrl: string,
  token: string | undefined,
  timeoutMs = 20_000,
): Promise<void> {
  const hello = Promise.withResolvers<void>();
  const client = new GatewayClient({
    url: gatewayUrl,
    token,
    minProtocol: PROTOCOL_VERSION,
    maxProtocol: PROTOCOL_VERSION,
    role: "operator",
    scopes: ["operator.read", "operator.admin"],
    clientDisplayName: "OpenClaw Asks connect-openwebui",
    onHelloOk: () => hello.resolve(),
    onConnectError: (error) => hello.reject(error),
  });
  client.start();
  try {
    await hello.promise;
    const { hash } = ConfigGet.parse(await client.request("config.get", {}));
    const patch = { gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } } };
    await client.request("config.patch", {
      raw: JSON.stringify(patch),
      baseHash: hash,
      note: "OpenClaw Asks: Open WebUI's chats run on /v1",
    });
  } finally {
    await client.stopAndWait({ timeoutMs: 5_000 }).catch(() => {});
  }
  const deadline = Date.now() + timeoutMs;
  while ((await endpointState(gatewayUrl, token)) !== "on") {
    if (Date.now() > deadline)
      throw new Error(
        `the endpoint did not come up within ${timeoutMs / 1000} s of the config change`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
