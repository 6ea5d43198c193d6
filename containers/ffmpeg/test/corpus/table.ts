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

/** Extra runs per file: reproductions of known defects. */
const EXTRA: Record<string, Run[]> = {
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

/** One file per codec/container for `npm test` (the fast subset): H.264/AAC MP4 with and without an edit
 * list, VP8/Vorbis WebM, FLAC, Ogg Opus, MP3. */
export const FAST_SUBSET = [
  "video.mp4",
  "edts.mp4",
  "fixture.webm",
  "sample.flac",
  "audio.opus.ogg",
  "small-mp3.mp3",
];

/**
 * Defects of issue 12 not fixed yet, by "<file> <label>": the subset test expects them still wrong, so the
 * list stays true. The whole corpus's are in test-artifacts/corpus.md after `npm run test:corpus`.
 */
export const KNOWN_WRONG: Record<string, string> = {};
