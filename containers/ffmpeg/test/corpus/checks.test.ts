/**
 * The corpus checker's own truth (checks.ts, mp4-tables.ts), on made-up frame lists and MP4 tables: the frame
 * shown at `start` is the last one whose stored time is at or before it (no fraction of a frame of
 * tolerance), a frame starting before `end` is expected, and an MP4's video end is its tables' (stts, ctts,
 * elst), not ffmpeg 5.1's reading of them; so is an MP4's audio end (files made here with ffmpeg). Each check
 * still flags the deliberately wrong output beside the right one.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resolveBinaries } from "../../src/config.ts";
import {
  checkAudioTrack,
  compareFrames,
  expectedWindow,
  Findings,
  measureMedia,
  measureSource,
  pastWindowEnd,
  type SourceInfo,
} from "./checks.ts";
import type { Frame } from "./measure.ts";
import { presentationOf } from "./mp4-tables.ts";

const frames = (times: number[], d: number): Frame[] => times.map((t, n) => ({ t, d, n }));
/** Frames at k / rate from k0 to k1, rounded as ffprobe prints them. */
const grid = (k0: number, k1: number, step: number, decimals = 6) =>
  Array.from({ length: k1 - k0 + 1 }, (_, i) => Number(((k0 + i) * step).toFixed(decimals)));

/** Runs compareFrames on an output given as times (its last frame held until `end`). */
function verdict(src: Frame[], from: number, to: number, out: number[], outEnd: number, tol: number) {
  const sv = { frames: src, end: src[src.length - 1]!.t + src[src.length - 1]!.d! };
  const exp = expectedWindow(sv, from, to);
  const f = new Findings();
  compareFrames(sv, { frames: frames(out, 0), end: outEnd }, exp, tol, f);
  return { exp, why: f.why };
}

