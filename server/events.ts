/**
 * A typed event source: how the parts of the server talk without knowing each other (the Gateway
 * adapter to the broker, the broker to the transports), so nothing is wired after construction.
 */

export type EventMap = Record<string, unknown[]>;

/** `R`: what a listener returns; an emitter that waits for its listeners' work (`emitAndWait`) takes promises. */
export interface Subscribable<E extends EventMap, R = void> {
  /** Returns the function that unsubscribes. */
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => R): () => void;
}

export class Emitter<E extends EventMap, R = void> implements Subscribable<E, R> {
  private readonly listeners: { [K in keyof E]?: Set<(...args: E[K]) => R> } = {};

  on<K extends keyof E>(event: K, listener: (...args: E[K]) => R): () => void {
    const set: Set<(...args: E[K]) => R> = this.listeners[event] ?? new Set();
    this.listeners[event] = set;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  /**
   * Calls every listener, even after one threw: one part's failure must not keep the others from
   * hearing the event. What threw is then thrown to the emitter (an AggregateError when several did).
   */
  protected emit<K extends keyof E>(event: K, ...args: E[K]): void {
    const failures: unknown[] = [];
    for (const listener of this.current(event)) {
      try {
        listener(...args);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1)
      throw new AggregateError(failures, `${failures.length} listeners of ${String(event)} failed`);
  }

  /** Emits, then waits for what every listener started: the first failure rejects. */
  protected async emitAndWait<K extends keyof E>(event: K, ...args: E[K]): Promise<void> {
    await Promise.all(this.current(event).map((listener) => listener(...args)));
  }

  /** A copy: a listener that unsubscribes while called does not skip the next one. */
  private current<K extends keyof E>(event: K): ((...args: E[K]) => R)[] {
    return [...(this.listeners[event] ?? [])];
  }
}
