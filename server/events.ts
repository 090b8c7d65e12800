/**
 * A typed event source: how the parts of the server talk without knowing each other (the Gateway
 * adapter to the broker, the broker to the transports), so nothing is wired after construction.
 */

export type EventMap = Record<string, unknown[]>;

export interface Subscribable<E extends EventMap> {
  /** Returns the function that unsubscribes. */
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): () => void;
}

export class Emitter<E extends EventMap> implements Subscribable<E> {
  private readonly listeners: { [K in keyof E]?: Set<(...args: E[K]) => void> } = {};

  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): () => void {
    const set: Set<(...args: E[K]) => void> = this.listeners[event] ?? new Set();
    this.listeners[event] = set;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  protected emit<K extends keyof E>(event: K, ...args: E[K]): void {
    for (const listener of [...(this.listeners[event] ?? [])]) listener(...args);
  }
}
