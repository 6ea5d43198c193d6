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
 * At most `max` processes wait at any time, one per demuxer, the least recently wanted making room
 * (warm-pool.ts). A job refills its demuxer after its response (`refill`), so a new process never competes
 * with the job for CPU. A waiting process that exits on its own is replaced unless it lived under 5 s.
 */
import { adopt, type ProbeOutput, startWarmFfprobe, type WarmFfprobe } from "./ffmpeg.ts";
import { inputProbeArgs } from "./input-args.ts";
import type { Relay, RelaySlot } from "./relay.ts";
import type { SourceDownload } from "./source.ts";
import { type Warm, WarmPool } from "./warm-pool.ts";

interface Waiting extends Warm {
  slot: RelaySlot;
  stop: AbortController;
  probe: WarmFfprobe;
}

export class WarmProbes {
  private readonly pool: WarmPool<Waiting>;
  private readonly ffprobe: string;
  private readonly relay: Relay;

  constructor(ffprobe: string, relay: Relay, max: number) {
    this.ffprobe = ffprobe;
    this.relay = relay;
    this.pool = new WarmPool(max);
  }

  get max(): number {
    return this.pool.max;
  }

  /**
   * The input probe of `source` (sniffed as `demuxer`) by a waiting process, or null when none waits for
   * this demuxer (the caller runs ffprobe itself). `signal` kills the process like a job's own.
   */
  take(demuxer: string, source: SourceDownload, signal: AbortSignal): Promise<ProbeOutput> | null {
    if (signal.aborted) return null;
    const w = this.pool.take(demuxer);
    if (w === undefined) return null;
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
    this.pool.refill(demuxer, () => this.start(demuxer));
  }

  /** Process ids of the processes waiting now (not yet any job's). */
  pids(): number[] {
    return this.pool.pids();
  }

  /** The demuxers a process waits for now, least recently wanted first. */
  demuxers(): string[] {
    return this.pool.keys();
  }

  /** Stops every waiting process; nothing starts afterwards. */
  close(): void {
    this.pool.close();
  }

  private start(demuxer: string): Waiting | null {
    const slot = this.relay.reserve();
    const stop = new AbortController();
    const probe = startWarmFfprobe(this.ffprobe, inputProbeArgs(demuxer, [], slot.url), stop.signal);
    if (probe === null) {
      slot.release();
      return null;
    }
    return {
      child: probe.child,
      exited: probe.output.then(
        () => {},
        () => {},
      ),
      slot,
      stop,
      probe,
      dismiss: () => {
        stop.abort(new Error("warm ffprobe dismissed"));
        slot.release();
      },
    };
  }
}
