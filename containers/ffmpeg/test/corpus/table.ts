/**
 * The params table of the corpus run: which operations run on which file, with which params. Defaults come
 * from the source's own measurements (trims inside its duration, covers at a time inside it); the
 * reproductions of ../shared/notes/corpus-findings.md are added per file.
 */
import type { StreamsFacts } from "./measure.ts";

export type Op =
  | "video.probe"
  | "video.extract-cover"
  | "video.trim"
  | "audio.trim"
  | "video.extract-audio"
  | "video.watermark";

export interface Run {
  op: Op;
  params: Record<string, unknown>;
  /** Short label for the table column, e.g. "trim fast". */
  label: string;
}

/** Files the engine never sees as audio/video (the Worker's image path, or not media at all). */
export const NOT_AV = /\.(jpe?g|png|webp|gif|heic|tsv)$/i;

/** Extra runs per file: reproductions of known defects (issue 12, then issue 29's classes A–I). */
const EXTRA: Record<string, Run[]> = {
  // A: accurate windows starting between two frame times, or inside one long frame.
  "av1-aac.mp4": [{ op: "video.trim", params: { start: 1.216, duration: 0.75 }, label: "trim 1.216+0.75" }],
  "fixture-imovie.mp4": [
    { op: "video.trim", params: { start: 0.01, duration: 0.02 }, label: "trim 0.01+0.02" },
  ],
  "fixture.avi": [{ op: "video.trim", params: { start: 0.021, duration: 0.013 }, label: "trim 0.021+0.013" }],
  "fixture.mov": [{ op: "video.trim", params: { start: 0.017, duration: 0.025 }, label: "trim 0.017+0.025" }],
  // B: fast trims past `end`, or starting after the reported keyframe.
  "video.mp4": [
    { op: "video.trim", params: { start: 1.517, end: 3.466, mode: "fast" }, label: "trim fast -3.466" },
  ],
  "fixture-mjpeg.mov": [
    { op: "video.trim", params: { start: 0.75, duration: 0.5, mode: "fast" }, label: "trim fast 0.75+0.5" },
  ],
  // C, E: AAC at low rates in M4A; durations reported for the source; Opus of ALAC.
  "issue-92.wav": [{ op: "video.extract-audio", params: { format: "m4a" }, label: "audio m4a" }],
  "toothsome-vbr.mp3": [{ op: "video.extract-audio", params: { format: "m4a" }, label: "audio m4a" }],
  "fragmented.mp4": [
    { op: "video.extract-audio", params: { format: "m4a" }, label: "audio m4a" },
    { op: "video.extract-audio", params: { format: "opus" }, label: "audio opus" },
  ],
  "alac.m4a": [
    { op: "audio.trim", params: { start: 1, duration: 1 }, label: "audio.trim 1+1" },
    { op: "video.extract-audio", params: { format: "opus" }, label: "audio opus" },
  ],
  "alac-in-matroska.mka": [{ op: "audio.trim", params: { start: 1, duration: 1 }, label: "audio.trim 1+1" }],
  "video-h265.mp4": [
    { op: "audio.trim", params: { start: 2.5, end: 3 }, label: "audio.trim 2.5-3" },
    { op: "audio.trim", params: { start: 1, end: 3 }, label: "audio.trim 1-3" },
  ],
  "vp9-opus.webm": [{ op: "audio.trim", params: { start: 2, duration: 0.5 }, label: "audio.trim 2+0.5" }],
  "sample.flac": [
    { op: "audio.trim", params: { start: 3.943, end: 11.829 }, label: "audio.trim 3.943-11.829" },
  ],
  "fixture2.mkv": [
    { op: "video.trim", params: { start: 226.41, end: 679.229 }, label: "trim 226-679" },
    { op: "video.trim", params: { start: 226.41, end: 679.229, mode: "fast" }, label: "trim fast 226-679" },
  ],
};

const r3 = (s: number) => Math.round(s * 1000) / 1000;

/**
 * The runs for a file, from its measured streams (`duration`: as presented, seconds). One run per operation
 * and path (the machine has two cores): both trim modes, the logo watermark (the mark with the most paths),
 * the default and the original-codec audio extraction, Opus only for surround sources (its layouts).
 */
export function runsFor(name: string, facts: StreamsFacts, duration: number): Run[] {
  const runs: Run[] = [{ op: "video.probe", params: {}, label: "probe" }];
  // A source without a known duration still gets a window: the engine must answer it clearly.
  const window = duration > 0 ? { start: r3(duration * 0.3), end: r3(duration * 0.6) } : { start: 0, end: 1 };
  if (facts.video !== null) {
    runs.push({ op: "video.extract-cover", params: {}, label: "cover" });
    runs.push({ op: "video.trim", params: window, label: "trim" });
    runs.push({ op: "video.trim", params: { ...window, mode: "fast" }, label: "trim fast" });
    runs.push({ op: "video.watermark", params: { watermark_url: "logo" }, label: "wm logo" });
  }
  if (facts.audio !== null) {
    runs.push({ op: "audio.trim", params: window, label: "audio.trim" });
    runs.push({ op: "video.extract-audio", params: {}, label: "audio mp3" });
    runs.push({ op: "video.extract-audio", params: { format: "original" }, label: "audio original" });
    if (facts.audio.channels > 2) {
      runs.push({ op: "video.extract-audio", params: { format: "opus" }, label: "audio opus" });
    }
  }
  return [...runs, ...(EXTRA[name] ?? [])];
}

