import { type ChildProcess, spawn } from "node:child_process";

/**
 * Starts a command in its own process group (like setsid), so the whole tree — npx → node → workerd — can be
 * stopped together. Output lines go to `onLine` and, prefixed, to our stdout.
 */
export function startGroup(
  name: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; onLine?: (line: string) => void; quiet?: boolean } = {},
) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        options.onLine?.(line);
        if (!options.quiet) process.stdout.write(`[${name}] ${line}\n`);
        newline = buffer.indexOf("\n");
      }
    });
  }
  return child;
}

export function stopGroup(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM") {
  if (!child?.pid || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Resolves once no process of `child`'s group is left (true), or after `timeoutMs` (false). The group outlives
 * its leader while workerd finishes writing its state.
 */
export async function groupGone(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (child.pid !== undefined) {
    try {
      process.kill(-child.pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/**
 * Whether a start's output says a port it wanted was taken: wrangler's "Address already in use" (its port or
 * its inspector's), or the media engine's (Node's) "listen EADDRINUSE: address already in use". Callers that
 * pick ports at random on a shared machine then try the next ones.
 */
export function portTaken(lines: readonly string[]): boolean {
  return lines.some((line) => /address already in use/i.test(line));
}

/** Consumes output lines up to the first matching `pattern` and resolves with it; rejects on exit or timeout. */
export function waitForLine(child: ChildProcess, lines: string[], pattern: RegExp, timeoutMs: number) {
  return new Promise<RegExpExecArray>((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      while (lines.length > 0) {
        const match = pattern.exec(lines.shift()!);
        if (match) {
          clearInterval(timer);
          return resolve(match);
        }
      }
      if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`process exited with code ${child.exitCode} before printing ${pattern}`));
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(timer);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}`));
      }
    }, 50);
  });
}

export async function waitForHttp(url: string, timeoutMs: number) {
  const started = Date.now();
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
