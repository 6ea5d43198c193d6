/**
 * Warm ffmpeg processes for short commands that come again.
 *
 * A cover, an audio cut or extraction and a fast trim take 150–600 ms of ffmpeg work, and ffmpeg spends
 * about 100 ms of it starting up (mapping and initialising its libraries) before it opens its input, as
 * ffprobe does (warm-probe.ts). Commands of the same shape recur: every default cover of an H.264 MP4 is
 * the same command but for its source and its output file. So after a job of an operation that opts in
 * (`PreparedMediaJob.warm`) has run a command, the engine starts that command again with its source on a
 * reserved relay URL that no source is bound to yet and its output in a directory of its own: the process
 * starts up and waits on its first read. The next job whose command has the same shape binds its source to
 * that URL; the process then reads it like a cold one would, and its output file is moved into the job's
 * directory when it has exited. Only the source's spelling (relay URL or file) and the output's directory
 * differ from the cold command, so the output is the same.
 *
 * A command qualifies when its only input is the job's source and the only file of the job it names is its
 * output, its last argument (a watermark's logo or text file does not). A shape is kept warm once it has
 * come a second time among the last 64 shapes run, so one-off commands (a trim at odd times) neither start
 * a process for nothing nor push out one that comes again (a default cover). At most `max` processes wait,
 * one per shape, the least recently run making room (warm-pool.ts); a new one starts only after the job's
 * response, so it never competes with a job for CPU; adopted processes die with their job.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import path from "node:path";
import { type FfmpegRun, startWarmFfmpeg, type WarmFfmpeg } from "./ffmpeg.ts";
import { fillSourcePlaceholders, SOURCE_ARG, withSourcePlaceholders } from "./input-args.ts";
import type { Relay, RelaySlot } from "./relay.ts";
import type { SourceDownload } from "./source.ts";
import { type Warm, WarmPool } from "./warm-pool.ts";

/** Placeholder of a command's output file (with input-args.ts SOURCE_ARG and PROTOCOL_ARG). */
const OUTPUT = "\u0000output";
/** Shapes remembered to tell one that comes again. */
const RECENT_SHAPES = 64;

/** A command without its source and its output's directory: what a waiting process can be taken for. */
export interface CommandShape {
  key: string;
  template: readonly string[];
  /** File name of the output (its extension matters to ffmpeg). */
  outputName: string;
}

interface Waiting extends Warm {
  slot: RelaySlot;
  dir: string;
  stop: AbortController;
  ffmpeg: WarmFfmpeg;
}

export class WarmCommands {
  private readonly pool: WarmPool<Waiting>;
  /** Keys of the shapes run lately, least recently first. */
  private readonly recent = new Set<string>();
  private readonly ffmpeg: string;
  private readonly relay: Relay;
  private readonly root: string;

  /** `root`: the engine's temp directory, where each waiting process gets a directory for its output. */
  constructor(ffmpeg: string, relay: Relay, root: string, max: number) {
    this.ffmpeg = ffmpeg;
    this.relay = relay;
    this.root = root;
    this.pool = new WarmPool(max);
  }

  get max(): number {
    return this.pool.max;
  }

  /**
   * The shape of `args` (ffmpeg arguments after the common leading ones) reading the job's source, named
   * by one of `refs`, and writing its last argument into `dir`; null when the command names anything else
   * of the job (another relay URL, another file of `dir`) or reads the source more than once.
   */
  shapeOf(args: readonly string[], refs: readonly string[], dir: string): CommandShape | null {
    const out = args.at(-1);
    if (out === undefined || path.dirname(out) !== dir) return null;
    const template = withSourcePlaceholders(args, refs);
    template[template.length - 1] = OUTPUT;
    const i = template.indexOf(SOURCE_ARG);
    if (i < 2 || template.lastIndexOf(SOURCE_ARG) !== i || template[i - 1] !== "-i") return null;
    if (template.some((a) => a.includes(dir) || this.relay.names(a))) return null;
    // The output's name is part of the shape: a waiting process writes the name it was started with, and a
    // job moves the file by its own command's name (a fast trim copies into video.mp4 or output.mp4 with
    // otherwise the same arguments, as its source has audio or not: one taken for the other left nothing to
    // move, ENOENT).
    const outputName = path.basename(out);
    return { key: JSON.stringify([...template, outputName]), template, outputName };
  }

  /**
   * Runs a command of `shape` by a waiting process: `source` is bound to its URL and its output moved to
   * `out` once it has exited. Settles like runFfmpeg. Null when none waits (the caller starts ffmpeg).
   */
  take(shape: CommandShape, source: SourceDownload, out: string, opts: FfmpegRun): Promise<string> | null {
    const { signal } = opts;
    if (signal.aborted) return null;
    const w = this.pool.take(shape.key);
    if (w === undefined) return null;
    const kill = () => w.stop.abort(signal.reason);
    signal.addEventListener("abort", kill, { once: true });
    const run = w.ffmpeg.adopt(opts);
    w.slot.bind(source);
    return run
      .then(async (stderr) => {
        await rename(path.join(w.dir, shape.outputName), out);
        return stderr;
      })
      .finally(async () => {
        signal.removeEventListener("abort", kill);
        w.slot.release();
        await rm(w.dir, { recursive: true, force: true });
      });
  }

  /**
   * A command of `shape` has run: starts a process for it if the shape came before (and none waits
   * already), making room when `max` are waiting.
   */
  refill(shape: CommandShape): void {
    const again = this.recent.delete(shape.key);
    this.recent.add(shape.key);
    if (this.recent.size > RECENT_SHAPES) {
      const [oldest] = this.recent;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    if (again) this.pool.refill(shape.key, () => this.start(shape));
  }

  /** Process ids of the processes waiting now (not yet any job's). */
  pids(): number[] {
    return this.pool.pids();
  }

  /** The command lines of the processes waiting now, least recently run first. */
  commands(): string[][] {
    return this.pool.values().map((w) => [...w.ffmpeg.args]);
  }

  /** Stops every waiting process; nothing starts afterwards. */
  close(): void {
    this.pool.close();
  }

  private start(shape: CommandShape): Waiting | null {
    const dir = mkdtempSync(path.join(this.root, "warm-"));
    const slot = this.relay.reserve();
    const stop = new AbortController();
    const args = fillSourcePlaceholders(
      shape.template,
      slot.url,
      new Map([[OUTPUT, path.join(dir, shape.outputName)]]),
    );
    const ffmpeg = startWarmFfmpeg(this.ffmpeg, args, stop.signal);
    if (ffmpeg === null) {
      slot.release();
      rmSync(dir, { recursive: true, force: true });
      return null;
    }
    return {
      child: ffmpeg.child,
      exited: ffmpeg.exited,
      slot,
      dir,
      stop,
      ffmpeg,
      dismiss: () => {
        stop.abort(new Error("warm ffmpeg dismissed"));
        slot.release();
        void ffmpeg.exited.then(() => rm(dir, { recursive: true, force: true }));
      },
    };
  }
}
