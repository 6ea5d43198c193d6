/**
 * Starts the engine as a child process and waits for its "engine listening on" line. Used by the tests,
 * the bench and the dev script (`import { startEngine } from "../containers/ffmpeg/src/launch.ts"`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface RunningEngine {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

export function startEngine(
  env: Record<string, string | undefined>,
  options: { timeoutMs?: number; onLog?: (line: string) => void } = {},
): Promise<RunningEngine> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill("SIGKILL"), 5000);
      child.once("exit", () => {
        clearTimeout(force);
        resolve();
      });
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    let buffered = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`engine did not start in time: ${stderr}`));
      // Only a failure waits this long: a quiet machine starts an engine in under a second, but six at once on a
      // 2-core machine under load took 30 s (Node compiling the engine's modules in each).
    }, options.timeoutMs ?? 90_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      let i = buffered.indexOf("\n");
      while (i >= 0) {
        const line = buffered.slice(0, i);
        buffered = buffered.slice(i + 1);
        const m = /^engine listening on (http:\/\/\S+)$/.exec(line);
        if (m !== null) {
          clearTimeout(timer);
          resolve({ url: m[1]!, child, stop });
        } else options.onLog?.(line);
        i = buffered.indexOf("\n");
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      options.onLog?.(chunk.trimEnd());
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited (${code}) before listening: ${stderr}`));
    });
  });
}
