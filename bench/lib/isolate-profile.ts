/**
 * A CPU profile of the Worker's isolate (workerd) through `wrangler dev`'s DevTools inspector, for bench:load:
 * how much of a phase the isolate was busy, and with what. In `npm run dev` one isolate runs every request,
 * the queue consumer and the Durable Objects; a busy isolate is a queue for every request.
 */
import { writeFileSync } from "node:fs";

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

export type IsolateProfileSummary = {
  /** Share of the sampled wall time the isolate's thread was not idle (JS, GC, runtime work). */
  busyShare: number;
  seconds: number;
  /** The largest entry points (an async continuation counts under the function it resumed), share of wall time. */
  top: { name: string; share: number }[];
};

/** Folds a profile into its busy share and its largest entry points. */
export function summarizeProfile(profile: Profile, topN = 8): IsolateProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const inclusive = (id: number): number =>
    (self.get(id) ?? 0) + (byId.get(id)?.children ?? []).reduce((sum, c) => sum + inclusive(c), 0);
  const entries = new Map<string, number>();
  for (const child of profile.nodes[0]?.children ?? []) {
    const frame = byId.get(child)!.callFrame;
    const name = `${frame.functionName || "(anonymous)"}${frame.url ? ` ${frame.url.split("/").at(-1)}:${frame.lineNumber}` : ""}`;
    entries.set(name, (entries.get(name) ?? 0) + inclusive(child));
  }
  const idle = entries.get("(idle)") ?? 0;
  return {
    busyShare: total > 0 ? 1 - idle / total : 0,
    seconds: total / 1e6,
    top: [...entries]
      .filter(([name]) => name !== "(idle)")
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([name, us]) => ({ name, share: us / total })),
  };
}

/** Starts profiling the isolate behind the inspector on `port`; `stop` ends it and returns the summary. */
export async function profileIsolate(port: number, samplingIntervalUs = 1000) {
  // wrangler's inspector proxy refuses a WebSocket without an Origin header.
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { Origin: `http://127.0.0.1:${port}` } });
  let nextId = 0;
  let onProfile: ((profile: Profile) => void) | undefined;
  ws.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { result?: { profile?: Profile } };
    if (message.result?.profile) onProfile?.(message.result.profile);
  };
  const send = (method: string, params: object = {}) =>
    ws.send(JSON.stringify({ id: ++nextId, method, params }));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`no inspector on port ${port}`));
  });
  send("Profiler.enable");
  send("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
  send("Profiler.start");
  return {
    stop: async (): Promise<IsolateProfileSummary> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const profile = await new Promise<Profile>((resolve, reject) => {
        onProfile = resolve;
        timer = setTimeout(() => reject(new Error("the inspector sent no profile")), 30_000);
        send("Profiler.stop");
      }).finally(() => clearTimeout(timer));
      ws.close();
      // BENCH_PROFILE_DUMP=/tmp/iso: also keep the raw profile (for self times, DevTools), /tmp/iso-<ms>.cpuprofile.
      if (process.env.BENCH_PROFILE_DUMP)
        writeFileSync(`${process.env.BENCH_PROFILE_DUMP}-${Date.now()}.cpuprofile`, JSON.stringify(profile));
      return summarizeProfile(profile);
    },
  };
}
