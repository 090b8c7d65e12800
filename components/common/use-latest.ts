import { useLayoutEffect, useRef } from "react";

/** The value of the latest render, for callbacks and effects that outlive it (set before effects run). */
export function useLatest<T>(value: T): { readonly current: T } {
  const latest = useRef(value);
  useLayoutEffect(() => {
    latest.current = value;
  });
  return latest;
}
