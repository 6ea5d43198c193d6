/**
 * npm run bench:engine — the media engine against the same ffmpeg commands run directly.
 *
 * Generates (once, cached in bench/.media/) a 1920x1080, 60 s H.264/AAC file, serves it from 127.0.0.1
 * (with Range support, like any CDN), starts the engine as a child process (PORT=0) with command tracing
 * on, and for each operation times the full HTTP round trip through the engine (fetching the source,
 * probing, processing, streaming the result back) against the engine's own processing command(s) run
 * directly by ffmpeg on the same source URL. A second set of lines compares with the same command(s) on
 * the local file (no network at all), and a third with the floor: the same command(s) reading through a bare
 * pass-through proxy in its own process, which then streams the output back (bench/lib/floor-proxy.ts), the
 * least any guard between ffmpeg and the source can add. Then the engine's RSS with a ~10 MB and
 * (BENCH_BIG=1) a ~1 GB source.
 *
 * BENCH_SHORT=1 leaves out the two long re-encodes (accurate trim, watermark: about a minute). BENCH_SMOKE=1
 * runs every operation once on a 4 s 320×240 clip (bench/lib/smoke.ts): it proves the bench runs, nothing more.
 *
 * Output: one line per operation `engine-<op>: <ratio>x (<engine ms> vs <direct ms>)`, then
 * `trim-fast-vs-accurate: <ratio>x`, `local-<op>: …` and `floor-<op>: …` lines and `engine-rss: …`.
 */
import { execFile, fork, spawn } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readFile, rm, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { resolveBinaries } from "../containers/ffmpeg/src/config.ts";
import { startEngine } from "../containers/ffmpeg/src/launch.ts";
import {
  fillSourcePlaceholders,
  withSourcePlaceholders,
} from "../containers/ffmpeg/src/pipeline/input-args.ts";
import { isRelayUrl } from "../containers/ffmpeg/src/pipeline/relay.ts";
import { publish, writeFileAtomic } from "../containers/ffmpeg/test/support/fixture-files.ts";
import { useEngineFfmpeg } from "../scripts/lib/engine-ffmpeg.ts";
import { SMOKE, sized } from "./lib/smoke.ts";

const exec = promisify(execFile);
const MEDIA = fileURLToPath(new URL("./.media/", import.meta.url));
const REPLAY = path.join(MEDIA, "replay");
const BIG = path.join(MEDIA, SMOKE ? "bench-smoke-4s.mp4" : "bench-1080p-60s.mp4");
const SMALL = SMOKE ? BIG : path.join(MEDIA, "bench-10mb.mp4");
/** Where the trims cut, in seconds of the source (60 s, or the smoke run's 4 s). */
const AT = SMOKE ? { start: 1, mid: 2, end: 3 } : { start: 20, mid: 40, end: 50 };
const HUGE = path.join(MEDIA, "bench-1gb.mp4");
const SECRET = "bench-secret";
const TEXT = "p6 bench";
/**
 * The text watermark as the Worker sends it: the engine draws no text, the Worker renders the mark (src/text)
 * and sends it as the job's `text_mark` PNG, which the engine overlays like a logo (and writes to its job
 * directory as text-mark.png, which the replayed command reads from REPLAY). Drawn here once by ffmpeg at
 * TEXT_MARK_SIZE px, which is what the job says it was drawn at.
 */
const TEXT_MARK = path.join(MEDIA, "text-mark.png");
const TEXT_MARK_SIZE = 54;
// The ffmpeg the tests verify (5.x), printed; the engine started below inherits it.
useEngineFfmpeg("bench");
const bins = resolveBinaries(process.env);

/** Runs ffmpeg; its output, the last argument, appears whole or not at all (fixture-files.ts). */
async function ff(args: string[]): Promise<void> {
  await publish(args.at(-1)!, (partial) =>
    exec(bins.ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", ...args.slice(0, -1), partial], {
      maxBuffer: 1 << 20,
    }),
  );
}

