// A TCP load balancer on loopback for tests of several instances, as docs/INSTANCES.md deploys them:
// each new connection goes to the next backend that accepts it (a dead one is skipped), and the two
// ends are piped as they are, WebSocket upgrades included. When a backend dies, its connections close
// on the client's side too, as a real balancer's do.
import { connect, createServer, type Socket } from "node:net";

export type Balancer = {
  url: string;
  /** The ports of the backends holding an open Socket.IO connection now, one entry per connection. */
  socketBackends(): number[];
  close(): Promise<void>;
};

export async function startBalancer(backendPorts: number[]): Promise<Balancer> {
  let next = 0;
  const open = new Map<Socket, { port: number; socketIo: boolean }>();

  /** Connects to the first backend that accepts, starting with the next one in turn. */
  function reachBackend(tried = 0): Promise<{ upstream: Socket; port: number }> {
    if (tried === backendPorts.length) return Promise.reject(new Error("no backend accepted"));
    const port = backendPorts[next++ % backendPorts.length]!;
    return new Promise((resolve, reject) => {
      const upstream = connect(port, "127.0.0.1");
      const refused = () => {
        reachBackend(tried + 1).then(resolve, reject);
      };
      upstream.once("error", refused);
      upstream.once("connect", () => {
        // Later errors are the link's own (its backend died): they end it, they find no other backend.
        upstream.off("error", refused);
        resolve({ upstream, port });
      });
    });
  }

  const server = createServer((client) => {
    client.on("error", () => client.destroy());
    // The first bytes tell a Socket.IO connection from a page's request; the rest is piped as it comes.
    client.once("data", (first) => {
      client.pause();
      reachBackend().then(
        ({ upstream, port }) => {
          if (client.destroyed) return void upstream.destroy();
          const socketIo = first.toString("latin1").startsWith("GET /socket.io/");
          open.set(client, { port, socketIo });
          const end = () => {
            open.delete(client);
            client.destroy();
            upstream.destroy();
          };
          client.once("close", end);
          upstream.once("close", end).on("error", end);
          upstream.write(first);
          client.pipe(upstream).pipe(client);
        },
        () => client.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    socketBackends: () =>
      [...open.values()].filter((link) => link.socketIo).map((link) => link.port),
    close: async () => {
      for (const client of open.keys()) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
