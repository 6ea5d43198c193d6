/**
 * Running an audio/video job, and for short jobs not waiting for the input probe before ffmpeg starts.
 *
 * A job needs ffprobe's view of its input (streams, codecs, duration, keyframes) to build its command, and
 * ffprobe is a whole process (about 100 ms before it has read a byte). For an MP4 whose index comes first,
 * mp4-guess.ts reads the same facts from the index in Node at once. A job that opts in (`speculate`) is then
 * run twice over:
 *
 * 1. the speculative pass runs the operation on the guess while ffprobe runs; its first ffmpeg starts at
 *    once. The pass ends when that process exits: it may not start a second one, nor go on to what the
 *    operation does with the file written (probe it, edit it in place), which is the real pass's to do on
 *    the same file (a fast trim's two passes both edited its edit list: a corrupt or re-encoded output, run
 *    to run). Everything it returns is thrown away;
 * 2. once ffprobe has answered, the real pass runs the operation on ffprobe's answer, exactly as without
 *    speculation. When its first ffmpeg command is the very command the speculative pass started (same
 *    arguments; the source may be named by its relay URL or its file), it takes that run's outcome instead
 *    of starting it again. Any other command first stops the speculative pass and waits for its process to
 *    exit, so two processes never write the same output.
 *
 * So the result is always the one ffprobe's answer gives; a wrong or missing guess only costs the time
 * saved. The job's signal stops both passes.
 */
import { checkVideoLimits } from "../security/limits.ts";
import type { FfmpegRun } from "./ffmpeg.ts";
import { withSourcePlaceholders } from "./input-args.ts";
import {
  type JobContext,
  type OpenedInput,
  type Output,
  openMediaInput,
  type PreparedMediaJob,
  probeInput,
} from "./job.ts";
import type { MediaInfo } from "./media-info.ts";
import { guessMp4Info } from "./mp4-guess.ts";

/** A command with its source named neutrally (the relay URL and the downloaded file are the same bytes). */
const commandKey = (args: readonly string[], refs: readonly string[]): string =>
  JSON.stringify(withSourcePlaceholders(args, refs));

async function guess(input: OpenedInput): Promise<MediaInfo | null> {
  if (input.sniffed.demuxer !== "mov") return null;
  const { source } = input;
  const total = source.declaredBytes ?? (source.done ? source.written : Number.MAX_SAFE_INTEGER);
  const info = await guessMp4Info((o, l) => source.read(o, l), total).catch(() => null);
  // The index's own frame size beyond the video limits refuses the job now (413), before ffprobe decodes.
  return info && checkVideoLimits(info);
}

/**
 * Opens, probes and runs an audio/video job (speculatively when it allows and the input can be guessed).
 * A run that succeeded although the source failed under one of its readers fails with the source's error
 * (the process took the short read for the end of the file).
 */
export async function runMediaJob(ctx: JobContext, url: string, job: PreparedMediaJob): Promise<Output> {
  return runOnInput(ctx, await openMediaInput(ctx, url), job);
}

/** runMediaJob on an input already opened (a pipeline step's: pipeline/steps.ts). */
export async function runOnInput(
  ctx: JobContext,
  input: OpenedInput,
  job: PreparedMediaJob,
): Promise<Output> {
  const output = await run(job.warm === true ? withWarmCommands(ctx, input) : ctx, input, job);
  const cut = input.source.readerCutShort;
  if (cut !== null) throw cut;
  return output;
}

/**
 * The job's ffmpeg commands run by a waiting process of the same shape when there is one
 * (warm-ffmpeg.ts); after the response, one is started again for each command that succeeded.
 */
function withWarmCommands(ctx: JobContext, input: OpenedInput): JobContext {
  const warm = ctx.warmCommands;
  if (warm === undefined || warm.max === 0) return ctx;
  return {
    ...ctx,
    runFfmpeg: async (args: readonly string[], opts: FfmpegRun) => {
      const shape = warm.shapeOf(args, input.refs, ctx.dir);
      if (shape === null) return ctx.runFfmpeg(args, opts);
      const stderr = await (warm.take(shape, input.source, args.at(-1)!, opts) ?? ctx.runFfmpeg(args, opts));
      ctx.afterResponse(() => warm.refill(shape));
      return stderr;
    },
  };
}

async function run(ctx: JobContext, input: OpenedInput, job: PreparedMediaJob): Promise<Output> {
  const stopProbe = new AbortController();
  const probeCtx = { ...ctx, signal: AbortSignal.any([ctx.signal, stopProbe.signal]) };
  const probe = probeInput(probeCtx, input, job.probeArgs).then(checkVideoLimits);
  probe.catch(() => {}); // awaited below; not unhandled while the guess is read
  let guessed: MediaInfo | null;
  try {
    guessed = job.speculate === true ? await guess(input) : null;
  } catch (err) {
    stopProbe.abort(err);
    await probe.catch(() => {});
    throw err;
  }
  if (guessed === null) return job.run(ctx, { ...input, info: await probe });

  const stop = new AbortController();
  const specSignal = AbortSignal.any([ctx.signal, stop.signal]);
  let started: { key: string; run: Promise<string> } | null = null;
  let open = true;
  const specCtx: JobContext = {
    ...ctx,
    signal: specSignal,
    runFfmpeg: (args: readonly string[], opts: FfmpegRun) => {
      if (!open || started !== null) return Promise.reject(new Error("speculation is over"));
      const run = ctx.runFfmpeg(args, { ...opts, signal: specSignal });
      run.catch(() => {});
      started = { key: commandKey(args, input.refs), run };
      // Its output is the real pass's once that takes the run: nothing more of this pass touches it.
      return run.then(() => Promise.reject(new Error("speculation is over")));
    },
  };
  const speculative = job.run(specCtx, { ...input, info: guessed }).then(
    () => {},
    () => {},
  );
  const abandon = async () => {
    stop.abort(new Error("speculation abandoned"));
    await speculative;
  };

  let info: MediaInfo;
  try {
    info = await probe;
  } catch (err) {
    await abandon();
    throw err;
  }
  open = false;
  let candidate: { key: string; run: Promise<string> } | null = started;
  const realCtx: JobContext = {
    ...ctx,
    runFfmpeg: async (args: readonly string[], opts: FfmpegRun) => {
      const hit = candidate;
      candidate = null;
      if (hit !== null && hit.key === commandKey(args, input.refs)) return hit.run;
      await abandon();
      return ctx.runFfmpeg(args, opts);
    },
  };
  try {
    return await job.run(realCtx, { ...input, info });
  } finally {
    await abandon();
  }
}