describe("the frame shown at start (short.ogv trim {1.728, 3.455}: Theora at 1/30 s)", () => {
  const src = frames(grid(0, 172, 1 / 30), 1 / 30);
  // The checker's tolerance there: a quarter frame (8.3 ms).
  const tol = 1 / 30 / 4;
  const rest = (first: number) => grid(first, 103, 1 / 30).map((t) => Number((t - 1.728).toFixed(6)));

  test("is the 1.700 s frame, at 0; each later one at its time − start", () => {
    const { exp, why } = verdict(src, 1.728, 3.455, [0, ...rest(52)], 3.455 - 1.728, tol);
    expect(src[exp.src[0]!]!.t).toBe(1.7);
    expect(exp.t[1]).toBeCloseTo(1.733333 - 1.728, 6);
    expect(why).toEqual([]);
  });

  test("an output starting one frame late (the 1.7333 s frame at 0) is flagged", () => {
    const late = [0, ...rest(53)];
    const { why } = verdict(src, 1.728, 3.455, late, 3.455 - 1.728, tol);
    expect(why.join()).toMatch(/^\[frames\] frame 1 at 0\.039 s, expected the source's 1\.733 s frame/);
  });

  test("an output that drops the frame shown at start is flagged", () => {
    const { why } = verdict(src, 1.728, 3.455, rest(52), 3.455 - 1.728, tol);
    expect(why.join()).toMatch(/^\[frames\] frame 1 at 0\.039 s, .* \(52 frames for 53\)/);
  });
});

describe("frames near end (matroska-test5-short.mkv trim {0.605, 1.21}: 24 fps in 1/1000 s)", () => {
  const src = frames(grid(0, 47, 1 / 24, 3), 0.041);
  const tol = 0.0025;
  const inWindow = src.filter((f) => f.t >= 0.625 && f.t < 1.21).map((f) => Number((f.t - 0.605).toFixed(3)));

  test("the 1.208 s frame, shown for the window's last 2 ms, is expected and the output keeping it is ok", () => {
    const { exp, why } = verdict(src, 0.605, 1.21, [0, ...inWindow], 0.605, tol);
    expect(src[exp.src[exp.src.length - 1]!]!.t).toBe(1.208);
    expect(exp.t.length).toBe(16);
    expect(why).toEqual([]);
  });

  test("an output without it is flagged", () => {
    const { why } = verdict(src, 0.605, 1.21, [0, ...inWindow.slice(0, -1)], 0.605, tol);
    expect(why.join()).toMatch(/^\[frames\] frame 15 missing, expected the source's 1\.208 s frame/);
  });

  test("an output keeping the 1.250 s frame, which starts after end, is flagged", () => {
    const { why } = verdict(src, 0.605, 1.21, [0, ...inWindow, 0.645], 0.686, tol);
    expect(why).toContain("[frames] 1 frames more than the source's 16, from 0.645 s");
    expect(why.join()).toMatch(/\[end\] video shown until 0\.686 s, the window ends at 0\.605 s/);
  });
});

describe("frames a copy's edit list may hide (h264-ac3.mp4 fast {0.901, 1.801}: 15 fps, from the 0 s keyframe)", () => {
  const src = frames(grid(0, 44, 1 / 15), 1 / 15);
  const sv = { frames: src, end: 3 };
  const exp = expectedWindow(sv, 0, 1.801);
  const tol = 0.0015 + 1 / 15360 + 1 / 15360;

  test("the 1.800 s frame, shown for the window's last millisecond, is the window's", () => {
    expect(exp.t.at(-1)).toBeCloseTo(1.8, 6);
    expect(pastWindowEnd(1.8, exp, tol)).toBe(false);
  });

  test("the 1.867 s reference frame after end is past it", () => {
    expect(pastWindowEnd(1.866667, exp, tol)).toBe(true);
  });
});

// A minimal MP4: moov(mvhd, trak(edts(elst), mdia(mdhd, minf(stbl(stts, ctts))))).
const box = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, "latin1");
  return Buffer.concat([head, body]);
};
const u32 = (...ns: number[]) => {
  const b = Buffer.alloc(4 * ns.length);
  for (const [i, n] of ns.entries()) {
    if (n < 0) b.writeInt32BE(n, i * 4);
    else b.writeUInt32BE(n, i * 4);
  }
  return b;
};
/** version 0 mvhd/mdhd: flags, creation, modification, timescale, duration. */
const header = (type: string, scale: number) => box(type, u32(0, 0, 0, scale, 0), Buffer.alloc(80));
function mp4(o: {
  movieScale: number;
  mediaScale: number;
  stts: [number, number][];
  ctts?: [number, number][];
  elst: [number, number][];
}): Buffer {
  const stts = box("stts", u32(0, o.stts.length, ...o.stts.flat()));
  const ctts = o.ctts === undefined ? Buffer.alloc(0) : box("ctts", u32(0, o.ctts.length, ...o.ctts.flat()));
  const elst = box("elst", u32(0, o.elst.length), ...o.elst.map(([d, m]) => u32(d, m, 0x10000)));
  const stbl = box("stbl", stts, ctts);
  const trak = box("trak", box("edts", elst), box("mdia", header("mdhd", o.mediaScale), box("minf", stbl)));
  return Buffer.concat([box("ftyp", Buffer.from("isom")), box("moov", header("mvhd", o.movieScale), trak)]);
}