async function prepareMedia(): Promise<void> {
  await mkdir(REPLAY, { recursive: true });
  if (!existsSync(BIG)) {
    console.log(`generating ${path.relative(process.cwd(), BIG)} (once) …`);
    const [size, seconds] = SMOKE ? ["320x240", 4] : ["1920x1080", 60];
    await ff([
      ...["-f", "lavfi", "-i", `testsrc2=size=${size}:rate=30:duration=${seconds}`],
      ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k"],
      ...["-shortest", "-movflags", "+faststart", BIG],
    ]);
  }
  if (!existsSync(SMALL)) {
    const { size } = await stat(BIG);
    const seconds = Math.max(1, Math.round((60 * 10 * 1024 * 1024) / size));
    await ff(["-i", BIG, "-t", String(seconds), "-c", "copy", "-movflags", "+faststart", SMALL]);
  }
  if (process.env.BENCH_BIG === "1" && !existsSync(HUGE)) {
    const { size } = await stat(BIG);
    const loops = Math.ceil((1024 * 1024 * 1024) / size) - 1;
    console.log(`generating bench/.media/bench-1gb.mp4 (once, ${loops + 1}× the 60 s file, stream copy) …`);
    await ff(["-stream_loop", String(loops), "-i", BIG, "-c", "copy", "-movflags", "+faststart", HUGE]);
  }
  if (!existsSync(TEXT_MARK)) {
    await ff([
      ...["-f", "lavfi", "-i", "color=c=black@0.0:size=320x80,format=rgba"],
      ...["-vf", `drawtext=text='${TEXT}':fontcolor=white@0.8:fontsize=${TEXT_MARK_SIZE}:x=8:y=8`],
      ...["-frames:v", "1", TEXT_MARK],
    ]);
  }
  await writeFileAtomic(path.join(REPLAY, "text-mark.png"), await readFile(TEXT_MARK));
}

/** The job fields beyond the params an operation needs (a text watermark's drawn mark). */
async function jobExtras(type: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (type !== "video.watermark" || params.text === undefined) return {};
  return { text_mark: { png: (await readFile(TEXT_MARK)).toString("base64"), font_size: TEXT_MARK_SIZE } };
}

function serve(): Promise<{ url: (name: string) => string; close: () => void }> {
  const server = http.createServer(async (req, res) => {
    const file = path.join(MEDIA, path.basename(new URL(req.url ?? "/", "http://x").pathname));
    try {
      const { size } = await stat(file);
      const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
      if (m === null) {
        res.writeHead(200, { "content-length": size, "accept-ranges": "bytes" });
        createReadStream(file).pipe(res);
        return;
      }
      const start = Number(m[1]);
      const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
      res.writeHead(206, {
        "content-length": end - start + 1,
        "content-range": `bytes ${start}-${end}/${size}`,
        "accept-ranges": "bytes",
      });
      createReadStream(file, { start, end }).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: (name) => `http://127.0.0.1:${port}/${path.basename(name)}`,
        close: () => server.close(),
      });
    }),
  );
}

