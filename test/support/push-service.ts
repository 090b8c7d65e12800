// A push service stand-in on loopback (RFC 8030), over HTTPS with a throwaway self-signed certificate
// (`ca` is what the server under test must trust): it takes what `web-push` sends, checks the VAPID
// authorization (RFC 8292) and decrypts the body with the subscription's keys exactly as a browser
// would (RFC 8291, aes128gcm per RFC 8188), written here from the RFCs with node:crypto alone, so it
// shares no code with the sender. Paths under /gone/ answer 410 Gone, as for an expired subscription,
// and the paths in `failing` 500, as a push service in trouble does.
import { execFileSync } from "node:child_process";
import { createDecipheriv, createECDH, type ECDH, hkdfSync, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { decodeProtectedHeader, importJWK, jwtVerify } from "jose";

export type BrowserKeys = { ecdh: ECDH; p256dh: string; auth: string; authBytes: Buffer };

/** What a browser makes when it subscribes: a P-256 key pair and a 16-byte auth secret. */
export function browserKeys(): BrowserKeys {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const authBytes = randomBytes(16);
  return {
    ecdh,
    p256dh: ecdh.getPublicKey().toString("base64url"),
    auth: authBytes.toString("base64url"),
    authBytes,
  };
}

export type ReceivedPush = {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The VAPID JWT's claims, after its signature was checked with the key in the header. */
  vapid: { aud: string; sub: string; exp: number };
  body: Buffer;
};

export type PushServiceStandIn = {
  url: string;
  /** The stand-in's certificate (PEM): the sender's HTTPS agent must trust it. */
  ca: string;
  /** The same, as a file (for NODE_EXTRA_CA_CERTS of a server in another process); removed by stop(). */
  caFile: string;
  received: ReceivedPush[];
  /** Paths answered 500 Internal Server Error (nothing is received) for as long as they are in here. */
  failing: Set<string>;
  /** Resolves with the first push (already received or still to come) that `match` accepts. */
  next(match: (push: ReceivedPush) => boolean, timeoutMs?: number): Promise<ReceivedPush>;
  stop(): Promise<void>;
};

/** RFC 8291 §3.4 and RFC 8188 §2: one record, padding delimiter 0x02. */
export function decryptPush(body: Buffer, keys: BrowserKeys): string {
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const idLength = body[20]!;
  const serverPublic = body.subarray(21, 21 + idLength);
  const ciphertext = body.subarray(21 + idLength);
  if (ciphertext.length > recordSize) throw new Error("more than one record");
  const shared = keys.ecdh.computeSecret(serverPublic);
  const keyInfo = Buffer.concat([
    Buffer.from("WebPush: info\0"),
    keys.ecdh.getPublicKey(),
    serverPublic,
  ]);
  const ikm = Buffer.from(hkdfSync("sha256", shared, keys.authBytes, keyInfo, 32));
  const cek = Buffer.from(
    hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16),
  );
  const nonce = Buffer.from(
    hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12),
  );
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([
    decipher.update(ciphertext.subarray(0, ciphertext.length - 16)),
    decipher.final(),
  ]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error("no last-record padding delimiter");
  return padded.subarray(0, end).toString("utf8");
}

async function checkVapid(
  authorization: string | undefined,
  origin: string,
): Promise<ReceivedPush["vapid"]> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (!match) throw new Error(`no VAPID authorization: ${authorization}`);
  const [, jwt, k] = match as unknown as [string, string, string];
  const raw = Buffer.from(k, "base64url");
  const key = await importJWK(
    {
      kty: "EC",
      crv: "P-256",
      x: raw.subarray(1, 33).toString("base64url"),
      y: raw.subarray(33, 65).toString("base64url"),
    },
    "ES256",
  );
  if (decodeProtectedHeader(jwt).alg !== "ES256") throw new Error("VAPID JWT is not ES256");
  const { payload } = await jwtVerify(jwt, key, { audience: origin });
  return { aud: String(payload.aud), sub: String(payload.sub), exp: Number(payload.exp) };
}

/** A self-signed P-256 certificate for 127.0.0.1, valid one day. */
function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "push-service-"));
  try {
    const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        key,
        "-out",
        cert,
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startPushService(): Promise<PushServiceStandIn> {
  const tls = selfSignedCertificate();
  const caDir = mkdtempSync(path.join(tmpdir(), "push-service-ca-"));
  const caFile = path.join(caDir, "ca.pem");
  writeFileSync(caFile, tls.cert);
  const received: ReceivedPush[] = [];
  const failing = new Set<string>();
  const waiters: {
    match: (push: ReceivedPush) => boolean;
    resolve: (push: ReceivedPush) => void;
  }[] = [];
  let origin = "";
  const server: Server = createServer(tls, (request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      checkVapid(request.headers.authorization, origin).then(
        (vapid) => {
          if (request.method !== "POST" || request.headers["content-encoding"] !== "aes128gcm") {
            response.writeHead(400).end("expected POST with Content-Encoding: aes128gcm");
            return;
          }
          const push: ReceivedPush = {
            path: request.url ?? "/",
            headers: request.headers,
            vapid,
            body: Buffer.concat(chunks),
          };
          if (push.path.startsWith("/gone/")) {
            response.writeHead(410).end("subscription gone");
            return;
          }
          if (failing.has(push.path)) {
            response.writeHead(500).end("push service in trouble");
            return;
          }
          received.push(push);
          for (const waiter of waiters.filter((candidate) => candidate.match(push))) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(push);
          }
          response.writeHead(201, { location: `${origin}/messages/${received.length}` }).end();
        },
        (error: unknown) => response.writeHead(401).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    ca: tls.cert,
    caFile,
    received,
    failing,
    next(match, timeoutMs = 30_000) {
      const already = received.find(match);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(`no matching push within ${timeoutMs} ms (received ${received.length})`),
          );
        }, timeoutMs);
        const waiter = {
          match,
          resolve: (push: ReceivedPush) => {
            clearTimeout(timer);
            resolve(push);
          },
        };
        waiters.push(waiter);
      });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        rmSync(caDir, { recursive: true, force: true });
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