describe("an MP4's video end by its own tables", () => {
  test("fixture.webm's watermark: one 3780/90000 s sample after an empty 3 ms edit lasts 0.003–0.045 s", () => {
    const file = mp4({
      movieScale: 1000,
      mediaScale: 90000,
      stts: [[1, 3780]],
      elst: [
        [3, -1],
        [42, 0],
      ],
    });
    const p = presentationOf(file, 0)!;
    expect(p.frames.length).toBe(1);
    expect(p.frames[0]!.t).toBeCloseTo(0.003, 9);
    expect(p.end).toBeCloseTo(0.045, 9);
    // Against a source ending at 0.045 s: ok; an output whose sample lasts 5 ms more is flagged.
    const src = frames([0.003], 0.042);
    const check = (end: number) => {
      const f = new Findings();
      compareFrames(
        { frames: src },
        { frames: frames([0.003], 0.042), end },
        expectedWindow({ frames: src, end: 0.045 }, 0, 0.045),
        0.002,
        f,
      );
      return f.why;
    };
    expect(check(p.end)).toEqual([]);
    const longer = presentationOf(
      mp4({
        movieScale: 1000,
        mediaScale: 90000,
        stts: [[1, 4230]],
        elst: [
          [3, -1],
          [47, 0],
        ],
      }),
      0,
    )!;
    expect(check(longer.end).join()).toMatch(
      /^\[end\] video shown until 0\.050 s, the window ends at 0\.045 s/,
    );
  });

  test("fixture.mov: an edit from 3706/6000 s for 594/6000 s shows six samples from 0 to 0.099 s", () => {
    // Samples of 100/6000 s at composition times 0, 100, … 4400; the edit shows [3706, 4300) of the media.
    const file = mp4({
      movieScale: 6000,
      mediaScale: 6000,
      stts: [[45, 100]],
      ctts: [[45, 0]],
      elst: [[594, 3706]],
    });
    const p = presentationOf(file, 0)!;
    expect(p.frames.length).toBe(6);
    expect(p.frames[0]).toEqual({ t: 0, end: (3800 - 3706) / 6000 });
    expect(p.frames[5]!.t).toBeCloseTo((4200 - 3706) / 6000, 9);
    expect(p.end).toBeCloseTo(0.099, 9);
  });

  test("without an edit list, a B-frame track ends where its last composition time's sample does", () => {
    // Decode order I P B B: composition 1, 4, 2, 3 (×1000 in a 1/24000 scale), each lasting 1000.
    const file = mp4({
      movieScale: 1000,
      mediaScale: 24000,
      stts: [[4, 1000]],
      ctts: [
        [1, 1000],
        [1, 3000],
        [2, 0],
      ],
      elst: [],
    });
    const p = presentationOf(file, 0)!;
    expect(p.frames.map((f) => f.t * 24)).toEqual([1, 2, 3, 4]);
    expect(p.end * 24).toBeCloseTo(5, 9);
  });

  test("a file without its moov, or not an MP4, is not read", () => {
    expect(presentationOf(Buffer.concat([box("ftyp", Buffer.from("isom")), box("moof")]), 0)).toBeNull();
    expect(presentationOf(Buffer.from("OggS not an mp4"), 0)).toBeNull();
  });
});

/**
 * The audio of an MP4 ends where its own tables end it (stts through the edit list), not where ffmpeg 5.1's
 * last pkt_duration does: after an empty edit its MOV demuxer shortens that packet by the edit's length
 * (matroska-test5-short.mkv's watermark: AAC after a 12 ms empty edit, last packet 448 ticks for 1,024).
 * Files made here: the truth is the source's decoded samples; the outputs are the same AAC packets in MP4.
 */
