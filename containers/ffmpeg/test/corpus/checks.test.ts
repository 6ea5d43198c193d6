/**
 * The corpus checker's own truth (checks.ts, mp4-tables.ts), on made-up frame lists and MP4 tables: the frame
 * shown at `start` is the last one whose stored time is at or before it (no fraction of a frame of
 * tolerance), a frame starting before `end` is expected, and an MP4's video end is its tables' (stts, ctts,
 * elst), not ffmpeg 5.1's reading of them. Each check still flags the deliberately wrong output beside the
 * right one.
 */
import { describe, expect, test } from "vitest";
import { compareFrames, expectedWindow, Findings } from "./checks.ts";
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

  test("fragmented or non-MP4 input is not read", () => {
    expect(presentationOf(Buffer.concat([box("ftyp", Buffer.from("isom")), box("moof")]), 0)).toBeNull();
    expect(presentationOf(Buffer.from("OggS not an mp4"), 0)).toBeNull();
  });
});
