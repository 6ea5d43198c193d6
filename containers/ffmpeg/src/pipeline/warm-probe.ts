/**
 * Warm ffprobe processes for the input probe.
 *
 * Every audio/video job starts with ffprobe, and a Debian ffprobe spends about 100 ms (here) starting up,
 * mapping and initialising its 200-odd shared libraries, before it reads a byte: most of a short job's
 * overhead. So the engine keeps a few ffprobe processes already started, each running the input probe
 * command (`inputProbeArgs`, no extra arguments) for one demuxer on a reserved relay URL that no source is
 * bound to yet (relay.ts `reserve`): the process waits on its first read. A job whose source has that
 * demuxer binds its source to the URL and reads the answer; the command is exactly the one a cold start
 * would run (only the URL differs), so the answer is the same.
 *
 * At most `max` processes wait at any time, one per demuxer, the least recently wanted making room. A job
 * refills its demuxer after it ends (`refill`, deferred by the job), so a new process never competes with
 * the job for CPU. A waiting process that exits on its own is replaced unless it lived under 5 s.
 */
import { adopt, type ProbeOutput, startWarmFfprobe, type WarmFfprobe } from "./ffmpeg.ts";
import { inputProbeArgs } from "./job.ts";
import type { Relay, RelaySlot } from "./relay.ts";
import type { SourceDownload } from "./source.ts";

interface Waiting {
  demuxer: string;
  slot: RelaySlot;
  stop: AbortController;
  probe: WarmFfprobe;
  startedAt: number;
}

const MIN_LIFETIME_MS = 5000;

export class WarmProbes {
  /** Waiting processes by demuxer, least recently wanted first. */
  private readonly waiting = new Map<string, Waiting>();
  private closed = false;

  private readonly ffprobe: string;
  private readonly relay: Relay;
  readonly max: number;

  constructor(ffprobe: string, relay: Relay, max: number) {
    this.ffprobe = ffprobe;
    this.relay = relay;
    this.max = max;
  }

  /**
   * The input probe of `source` (sniffed as `demuxer`) by a waiting process, or null when none waits for
   * this demuxer (the caller runs ffprobe itself). `signal` kills the process like a job's own.
   */
  take(demuxer: string, source: SourceDownload, signal: AbortSignal): Promise<ProbeOutput> | null {
    const w = this.waiting.get(demuxer);
    if (w === undefined || signal.aborted) return null;
    if (w.probe.child.exitCode !== null || w.probe.child.signalCode !== null) {
      this.dismiss(w); // it ended on its own a moment ago; the job's refill starts another
      return null;
    }
    this.waiting.delete(demuxer);
    adopt(w.probe.child, this.ffprobe, w.probe.args);
    const kill = () => w.stop.abort(signal.reason);
    signal.addEventListener("abort", kill, { once: true });
    w.slot.bind(source);
    return w.probe.output.finally(() => {
      signal.removeEventListener("abort", kill);
      w.slot.release();
    });
  }

  /** Starts a process for `demuxer` unless one waits already (making room when `max` are waiting). */
  refill(demuxer: string): void {
    if (this.closed || this.max === 0) return;
    const current = this.waiting.get(demuxer);
    if (current !== undefined) {
      // Most recently wanted: to the end of the eviction order.
      this.waiting.delete(demuxer);
      this.waiting.set(demuxer, current);
      return;
    }
    while (this.waiting.size >= this.max) {
      const [oldest] = this.waiting.values();
      if (oldest === undefined) break;
      this.dismiss(oldest);
    }
    const slot = this.relay.reserve();
    const stop = new AbortController();
    const probe = startWarmFfprobe(this.ffprobe, inputProbeArgs(demuxer, [], slot.url), stop.signal);
    if (probe === null) {
      slot.release();
      return;
    }
    const w: Waiting = { demuxer, slot, stop, probe, startedAt: performance.now() };
    this.waiting.set(demuxer, w);
    probe.output.then(
      () => this.exitedWhileWaiting(w),
      () => this.exitedWhileWaiting(w),
    );
  }

  /** Process ids of the processes waiting now (not yet any job's). */
  pids(): number[] {
    return [...this.waiting.values()].flatMap((w) =>
      w.probe.child.pid === undefined ? [] : [w.probe.child.pid],
    );
  }

  /** The demuxers a process waits for now, least recently wanted first. */
  demuxers(): string[] {
    return [...this.waiting.keys()];
  }

  /** Stops every waiting process; nothing starts afterwards. */
  close(): void {
    this.closed = true;
    for (const w of [...this.waiting.values()]) this.dismiss(w);
  }

  private dismiss(w: Waiting): void {
    if (this.waiting.get(w.demuxer) === w) this.waiting.delete(w.demuxer);
    w.stop.abort(new Error("warm ffprobe dismissed"));
    w.slot.release();
  }

  private exitedWhileWaiting(w: Waiting): void {
    if (this.waiting.get(w.demuxer) !== w) return; // taken or dismissed
    this.dismiss(w);
    if (performance.now() - w.startedAt >= MIN_LIFETIME_MS) this.refill(w.demuxer);
  }
}
