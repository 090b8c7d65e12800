import { type RefObject, useEffect } from "react";
import { useLatest } from "../common/use-latest.ts";
import type { NumberPick } from "./types.ts";

/** A card takes each pick of its row once: the focus, then the number, as if the key had been pressed on it. */
export function useNumberPick(
  pick: NumberPick | undefined,
  root: RefObject<HTMLElement | null>,
  press: (digit: number) => void,
): void {
  const latest = useLatest(press);
  useEffect(() => {
    if (!pick) return;
    pick.taken();
    root.current?.focus();
    latest.current(pick.digit);
  }, [pick, root, latest]);
}
