import type { InstanceStatus } from "../../lib/protocol.ts";
import type { AskBroker } from "../broker/broker.ts";
import type { StatusSource } from "../status.ts";
import { type TabIo, WATCHERS_ROOM } from "./handlers.ts";
import { replyRoom } from "./handshake.ts";

/**
 * The broker's and the status's events, passed on to the tabs. Cards come from presence on the
 * instance that holds the tab (it carried them there), as presence tells them; a widget's notice that it was superseded goes
 * to its tab wherever it is connected (the adapter carries it to another instance); the dashboard
 * feed and the status stay local: every instance hears every ask and has its own link.
 */
export function relayToTabs(
  io: TabIo,
  broker: AskBroker,
  status: StatusSource<InstanceStatus>,
): void {
  broker.cardEvents.on("card:show", (tabId, ask) =>
    io.sockets.sockets.get(tabId)?.emit("ask:show", ask),
  );
  broker.cardEvents.on("card:close", (tabId, close) =>
    io.sockets.sockets.get(tabId)?.emit("ask:close", close),
  );
  broker.on("widget:superseded", (tabId, chatId) =>
    io.to(tabId).emit("widget:superseded", { chatId }),
  );
  // An ask refused by policy (a guest's approval) is never shown: its reply's widget still says why.
  broker.on("ask:ended", (ask, reason) => {
    if (reason === "denied" && ask.chatId !== null && ask.replyId !== undefined) {
      io.to(replyRoom(ask.chatId, ask.replyId)).emit("ask:close", {
        askId: ask.id,
        reason,
        summary: ask.resolution?.summary,
      });
    }
  });
  broker.on("ask:changed", (ask) => {
    // Encoding an ask for an empty room is work on every delivery: skip it when no dashboard watches.
    if (io.sockets.adapter.rooms.get(WATCHERS_ROOM)?.size)
      io.local.to(WATCHERS_ROOM).emit("ask:changed", ask);
  });
  // A title comes to one instance (the one the filter called): every instance's dashboards hear it.
  broker.on("chat:titled", (chatId, title) =>
    io.to(WATCHERS_ROOM).emit("chat:title", { chatId, title }),
  );
  status.on("gateway:status", (current) => io.local.emit("gateway:status", current));
}
