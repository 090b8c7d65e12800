import { type ChildProcess,spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command, Ready, Reply } from "./ipc.ts";

/** The load client's handle on server-process.ts: request/reply over the IPC channel. */

export type ServerProcess = {
  pid: number;
  /** Sends at once (synchronously up to the pipe write) and resolves with the reply. */
  call<T = unknown>(command: Command, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
};

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), "server-process.ts");

export async function spawnServerProcess(options: { authSecret: string; nodeFlags?: string[]; verbose?: boolean }): Promise<ServerProcess> {
  // The young generation `npm start` gives the server (package.json): fewer scavenges on the way of a card.
  const child: ChildProcess = spawn(process.execPath, ["--expose-gc", "--max-semi-space-size=32", ...(options.nodeFlags ?? []), ENTRY], {
    env: { ...process.env, BENCH_AUTH_SECRET: options.authSecret, BENCH_VERBOSE: options.verbose ? "1" : "0" },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not spawn the bench server process");

  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  let exitError: Error | null = null;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", (code, signal) => {
    exitError = new Error(`the bench server process exited (code ${code}, signal ${signal})`);
    for (const waiter of pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(exitError);
    }
    pending.clear();
  });

  const ready = Promise.withResolvers<void>();
  child.on("message", (message: Reply | Ready) => {
    if ("ready" in message) return ready.resolve();
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    clearTimeout(waiter.timer);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`server process: ${message.error}`));
  });
  void exited.then(() => ready.reject(exitError ?? new Error("server process exited")));
  await ready.promise;

  const call = <T>(command: Command, timeoutMs = 60_000): Promise<T> => {
    if (exitError) return Promise.reject(exitError);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`server process did not answer ${command.cmd} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      child.send({ id, ...command });
    });
  };

  return {
    pid,
    call,
    async stop() {
      if (exitError) return;
      try {
        await call({ cmd: "stop" }, 15_000);
      } catch {
        // Stopped or stuck: the kill below ends it either way.
      }
      child.disconnect();
      const done = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!done) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