/** The floor (bench/lib/floor-proxy.ts) as a child process, in front of the bench's file server. */
async function startFloor(upstream: string) {
  const child = fork(fileURLToPath(new URL("./lib/floor-proxy.ts", import.meta.url)), [upstream, REPLAY], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m) => resolve(Number(m)));
    child.once("exit", (code) => reject(new Error(`the floor proxy exited (${code})`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    src: (name: string) => `${base}/src/${path.basename(name)}`,
    out: (name: string) => `${base}/out/${path.basename(name)}`,
    stop: () => child.kill(),
  };
}

/** Reads a response body to its end as a client would, without keeping it. */
async function drain(res: Response): Promise<void> {
  const reader = res.body!.getReader();
  while (!(await reader.read()).done) {
    /* discard */
  }
}

interface Command {
  bin: string;
  args: string[];
}

const commands: Command[] = [];

/**
 * Rewrites a traced engine command to read `input` (the source URL, or file:<path>) and write into
 * bench/.media/replay instead of the engine's job directory.
 */
function replayable(cmd: Command, input: string): Command {
  // Every read of the engine's source (its relay URL, or its download once complete: <job dir>/source) reads
  // `input` instead, with the protocol options `input` needs.
  const refs = cmd.args.filter(
    (a, k) =>
      cmd.args[k - 1] === "-i" && (isRelayUrl(a) || (a.startsWith("file:") && path.basename(a) === "source")),
  );
  const args = fillSourcePlaceholders(withSourcePlaceholders(cmd.args, refs), input);
  const jobDir = path.dirname(cmd.args[cmd.args.length - 1] ?? "");
  const isFfmpeg = path.basename(cmd.bin).startsWith("ffmpeg");
  return {
    bin: cmd.bin,
    args: args.map((a, k) => {
      if (isFfmpeg && k === args.length - 1) return path.join(REPLAY, path.basename(a));
      return jobDir.length > 1 ? a.split(jobDir).join(REPLAY) : a;
    }),
  };
}

function runDirect(cmd: Command): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd.bin, cmd.args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${cmd.bin} failed: ${stderr}`)),
    );
  });
}

interface Op {
  name: string;
  type: string;
  params: Record<string, unknown>;
  runs: number;
}

const SHORT_RUNS = sized(5, 1);
const OPS: Op[] = [
  { name: "video.probe", type: "video.probe", params: {}, runs: SHORT_RUNS },
  { name: "video.extract-cover", type: "video.extract-cover", params: {}, runs: SHORT_RUNS },
  {
    name: "video.trim-fast",
    type: "video.trim",
    params: { start: AT.start, end: AT.mid, mode: "fast" },
    runs: SHORT_RUNS,
  },
  { name: "audio.trim", type: "audio.trim", params: { start: AT.start, end: AT.end }, runs: SHORT_RUNS },
  { name: "video.extract-audio", type: "video.extract-audio", params: {}, runs: SHORT_RUNS },
  ...(process.env.BENCH_SHORT === "1"
    ? []
    : [{ name: "video.trim", type: "video.trim", params: { start: AT.start, end: AT.mid }, runs: 1 }]),
  ...(process.env.BENCH_SHORT === "1"
    ? []
    : [{ name: "video.watermark", type: "video.watermark", params: { text: TEXT }, runs: 1 }]),
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  await prepareMedia();
  const files = await serve();
  const floor = await startFloor(new URL(files.url(BIG)).origin);
  const engine = await startEngine(
    {
      ENGINE_SECRET: SECRET,
      ALLOW_PRIVATE_SOURCES: "true",
      ENGINE_TRACE_COMMANDS: "true",
      ENGINE_TMPDIR: path.join(MEDIA, "tmp"),
    },
    {
      // Time to spare: on a loaded machine the engine took 20-40 s to listen.
      timeoutMs: 120_000,
      onLog: (line) => {
        const m = /^engine-command (.*)$/.exec(line);
        if (m !== null) commands.push(JSON.parse(m[1]!) as Command);
      },
    },
  );
  const pid = engine.child.pid!;
  let job = 0;
  const call = async (type: string, source: string, params: Record<string, unknown>) => {
    const started = performance.now();
    const res = await fetch(`${engine.url}/v1/jobs/${type}`, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}` },
      body: JSON.stringify({
        job_id: `bench-${++job}`,
        source_url: files.url(source),
        params,
        ...(await jobExtras(type, params)),
        max_source_bytes: 4 * 1024 ** 3,
        timeout_ms: 600_000,
      }),
    });
    if (res.status !== 200) throw new Error(`${type}: ${res.status} ${await res.text()}`);
    await drain(res);
    return performance.now() - started;
  };

  const timings = new Map<string, number>();
  const local: string[] = [];
  const floors: string[] = [];
  for (const op of OPS) {
    const engineMs: number[] = [];
    const urlMs: number[] = [];
    const fileMs: number[] = [];
    const floorMs: number[] = [];
    for (let r = 0; r < op.runs; r++) {
      const before = commands.length;
      engineMs.push(await call(op.type, BIG, op.params));
      // The engine starts its warm processes for the next job after a response: let them finish starting
      // (≈ 100 ms of CPU each) so that they do not slow the direct run.
      await new Promise((res) => setTimeout(res, 400));
      const traced = commands.slice(before);
      // The processing command(s): every ffmpeg run (a cover may step back once); for probe, ffprobe.
      const main =
        op.type === "video.probe"
          ? traced.filter((c) => c.bin === bins.ffprobe)
          : traced.filter((c) => c.bin === bins.ffmpeg);
      let viaUrl = 0;
      let viaFile = 0;
      let viaFloor = 0;
      for (const cmd of main) viaUrl += await runDirect(replayable(cmd, files.url(BIG)));
      for (const cmd of main) viaFloor += await runDirect(replayable(cmd, floor.src(BIG)));
      if (op.type !== "video.probe") {
        // The result back to the caller, as the engine sends it (a probe's JSON is a few hundred bytes).
        const started = performance.now();
        const out = await fetch(floor.out(replayable(main.at(-1)!, BIG).args.at(-1)!));
        if (out.status !== 200) throw new Error(`the floor proxy has no output for ${op.name}`);
        await drain(out);
        viaFloor += performance.now() - started;
      }
      for (const cmd of main) viaFile += await runDirect(replayable(cmd, `file:${BIG}`));
      urlMs.push(viaUrl);
      fileMs.push(viaFile);
      floorMs.push(viaFloor);
    }
    const e = median(engineMs);
    const d = median(urlMs);
    const f = median(fileMs);
    timings.set(op.name, e);
    console.log(`engine-${op.name}: ${(e / d).toFixed(2)}x (${Math.round(e)} ms vs ${Math.round(d)} ms)`);
    local.push(
      `local-${op.name}: ${(e / f).toFixed(2)}x (${Math.round(e)} ms vs ${Math.round(f)} ms on the local file)`,
    );
    const fl = median(floorMs);
    floors.push(
      `floor-${op.name}: ${(fl / d).toFixed(2)}x (${Math.round(fl)} ms vs ${Math.round(d)} ms; the engine is ${(e / fl).toFixed(2)}x the floor)`,
    );
  }
  const fast = timings.get("video.trim-fast")!;
  const accurate = timings.get("video.trim");
  console.log(
    `trim-fast-vs-accurate: ${accurate === undefined ? "not measured (BENCH_SHORT leaves the accurate trim out)" : `${(accurate / fast).toFixed(1)}x`}`,
  );
  for (const line of [...local, ...floors]) console.log(line);

  // Memory: peak RSS of the engine process while it copies a source through (download, trim, stream back).
  const rss = async () => {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  const peakDuring = async (source: string) => {
    let peak = await rss();
    let running = true;
    const sampler = (async () => {
      while (running) {
        peak = Math.max(peak, await rss());
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await call("video.trim", source, { start: 0, end: 100_000, mode: "fast" });
    running = false;
    await sampler;
    return peak;
  };
  const idle = await rss();
  const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;
  const small = await peakDuring(SMALL);
  let line = `engine-rss: idle ${idle.toFixed(0)} MiB; peak ${small.toFixed(0)} MiB with a ${mb((await stat(SMALL)).size)} source`;
  if (existsSync(HUGE) && process.env.BENCH_BIG === "1") {
    const huge = await peakDuring(HUGE);
    line += `, ${huge.toFixed(0)} MiB with a ${mb((await stat(HUGE)).size)} source (${(huge / small).toFixed(2)}x)`;
  } else {
    line += "; run `BENCH_BIG=1 npm run bench:engine` to compare with a ~1 GB source";
  }
  console.log(line);

  await engine.stop();
  floor.stop();
  files.close();
  await rm(REPLAY, { recursive: true, force: true });
}

await main();