/**
 * `npm test`'s subset (subset.test.ts), by file and label: runs of small files of different codecs/containers
 * (H.264/AAC MP4 with an edit list, AV1/AAC MP4, VP8/Vorbis WebM, Ogg Opus) that the stricter checks of issue
 * 29 find right on the code they were written against, so a regression shows. Small on purpose: the whole
 * test stays under a minute on this machine.
 */
export const SUBSET: Record<string, readonly string[]> = {
  "edts.mp4": ["probe", "cover", "audio.trim", "trim fast", "audio mp3", "audio original"],
  "av1-aac.mp4": ["probe", "wm logo", "audio.trim", "trim 1.216+0.75", "trim fast"],
  // Not its audio.trim: a 26 ms Vorbis window, reported 26 ms where it decodes 23 ms in some runs and right in
  // others (open; docs/media-support.md "Known defects still open").
  // Its fast trim: libvorbis's first packet kept before 0 and its end padding declared (DiscardPadding).
  "fixture.webm": ["probe", "cover", "wm logo", "trim fast"],
  "audio.opus.ogg": ["audio.trim", "audio mp3"],
  // Issue 29's reproductions that its fixes made right (A, A, B, F, H, and a window after a cut-short file's
  // end refused like the accurate trim): kept here so they stay right.
  "fixture.avi": ["trim 0.021+0.013", "audio.trim"],
  "fixture2.mkv": ["probe", "trim fast 226-679"],
  "small-webm.webm": ["cover", "probe", "trim", "wm logo"],
  // The player's timeline where ffmpeg's differs: a 1/25 s time base (cover, trim), a start below 0 (trim;
  // fast trim: keyframe 0.007, was reported 0.014, video at 0).
  "xvid-mp3.avi": ["cover", "trim", "audio original"],
  "av1-opus.webm": ["trim", "trim fast", "audio original"],
  // Issue 29 B: fast trims of B-frame MP4 ended 1–3 frames before `end`; exact now by an edit list.
  "video.mp4": ["trim fast"],
  // Issue 29 B in Matroska: the last frame lasted a whole frame past `end` (annex-b-avc.mkv) or ended before
  // it (fixture.flv); its BlockDuration ends it there now. matroska-test5-short.mkv: audio that starts 12 ms
  // after the video starts as late in the output.
  "annex-b-avc.mkv": ["trim fast"],
  "fixture.flv": ["trim fast"],
  // The audio rows the sample-position fixes made right (ALAC 1 tick apart, MP3 delay tag, Opus end trim,
  // AC-3 in M4A with its encoder's delay hidden).
  "alac.m4a": ["audio.trim 1+1", "audio original"],
  "ac3.mkv": ["audio.trim"],
  // Right by the semantics, once the checker's truth was: the frame shown at `start` exactly (short.ogv),
  // a frame starting 2 ms before `end` (matroska-test5-short.mkv), an MP4's video end by its own tables
  // (fixture.webm's and fixture.mov's watermarks; docs/media-support.md "Known defects still open").
  "short.ogv": ["trim"],
  // Its fast trim: a B-frame a copy cut in decode order would lose before `end` (1.208 s): encoded again.
  "matroska-test5-short.mkv": ["trim", "trim fast"],
  "fixture.mov": ["wm logo"],
  // AMR-NB, which no encoder here writes: its frames copied into 3GP, the edit list playing exactly the
  // window (was Matroska, cut by 20 ms packets: 5 ms late and 12 ms short; `original` 3 ms early); the fast
  // trim's audio read from that copy, stamped by its samples (was 18 ms early, cut by the source's times).
  "fixture.3gp": ["audio.trim", "audio original", "trim fast"],
};

/**
 * Known open defects (issue 29's classes), by "<file> <label>": one short reproduction per class. The subset
 * test runs them too, prints them, and expects each still wrong (or 5xx), so the list stays true: a fix that
 * makes one right fails the test until its line is taken off here. The whole corpus's are in
 * test-artifacts/corpus.md after `npm run test:corpus`.
 */
export const KNOWN_WRONG: Record<string, string> = {};

/** Whether a run belongs to the subset test (SUBSET or KNOWN_WRONG). */
export const inSubset = (file: string, label: string): boolean =>
  (SUBSET[file]?.includes(label) ?? false) || KNOWN_WRONG[`${file} ${label}`] !== undefined;

/** The files the subset test needs measured. */
export const subsetFiles = (): string[] => [
  ...new Set([...Object.keys(SUBSET), ...Object.keys(KNOWN_WRONG).map((k) => k.slice(0, k.indexOf(" ")))]),
];
