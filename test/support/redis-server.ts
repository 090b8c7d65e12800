import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * A throwaway Redis for a test file: Debian's redis-server on a free loopback port, its data in a
 * temporary directory with the append-only file on (so a restart keeps what was written), no
 * password, stopped by its process id. Never the machine's shared Redis on 6379.
 *
 * Tests fsync every write (`always`: even a SIGKILL loses nothing); the benchmark runs Redis as a
 * deployment does by default (`everysec`), since an fsync per write sits on the way of every card.
 */

export type AppendFsync = "always" | "everysec";

export function redisServerBinary(): string {
  return process.env.REDIS_SERVER_PATH || "/usr/bin/redis-server";
}

export type TestRedis = {
  url: string;
  port: number;
  pid: number;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (the AOF brings the data back). */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function launch(port: number, dir: string, appendfsync: AppendFsync): Promise<ChildProcess> {
  const child = spawn(
    redisServerBinary(),
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      appendfsync,
      "--save",
      "",
      "--daemonize",
      "no",
      "--loglevel",
      "warning",
      "--logfile",
      "",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`redis-server did not start in 10 s: ${output}`)),
      10_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`redis-server exited with ${code}: ${output}`)));
    // With --loglevel warning it prints nothing on success: readiness is a PING that answers.
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const ping = async (): Promise<void> => {
      const { Socket } = await import("node:net");
      for (;;) {
        const answered = await new Promise<boolean>((done) => {
          const socket = new Socket();
          socket.once("error", () => done(false));
          socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
          socket.once("data", (data) => {
            socket.destroy();
            done(data.toString().startsWith("+PONG"));
          });
        });
        if (answered) return;
        if (child.exitCode !== null) return;
        await new Promise((wait) => setTimeout(wait, 20));
      }
    };
    ping().then(() => {
      if (child.exitCode !== null) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      child.removeAllListeners("error");
      resolve(child);
    }, fail);
  });
}

function ended(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

export async function startRedis(options: { appendfsync?: AppendFsync } = {}): Promise<TestRedis> {
  const appendfsync = options.appendfsync ?? "always";
  const dir = mkdtempSync(path.join(tmpdir(), "asks-redis-"));
  const port = await freePort();
  let child = await launch(port, dir, appendfsync);
  const stopChild = async (signal: NodeJS.Signals) => {
    const done = ended(child);
    if (child.pid !== undefined) {
      try {
        process.kill(child.pid, signal);
      } catch {
        // already gone
      }
    }
    await done;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid!;
    },
    kill: () => stopChild("SIGKILL"),
    async restart() {
      child = await launch(port, dir, appendfsync);
    },
    async stop() {
      await stopChild("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
