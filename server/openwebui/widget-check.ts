import { io } from "socket.io-client";
import { mintTabToken, secretKey } from "../auth/tokens.ts";

/** Opens a socket with a widget token signed as the filter signs one: true when accepted, else what went wrong. */
export async function widgetTokenAccepted(
  asksUrl: string,
  filterSecret: string,
): Promise<true | string> {
  const token = await mintTabToken(secretKey(filterSecret), {
    userId: "openclaw-asks-connect-check",
    chat: "openclaw-asks-connect-check",
    reply: { msg: "check", mts: Date.now() },
    ttlSeconds: 60,
  });
  const socket = io(asksUrl, {
    auth: { token },
    transports: ["websocket"],
    reconnection: false,
    timeout: 10_000,
  });
  try {
    return await new Promise<true | string>((resolve) => {
      socket.once("connect", () => resolve(true));
      socket.once("connect_error", (error) =>
        resolve(
          /xhr|websocket|timeout/i.test(error.message)
            ? "does not answer: start it (npm start) and run this again"
            : `refused a widget token signed with auth_secret: ${error.message}`,
        ),
      );
    });
  } finally {
    socket.close();
  }
}
