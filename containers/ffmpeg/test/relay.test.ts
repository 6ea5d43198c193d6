/**
 * The relay through which ffmpeg reads a source that is still downloading (src/pipeline/relay.ts). Loopback
 * TCP buffers several MB, so a response as long as the file took bytes from the download far faster than
 * ffmpeg read them, and the download, which follows what was sent, fetched 2–5 MB of a 9.4 MB file for a
 * probe that reads 64 KB of it (`npm run bench:engine-cpu`). A ranged read now gets bounded parts.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { runFfprobe } from "../src/pipeline/ffmpeg.ts";
import { inputProbeArgs, mediaInputArgs } from "../src/pipeline/input-args.ts";
import { isRelayUrl, Relay } from "../src/pipeline/relay.ts";
import { SourceDownload } from "../src/pipeline/source.ts";
import { type FetchPolicy, openSource } from "../src/security/fetcher.ts";
import { fixturePath } from "./support/engine.ts";
import { writeFileAtomic } from "./support/fixture-files.ts";
import { FIXTURES } from "./support/media.ts";

const exec = promisify(execFile);
const MiB = 1024 * 1024;
const PADDED = "relay-padded.mp4";
const base = `http://fixtures.test:${inject("fixturePort")}`;
const policy: FetchPolicy = {
  allowPrivate: false,
  connectTimeoutMs: 2000,
  readTimeoutMs: 5000,
  resolve: async () => [{ address: "127.0.0.1", family: 4 }],
  trustedHosts: [`fixtures.test:${inject("fixturePort")}`],
};
const binaries = resolveBinaries(process.env);
const relay = new Relay();
const sources: SourceDownload[] = [];
let dir = "";
let total = 0;

beforeAll(async () => {
  // The faststart fixture with its media data box (the last) grown by 16 MiB of zeros: a large file whose
  // head answers a probe, and nothing after the media data for a demuxer to look at. The fixture folder is
  // the machine's (other runs and clones serve it at the same time): written whole, the same bytes every
  // time, and left there (removing it, or rewriting it in place, cut another clone's read of it short).
  const av = await readFile(fixturePath(FIXTURES.av));
  let at = 0;
  while (av.toString("latin1", at + 4, at + 8) !== "mdat") at += av.readUInt32BE(at);
  expect(at + av.readUInt32BE(at)).toBe(av.length);
  av.writeUInt32BE(av.readUInt32BE(at) + 16 * MiB, at);
  await writeFileAtomic(fixturePath(PADDED), Buffer.concat([av, Buffer.alloc(16 * MiB)]));
  total = av.length + 16 * MiB;
  dir = await mkdtemp(path.join(os.tmpdir(), "p6-relay-"));
  await relay.start();
});
afterAll(async () => {
  for (const source of sources) source.destroy();
  await relay.close();
  await rm(dir, { recursive: true, force: true });
});

/** A download of `name` from the fixture server, as a job opens it, readable at a relay URL. */
async function relayed(name: string) {
  const opened = await openSource(
    `${base}/media/${name}`,
    "source_url",
    policy,
    1 << 30,
    new AbortController().signal,
  );
  const source = new SourceDownload(opened, path.join(dir, `${name}-${sources.length}`), 1 << 30);
  sources.push(source);
  return { source, url: relay.register(source).url };
}

