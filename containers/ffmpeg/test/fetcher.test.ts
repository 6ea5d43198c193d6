/**
 * The hardened fetcher with ALLOW_PRIVATE_SOURCES=false. A test resolver stands in for DNS and one
 * trusted name ("fixtures.test:<port>") stands in for a public host, so the 127.0.0.1 fixture server can
 * redirect to forbidden spellings: each redirect must be refused.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { SourceDownload } from "../src/pipeline/source.ts";
import { EngineError } from "../src/protocol.ts";
import { type FetchPolicy, openSource, type ResolvedAddress } from "../src/security/fetcher.ts";
import { FORBIDDEN_HOSTS } from "./address-policy.test.ts";
import { fixturePath } from "./support/engine.ts";
import { FIXTURES } from "./support/media.ts";

const port = inject("fixturePort");
let closedPort = 0;
let dir = "";

const DNS: Record<string, ResolvedAddress[]> = {
  "fixtures.test": [{ address: "127.0.0.1", family: 4 }],
  "closed.test": [{ address: "127.0.0.1", family: 4 }],
  "internal.test": [{ address: "10.1.2.3", family: 4 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  "ula.test": [{ address: "fd00::1", family: 6 }],
  // A rebinding-style answer: one public address, one private. The whole answer is refused.
  "mixed.test": [
    { address: "93.184.216.34", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
};

const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
  const answer = DNS[hostname];
  if (answer === undefined) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  }
  return answer;
};

let policy: FetchPolicy;
const base = () => `http://fixtures.test:${port}`;

beforeAll(async () => {
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  policy = {
    allowPrivate: false,
    connectTimeoutMs: 2000,
    readTimeoutMs: 5000, // a loaded machine is not a silent source; the stall tests wait it out
    resolve,
    trustedHosts: [`fixtures.test:${port}`, `closed.test:${closedPort}`],
  };
  dir = await mkdtemp(path.join(os.tmpdir(), "p6-fetcher-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function open(url: string, maxBytes = 1 << 30) {
  return openSource(url, "source_url", policy, maxBytes, new AbortController().signal);
}

async function failure(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error("expected a failure");
}

describe("forbidden addresses, directly and through a redirect", () => {
  test("the trusted fixture host itself is reachable", async () => {
    const opened = await open(`${base()}/media/av.mp4`);
    expect(opened.response.statusCode).toBe(200);
    opened.response.destroy();
  });

  test.each(FORBIDDEN_HOSTS)("http://%s is refused directly", async (host) => {
    const err = await failure(open(`http://${host}:${port}/media/av.mp4`));
    expect(err).toMatchObject({ code: "VALIDATION_INVALID_ARGUMENT", field: "source_url" });
  });

  test.each(FORBIDDEN_HOSTS)("a redirect to http://%s is refused", async (host) => {
    const target = `http://${host}:${port}/media/av.mp4`;
    const err = await failure(open(`${base()}/redirect?to=${encodeURIComponent(target)}`));
    expect(err.code).toBe("VALIDATION_INVALID_ARGUMENT");
    expect(err.field).toBe("source_url");
    expect(err.message).toMatch(/redirects to a URL that/);
    expect(err.message).not.toContain(host);
  });

  test.each([
    "file:///etc/passwd",
    "ftp://example.com/x",
    `http://user:pw@fixtures.test:${port}/media/av.mp4`,
  ])("a redirect to %s is refused", async (target) => {
    const err = await failure(open(`${base()}/redirect?to=${encodeURIComponent(target)}`));
    expect(err.code).toBe("VALIDATION_INVALID_ARGUMENT");
  });
});

describe("names resolving to forbidden addresses", () => {
  test.each(["internal.test", "metadata.test", "mapped.test", "ula.test", "mixed.test"])(
    "%s is refused directly",
    async (host) => {
      const err = await failure(open(`http://${host}:${port}/media/av.mp4`));
      expect(err).toMatchObject({ code: "VALIDATION_INVALID_ARGUMENT", field: "source_url" });
      expect(err.message).toMatch(/resolves to a private or reserved address/);
    },
  );

  test.each(["internal.test", "metadata.test", "mixed.test"])(
    "%s is refused through a redirect",
    async (host) => {
      const err = await failure(
        open(`${base()}/redirect?to=${encodeURIComponent(`http://${host}:${port}/media/av.mp4`)}`),
      );
      expect(err).toMatchObject({ code: "VALIDATION_INVALID_ARGUMENT", field: "source_url" });
    },
  );

  test("the field name follows the URL's role", async () => {
    const err = await failure(
      openSource(
        `http://internal.test/logo.png`,
        "params.watermark_url",
        policy,
        1000,
        new AbortController().signal,
      ),
    );
    expect(err.field).toBe("params.watermark_url");
  });
});

describe("unreachable sources name the cause", () => {
  test.each([
    ["/status/404", "the source answered with HTTP status 404"],
    ["/status/500", "the source answered with HTTP status 500"],
    ["/status/403", "the source answered with HTTP status 403"],
    ["/chain/6/av.mp4", "too many redirects (more than 5)"],
    ["/hang", "the source timed out (no data received)"],
  ])("%s → %s", async (route, message) => {
    const err = await failure(open(`${base()}${route}`));
    expect(err).toMatchObject({ code: "SOURCE_UNREACHABLE", message });
  });

  test("five redirects are followed", async () => {
    const opened = await open(`${base()}/chain/5/av.mp4`);
    expect(opened.redirects).toBe(5);
    opened.response.destroy();
  });

  test("DNS failure", async () => {
    const err = await failure(open("http://does-not-exist.test/a.mp4"));
    expect(err).toMatchObject({
      code: "SOURCE_UNREACHABLE",
      message: "DNS lookup of the source host failed",
    });
  });

  test("connection refused", async () => {
    const err = await failure(open(`http://closed.test:${closedPort}/a.mp4`));
    expect(err).toMatchObject({
      code: "SOURCE_UNREACHABLE",
      message: "the source host refused the connection",
    });
  });
});

describe("size caps", () => {
  test("a declared length over the cap is refused before downloading", async () => {
    const err = await failure(open(`${base()}/huge`, 1024 * 1024));
    expect(err.code).toBe("REQUEST_BODY_TOO_LARGE");
    expect(err.message).toBe("the source is 5 GiB, over the limit of 1 MiB");
  });

  test("a body without a length is cut off as soon as it passes the cap", async () => {
    const opened = await open(`${base()}/endless`, 2 * 1024 * 1024);
    const source = new SourceDownload(opened, path.join(dir, "endless"), 2 * 1024 * 1024);
    const err = await failure(source.complete());
    expect(err).toMatchObject({
      code: "REQUEST_BODY_TOO_LARGE",
      message: "the source is larger than the limit of 2 MiB",
    });
    expect(source.written).toBeLessThanOrEqual(2 * 1024 * 1024);
  });

  /** A source that never ends (1 GiB cap), opened like a job's. */
  const openEndless = () =>
    openSource(`${base()}/endless`, "source_url", policy, 1 << 30, new AbortController().signal);

  test("the download runs only so far ahead of its readers, without tripping the read timeout", async () => {
    const opened = await openEndless();
    const socket = opened.response.socket;
    const ahead = 512 * 1024;
    // A lead as large as the cap from the start (the default lead grows: next test).
    const source = new SourceDownload(opened, path.join(dir, "paced"), 1 << 30, ahead, null, ahead);
    await source.read(0, 1000);
    for (let i = 0; i < 500 && source.receivedBytes < ahead; i++) await new Promise((r) => setTimeout(r, 20));
    // Held back at (demand + ahead), give or take one socket read: paused, and the socket's read timeout off
    // while held (a hold is not a stalled source, however long it lasts).
    expect(source.receivedBytes).toBeGreaterThanOrEqual(ahead);
    expect(opened.response.isPaused()).toBe(true);
    expect(socket.timeout).toBe(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(source.receivedBytes).toBeLessThan(ahead + 1024 * 1024);
    expect(source.error).toBeNull();
    // Asking for more resumes it.
    await source.waitFor(8 * 1024 * 1024);
    expect(source.written).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    source.destroy();
  });

  test("the download's lead starts small and grows with what its readers read, up to the cap", async () => {
    // A probe reads a file's head: with a lead of 8 MiB from the start, the engine downloaded 8 MiB of every
    // probed file for nothing (`npm run bench:engine-cpu`). Each hold is checked give or take what the socket
    // had already delivered when it paused (under 1 MiB).
    const opened = await openEndless();
    const KiB = 1024;
    const MiB = 1024 * KiB;
    const source = new SourceDownload(opened, path.join(dir, "lead"), 1 << 30, 2 * MiB, null, 256 * KiB);
    const heldAt = async (at: number) => {
      for (let i = 0; i < 500 && source.receivedBytes < at; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 50));
      expect(opened.response.isPaused()).toBe(true);
      expect(source.receivedBytes).toBeGreaterThanOrEqual(at);
      expect(source.receivedBytes).toBeLessThan(at + MiB);
    };
    await source.read(0, 1000);
    await heldAt(1000 + 256 * KiB); // the lead it starts with
    await source.waitFor(MiB);
    await heldAt(2 * MiB); // as far ahead as readers have read
    await source.waitFor(4 * MiB);
    await heldAt(6 * MiB); // the cap
    expect(source.error).toBeNull();
    source.destroy();
  });

  test("a reader at the download's head gets bytes as they arrive, though the disk is written in batches", async () => {
    // 16 KiB/s in ~330-byte socket writes: far from a 1 MiB batch.
    const opened = await open(`${base()}/slow/${FIXTURES.av}?kbps=16`);
    const source = new SourceDownload(opened, path.join(dir, "trickle"), 1 << 30);
    try {
      const expected = (await readFile(fixturePath(FIXTURES.av))).subarray(0, 4096);
      expect(Buffer.from(await source.read(0, 100))).toEqual(expected.subarray(0, 100));
      // Served before a batch filled or the download ended (658 KiB at 16 KiB/s: half a minute away).
      expect(source.receivedBytes).toBeLessThan(1024 * 1024);
      expect(source.done).toBe(false);
      const streamed: Buffer[] = [];
      for await (const chunk of source.stream(0, 4095)) streamed.push(chunk);
      expect(Buffer.concat(streamed)).toEqual(expected);
      expect(source.written).toBeLessThan(64 * 1024);
    } finally {
      source.destroy();
    }
  });

  test("a body that stops mid-way times out", async () => {
    const opened = await open(`${base()}/stall/av.mp4`);
    const source = new SourceDownload(opened, path.join(dir, "stall"), 1 << 30);
    const err = await failure(source.complete());
    expect(err).toMatchObject({
      code: "SOURCE_UNREACHABLE",
      message: "the source stopped sending data (read timeout)",
    });
  });

  test("a body shorter than its declared length is an error", async () => {
    const opened = await open(`${base()}/short/av.mp4`);
    const source = new SourceDownload(opened, path.join(dir, "short"), 1 << 30);
    const err = await failure(source.complete());
    expect(err.code).toBe("SOURCE_UNREACHABLE");
  });
});