describe("an MP4's audio end by its own tables", () => {
  const bins = resolveBinaries(process.env);
  let dir = "";
  const ffmpeg = (...args: string[]) => {
    const r = spawnSync(bins.ffmpeg, ["-v", "error", "-nostdin", "-y", ...args], { cwd: dir });
    if (r.status !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${r.stderr}`);
  };
  // A chirp: cross-correlation finds one position only.
  const chirp = (rate: number, d: number) => `aevalsrc=sin(2*PI*(200+400*t)*t):s=${rate}:d=${d}`;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "p6-checks-audio-"));
    // The row's kind of file: video from 0, AAC (48 kHz, no priming declared) from 12 ms, in Matroska; the
    // output copies both into MP4, whose audio track gets a 12 ms empty edit and an edit over every sample.
    ffmpeg("-f", "lavfi", "-i", chirp(48000, 2), "-c:a", "aac", "a.aac");
    ffmpeg("-f", "lavfi", "-i", "testsrc=d=2:r=24:s=64x48", "-c:v", "mpeg4", "v.mkv");
    ffmpeg(
      ...["-i", "v.mkv", "-itsoffset", "0.012", "-i", "a.aac", "-map", "0:v", "-map", "1:a"],
      "-c",
      "copy",
      "src.mkv",
    );
    ffmpeg("-i", "src.mkv", "-map", "0", "-c", "copy", "delayed.mp4");
    // 1 s at 8 kHz in AAC: 1024 samples of priming and 1024 − 8000 % 1024 = 192 of padding in the last frame,
    // declared by ffmpeg's tables (edit from media time 1024 for 1000 ms; the last sample lasts 832 ticks).
    ffmpeg("-f", "lavfi", "-i", chirp(8000, 1), "-c:a", "pcm_s16le", "w8.wav");
    ffmpeg("-i", "w8.wav", "-c:a", "aac", "aac8k.m4a");
    ffmpeg("-i", "w8.wav", "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov", "aac8k-frag.m4a");
  }, 60_000);
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The same file with its audio track's last edit lasting `ms` (movie time scale 1000 here) and, given
   * `lastDelta`, its last sample (a one-sample last stts entry) lasting that many ticks.
   */
  function withTables(name: string, ms: number, lastDelta?: number): string {
    const buf = readFileSync(path.join(dir, name));
    const find = (type: string) => {
      const at = buf.indexOf(type, buf.indexOf("soun") - 400);
      expect(at).toBeGreaterThan(0);
      return at + 4; // the payload: version and flags, entry count, entries
    };
    const elst = find("elst");
    buf.writeUInt32BE(ms, elst + 8 + (buf.readUInt32BE(elst + 4) - 1) * 12);
    if (lastDelta !== undefined) {
      const stts = find("stts");
      const last = stts + 8 + (buf.readUInt32BE(stts + 4) - 1) * 8;
      expect(buf.readUInt32BE(last)).toBe(1);
      buf.writeUInt32BE(lastDelta, last + 4);
    }
    const out = `${name}.${ms}.${lastDelta ?? ""}.m4a`;
    writeFileSync(path.join(dir, out), buf);
    return out;
  }

  async function audioWhy(srcName: string, outName: string, role: "output" | "video-output") {
    const src = (await measureSource(bins, srcName, path.join(dir, srcName))) as SourceInfo;
    const out = (await measureMedia(bins, path.join(dir, outName), role))!;
    const f = new Findings();
    await checkAudioTrack(bins, src, out, path.join(dir, outName), 0, src.audio!.end, f, "audio");
    return { why: f.why, src, out };
  }

  test("AAC after a 12 ms empty edit, every sample shown: ends where the source's does (ok)", async () => {
    const { why, src, out } = await audioWhy("src.mkv", "delayed.mp4", "video-output");
    // 95 frames of 1024 samples (priming included: ADTS declares none) from 0.012 s.
    expect(src.audio!.end).toBeCloseTo(0.012 + (95 * 1024) / 48000, 3);
    expect(why).toEqual([]);
    expect(out.audio!.tablesEnd).toBeCloseTo(0.012 + (95 * 1024) / 48000, 3);
  }, 60_000);

  test("AAC at 8 kHz with its priming and padding declared: ok", async () => {
    const { why, out } = await audioWhy("w8.wav", "aac8k.m4a", "output");
    // 9 frames: 1024 samples of priming, 8000 of signal; ffmpeg 5.1 decodes the last one whole.
    expect(out.audio!.track.decodedEnd).toBeCloseTo(1.024, 6);
    expect(out.audio!.end).toBeCloseTo(1, 6);
    expect(why).toEqual([]);
  }, 60_000);

  test("AAC whose last frame's padding is not declared (stts 1024 ticks, an edit over all 8192) is flagged", async () => {
    const { why } = await audioWhy("w8.wav", withTables("aac8k.m4a", 1024, 1024), "output");
    expect(why.join()).toMatch(/^\[audio-length\] audio ends at 1\.024 s, .*ends at 1\.000/);
  }, 60_000);

  test("fragmented AAC ends where its last trun sample does, not one frame on (ffmpeg's pkt_duration)", async () => {
    // No edit list in this fragmented file: 1024 samples of priming + 8000 + 192 of padding, whose last
    // frame's trun entry states 832 ticks; ffmpeg 5.1 gives that packet 1,024.
    const out = (await measureMedia(bins, path.join(dir, "aac8k-frag.m4a"), "output"))!;
    expect(out.audio!.track.decodedEnd - out.audio!.track.first).toBeCloseTo(9216 / 8000, 6);
    expect(out.audio!.tablesEnd).toBeCloseTo(9024 / 8000, 6);
    expect(out.audio!.end - out.audio!.start).toBeCloseTo(9024 / 8000, 6);
    // Its video, where there is one, is not read from the truns (measureMedia: ffmpeg's frame times).
    expect(presentationOf(readFileSync(path.join(dir, "aac8k-frag.m4a")), 0, false)).toBeNull();
  }, 60_000);

  test("the same AAC with an edit ending 100 ms early is flagged", async () => {
    const { why } = await audioWhy("w8.wav", withTables("aac8k.m4a", 900), "output");
    expect(why.join()).toMatch(/^\[audio-length\] audio ends at 0\.900 s, .*ends at 1\.000/);
  }, 60_000);
});

/**
 * An Ogg Vorbis stream's end by its last granule position (ogg-pages.ts). vp8-vorbis.webm audio.trim of the
 * media matrix cut [0.907, 1.814) to one Ogg page declaring 43,536 samples (0.907 s at 48 kHz), which
 * libvorbisfile decodes to exactly that; ffmpeg 5.1 decodes 112 more (it applies the end trim only when the
 * first audio page is not the last). Files made here: 0.907 s of a chirp, one audio page; 3 s, several.
 */
describe("an Ogg Vorbis stream's end by its last granule position", () => {
  const bins = resolveBinaries(process.env);
  let dir = "";
  const ffmpeg = (...args: string[]) => {
    const r = spawnSync(bins.ffmpeg, ["-v", "error", "-nostdin", "-y", ...args], { cwd: dir });
    if (r.status !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${r.stderr}`);
  };
  const chirp = (d: number) => `aevalsrc=sin(2*PI*(200+400*t)*t):s=48000:d=${d}`;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "p6-checks-ogg-"));
    ffmpeg("-f", "lavfi", "-i", chirp(0.907), "-c:a", "pcm_s16le", "short.wav");
    ffmpeg("-i", "short.wav", "-c:a", "libvorbis", "-q:a", "6", "short.ogg");
    ffmpeg("-f", "lavfi", "-i", chirp(3), "-c:a", "libvorbis", "-q:a", "6", "long.ogg");
  }, 60_000);
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  test("one audio page: ends at its granule (0.907 s), not where ffmpeg 5.1's decode does", async () => {
    const out = (await measureMedia(bins, path.join(dir, "short.ogg"), "output"))!;
    expect(out.audio!.track.samples).toBeGreaterThan(43536);
    expect(out.audio!.end - out.audio!.start).toBeCloseTo(0.907, 6);
    const src = (await measureSource(bins, "short.wav", path.join(dir, "short.wav"))) as SourceInfo;
    const f = new Findings();
    await checkAudioTrack(bins, src, out, path.join(dir, "short.ogg"), 0, src.audio!.end, f, "audio");
    expect(f.why).toEqual([]);
  }, 60_000);

  test("several pages: ffmpeg 5.1 trims as declared, and so does the check (3 s)", async () => {
    const out = (await measureMedia(bins, path.join(dir, "long.ogg"), "output"))!;
    expect(out.audio!.track.samples).toBe(144000);
    expect(out.audio!.end - out.audio!.start).toBeCloseTo(3, 6);
  }, 60_000);
});