describe("the relay", () => {
  test("isRelayUrl tells a relay's URLs (as bench/engine.ts finds them in traced commands) from others", () => {
    const slot = relay.reserve();
    try {
      expect(relay.names(slot.url)).toBe(true);
      expect(isRelayUrl(slot.url)).toBe(true);
      for (const other of [`${slot.url}x`, slot.url.replace("/s/", "/t/"), `${base}/media/${PADDED}`]) {
        expect(isRelayUrl(other), other).toBe(false);
      }
    } finally {
      slot.release();
    }
  });

  test("a probe downloads about what ffprobe reads, not what loopback TCP would buffer", async () => {
    const { source, url } = await relayed(PADDED);
    const probe = await runFfprobe(
      binaries.ffprobe,
      inputProbeArgs("mov", [], url),
      new AbortController().signal,
    );
    expect(probe.streams?.map((s) => s.codec_type).sort()).toEqual(["audio", "video"]);
    // ffprobe reads 32 KiB of it; the download runs 256 KiB ahead of what the relay sent (2.2 MB before).
    expect(source.receivedBytes).toBeLessThan(1 * MiB);
    expect(source.receivedBytes).toBeLessThan(total);
  });

  test("a ranged read gets a bounded part; one that continues it, twice as much, up to the rest past 4 MiB", async () => {
    const { url } = await relayed(PADDED);
    const part = async (range?: string) => {
      const res = await fetch(url, range === undefined ? {} : { headers: { range } });
      const body = await res.arrayBuffer();
      return { status: res.status, range: res.headers.get("content-range"), bytes: body.byteLength };
    };
    expect(await part("bytes=0-")).toEqual({ status: 206, range: `bytes 0-262143/${total}`, bytes: 262144 });
    expect(await part("bytes=262144-")).toEqual({
      status: 206,
      range: `bytes 262144-786431/${total}`,
      bytes: 524288,
    });
    expect(await part("bytes=786432-")).toEqual({
      status: 206,
      range: `bytes 786432-1835007/${total}`,
      bytes: 1048576,
    });
    expect(await part("bytes=1835008-")).toMatchObject({ range: `bytes 1835008-3932159/${total}` });
    expect(await part("bytes=3932160-")).toMatchObject({ range: `bytes 3932160-8126463/${total}` });
    // Past 4 MiB parts the reader streams the file: the rest in one answer.
    expect(await part("bytes=8126464-")).toMatchObject({ range: `bytes 8126464-${total - 1}/${total}` });
    // A read from an offset no part ended at starts small again; an explicit end is kept within.
    expect(await part("bytes=5000000-")).toMatchObject({ range: `bytes 5000000-5262143/${total}` });
    expect(await part("bytes=100-199")).toMatchObject({ range: `bytes 100-199/${total}`, bytes: 100 });
    // A read without a range (not ffmpeg's) gets the whole file, as before.
    expect(await part()).toEqual({ status: 200, range: null, bytes: total });
  });

  test("after the download failed, a read it cannot serve is cut short and recorded; the next is refused", async () => {
    // /short/ declares the whole length and closes after half of it.
    const opened = await openSource(
      `${base}/short/${FIXTURES.long}`,
      "source_url",
      policy,
      1 << 30,
      new AbortController().signal,
    );
    const source = new SourceDownload(opened, path.join(dir, `short-${sources.length}`), 1 << 30);
    sources.push(source);
    const { url } = relay.register(source);
    await source.complete().catch(() => {});
    expect(source.error?.code).toBe("SOURCE_UNREACHABLE");
    const read = async (range: string) => {
      // A response cut off fails the fetch or its body, depending on when the relay closed it.
      const res = await fetch(url, { headers: { range } }).catch(() => null);
      const bytes = await (res?.arrayBuffer().then((b) => b.byteLength) ?? Promise.resolve(-1)).catch(
        () => -1,
      );
      return { status: res?.status ?? 0, bytes };
    };
    // Past what reached the disk: the part is cut off, and the source records a reader cut short.
    expect((await read(`bytes=${source.written}-`)).bytes).toBeLessThan(262144);
    expect(source.readerCutShort).toBe(source.error);
    // ffmpeg's next request (-reconnect) is refused, so it stops on the short read and the job fails.
    expect(await read("bytes=0-")).toEqual({ status: 502, bytes: 0 });
  });

  test("ffmpeg reading a whole source part by part gets every byte of it", async () => {
    // Stream copy of every packet, compared with the same from the file: the parts join without a gap.
    const md5 = async (input: string[]) =>
      (await exec(binaries.ffmpeg, ["-v", "error", ...input, "-map", "0", "-c", "copy", "-f", "md5", "-"]))
        .stdout;
    const { url } = await relayed(FIXTURES.long);
    const fromRelay = await md5(mediaInputArgs("mov", url));
    expect(fromRelay).toMatch(/^MD5=[0-9a-f]{32}/);
    expect(fromRelay).toBe(await md5(mediaInputArgs("mov", `file:${fixturePath(FIXTURES.long)}`)));
  });
});
