// A client of the Gateway's OpenAI-compatible endpoint (`POST /v1/chat/completions`), as Open WebUI's
// OpenAI connection calls it: one streamed request per reply, read chunk by chunk. Tests use it to
// drive replies on the `/v1` path without Open WebUI (which the real-Open-WebUI suite drives).
import { openaiBaseUrl } from "../../server/gateway/openai-endpoint.ts";

export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type ChatCompletionRequest = {
  /** The Gateway's WebSocket URL (`ws://127.0.0.1:<port>`); the endpoint is on the same port. */
  gatewayUrl: string;
  token: string;
  /** `openclaw/<agentId>`. */
  model: string;
  messages: ChatMessage[];
  /** The OpenAI `user`: the Gateway's session becomes `agent:<agent>:openai-user:<user>`. */
  user?: string;
  /** More request headers, as an Open WebUI connection's own headers add them. */
  headers?: Record<string, string>;
};

export type ChatCompletionStream = {
  /** The assistant text streamed so far. */
  text(): string;
  /** The response's `id` (the run's id, `chatcmpl_<uuid>`), once its first chunk came. */
  id(): string | null;
  /** Resolves once the stream ended: its status, the whole text and the last finish reason. */
  done: Promise<{ status: number; text: string; finishReason: string | null }>;
  /** Closes the connection, as Open WebUI does when the user presses Stop. */
  abort(): void;
};

/** The HTTP base of a Gateway given by its WebSocket URL. */
export function gatewayHttpUrl(gatewayUrl: string): string {
  return gatewayUrl.replace(/^ws/, "http").replace(/\/+$/, "");
}

export function streamChatCompletion(request: ChatCompletionRequest): ChatCompletionStream {
  const controller = new AbortController();
  let text = "";
  let id: string | null = null;
  let finishReason: string | null = null;

  const done = (async () => {
    const response = await fetch(`${openaiBaseUrl(request.gatewayUrl)}/chat/completions`, {
      method: "POST",
      headers: {
        ...request.headers,
        authorization: `Bearer ${request.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: request.model,
        stream: true,
        messages: request.messages,
        ...(request.user === undefined ? {} : { user: request.user }),
      }),
      signal: controller.signal,
    });
    if (!response.ok || !response.body)
      return { status: response.status, text: await response.text(), finishReason: null };
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    let buffered = "";
    try {
      for (;;) {
        const { done: ended, value: bytes } = await reader.read();
        if (ended) break;
        buffered += decoder.decode(bytes, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line.startsWith("data:")) continue;
          const data = line.slice(5).trim();
          if (data === "[DONE]") continue;
          const chunk = JSON.parse(data) as {
            id?: string;
            choices?: { delta?: { content?: string }; finish_reason?: string | null }[];
          };
          id ??= chunk.id ?? null;
          const choice = chunk.choices?.[0];
          if (choice?.delta?.content) text += choice.delta.content;
          if (choice?.finish_reason) finishReason = choice.finish_reason;
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    return { status: response.status, text, finishReason };
  })();
  done.catch(() => {});

  return {
    text: () => text,
    id: () => id,
    done,
    abort: () => controller.abort(),
  };
}
