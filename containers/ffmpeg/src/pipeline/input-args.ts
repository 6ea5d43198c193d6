/**
 * The input arguments of ffmpeg and ffprobe commands: how a source is read (bounded probing, the sniffed
 * demuxer forced, only the protocol its reference needs), and commands with their source as a placeholder, so
 * that the same command reading the relay URL or the downloaded file is one shape (speculate.ts,
 * warm-ffmpeg.ts). A module of its own so that job.ts and the warm processes (warm-probe.ts, warm-ffmpeg.ts),
 * which job.ts hands to every job, both use it without importing each other.
 */
import { LIMITS } from "../security/limits.ts";

/**
 * ffmpeg/ffprobe input arguments of a sniffed audio/video source read from `ref` (a relay URL or
 * file:<path>): bounded probing, the sniffed demuxer forced, and only the protocol `ref` needs.
 */
export function mediaInputArgs(demuxer: string, ref: string, before: readonly string[] = []): string[] {
  return [
    ...["-probesize", String(LIMITS.probeSizeBytes), "-analyzeduration", String(LIMITS.analyzeDurationUs)],
    // Video decoders refuse frames beyond the cap, even when the resolution grows after the probe looked
    // (`:V`: not cover art, which an audio file may carry at any size).
    ...["-max_pixels:V", String(LIMITS.maxVideoPixels), "-f", demuxer, ...before],
    ...inputProtocolArgs(ref),
    ...["-i", ref],
  ];
}

/**
 * How ffmpeg may read `ref`: only the file, or HTTP to the relay. The relay answers a read in bounded parts
 * (relay.ts), so that it sends no more than the reader takes: `-reconnect` asks for the next part at the
 * end of each, and `-reconnect_delay_max 0` gives up at once when the relay refuses (a failed download)
 * instead of retrying for minutes.
 */
export const inputProtocolArgs = (ref: string): string[] =>
  ref.startsWith("file:")
    ? ["-protocol_whitelist", "file"]
    : ["-reconnect", "1", "-reconnect_delay_max", "0", "-protocol_whitelist", "http,tcp"];

/** Placeholders of a command's source and of its protocol options (NUL cannot occur in an argument). */
export const SOURCE_ARG = "\u0000source";
export const PROTOCOL_ARG = "\u0000protocol";

/**
 * `args` with the job's source (any of `refs`: its relay URL or its file) replaced by a placeholder, and
 * the protocol options that mediaInputArgs puts before its `-i` by one other: the same command whichever
 * way it reads the source. Fill PROTOCOL_ARG with `inputProtocolArgs` of the new source.
 */
export function withSourcePlaceholders(args: readonly string[], refs: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (refs.includes(a)) {
      const group = inputProtocolArgs(a);
      const start = out.length - 1 - group.length;
      if (out.at(-1) === "-i" && start >= 0 && group.every((g, k) => out[start + k] === g)) {
        out.splice(start, group.length, PROTOCOL_ARG);
      }
      out.push(SOURCE_ARG);
    } else out.push(a);
  }
  return out;
}

/** `template` (from withSourcePlaceholders) reading `ref`: its placeholders, and any of `more`, filled. */
export function fillSourcePlaceholders(
  template: readonly string[],
  ref: string,
  more: ReadonlyMap<string, string> = new Map(),
): string[] {
  return template.flatMap((a) =>
    a === PROTOCOL_ARG ? inputProtocolArgs(ref) : a === SOURCE_ARG ? [ref] : [more.get(a) ?? a],
  );
}

/** The arguments of the input probe of a source read from `ref`, after ffprobe's own leading ones. */
export function inputProbeArgs(demuxer: string, extra: readonly string[], ref: string): string[] {
  return ["-show_format", "-show_streams", ...extra, ...mediaInputArgs(demuxer, ref)];
}
