import { useMemo, useState } from "react";
import type { Ask } from "../../lib/ask.ts";
import { HistoryFilters } from "./HistoryFilters.tsx";
import { HistoryTable } from "./HistoryTable.tsx";
import {
  historyChats,
  type HistoryFilter,
  matchesHistoryFilter,
  NO_FILTER,
} from "./inbox-model.ts";

/** The history of finished asks (newest first, from the dashboard's feed) and its filters. */
export function HistoryPanel({
  finished,
  chatTitles,
}: {
  finished: Ask[];
  chatTitles: ReadonlyMap<string, string>;
}) {
  const [filter, setFilter] = useState<HistoryFilter>(NO_FILTER);
  const shown = useMemo(
    () => finished.filter((ask) => matchesHistoryFilter(ask, filter)),
    [finished, filter],
  );
  const chats = useMemo(() => historyChats(finished), [finished]);
  return (
    <>
      <HistoryFilters
        filter={filter}
        chats={chats}
        onChange={setFilter}
        shown={shown.length}
        total={finished.length}
      />
      <HistoryTable
        asks={shown}
        chatTitles={chatTitles}
        filtered={shown.length !== finished.length}
      />
    </>
  );
}
