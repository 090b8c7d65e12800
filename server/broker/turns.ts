/**
 * Steps that must not overlap, one queue per key: presence and the store answer asynchronously, so two
 * views of one chat, or a tab's view and its leave, must each wait for the one before (socket.io's own
 * handlers would interleave them).
 */
export type Queue = Map<string, Promise<unknown>>;

/**
 * Runs `step` after every earlier step queued in any of its slots (a queue and a key); a failed step
 * does not stop the ones after it. A step waits only on steps queued before it, so none waits forever.
 */
export function inTurn<T>(
  slots: readonly (readonly [Queue, string])[],
  step: () => Promise<T>,
): Promise<T> {
  const run = Promise.all(slots.map(([queue, key]) => queue.get(key) ?? Promise.resolve())).then(
    step,
  );
  const done = (): void => {
    for (const [queue, key] of slots) if (queue.get(key) === tail) queue.delete(key);
  };
  const tail: Promise<void> = run.then(done, done);
  for (const [queue, key] of slots) queue.set(key, tail);
  return run;
}
