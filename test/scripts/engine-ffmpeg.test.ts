/** Which ffmpeg `npm run dev`, the benches and the test setups give the local engine (scripts/lib/engine-ffmpeg.ts). */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { npmBinary } from "../../containers/ffmpeg/src/config.ts";
import { parseDevVars } from "../../scripts/lib/dev-vars.ts";
import {
  chooseEngineFfmpeg,
  describeFfmpeg,
  engineFfmpegEnv,
  FfmpegMissing,
} from "../../scripts/lib/engine-ffmpeg.ts";

describe("engineFfmpegEnv", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-engine-ffmpeg-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const put = (name: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, name), "#!/bin/sh\n");
    chmodSync(path.join(dir, name), 0o755);
  };

  test("the build's two programs when both are there, nothing while one is missing", () => {
    expect(engineFfmpegEnv({}, dir)).toEqual({});
    put("ffmpeg");
    expect(engineFfmpegEnv({}, dir)).toEqual({});
    put("ffprobe");
    expect(engineFfmpegEnv({}, dir)).toEqual({
      FFMPEG_PATH: path.join(dir, "ffmpeg"),
      FFPROBE_PATH: path.join(dir, "ffprobe"),
    });
  });

  test("FFMPEG_PATH or FFPROBE_PATH set: the engine resolves them itself", () => {
    put("ffmpeg");
    put("ffprobe");
    expect(engineFfmpegEnv({ FFMPEG_PATH: "/usr/bin/ffmpeg" }, dir)).toEqual({});
    expect(engineFfmpegEnv({ FFPROBE_PATH: "/usr/bin/ffprobe" }, dir)).toEqual({});
  });
});

/**
 * A machine without Debian's ffmpeg (issue 29): nothing but @ffmpeg-installer's 2018 build reachable, or no
 * ffmpeg at all. A stand-in apt-get on PATH records its calls; when it "installs", it links the ffmpeg 5.x
 * of this machine into the directory chooseEngineFfmpeg looks at afterwards (Debian's /usr/bin in real life).
 */
describe("chooseEngineFfmpeg: the tested ffmpeg 5.x, installed or refused, never another one", () => {
  const real = chooseEngineFfmpeg({ install: false });
  const root = mkdtempSync(path.join(os.tmpdir(), "p6-choose-ffmpeg-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;

  /** A PATH directory with a stand-in apt-get, the directory it installs into, and the calls it got. */
  function machine(options: { npmOnPath?: boolean } = {}) {
    const dir = path.join(root, `m${++n}`);
    const bin = path.join(dir, "bin");
    const debian = path.join(dir, "usr-bin");
    const record = path.join(dir, "apt-get.calls");
    mkdirSync(bin, { recursive: true });
    mkdirSync(debian, { recursive: true });
    writeFileSync(
      path.join(bin, "apt-get"),
      [
        "#!/bin/sh",
        `echo "$*" >> '${record}'`,
        `if [ "$1" = install ]; then /bin/ln -sf '${real.FFMPEG_PATH}' '${debian}/ffmpeg'; /bin/ln -sf '${real.FFPROBE_PATH}' '${debian}/ffprobe'; fi`,
        "",
      ].join("\n"),
    );
    chmodSync(path.join(bin, "apt-get"), 0o755);
    if (options.npmOnPath) {
      symlinkSync(npmBinary("ffmpeg")!, path.join(bin, "ffmpeg"));
      symlinkSync(npmBinary("ffprobe")!, path.join(bin, "ffprobe"));
    }
    const calls = () => (existsSync(record) ? readFileSync(record, "utf8").trim().split("\n") : []);
    return { bin, debian, calls };
  }

  test("the machine's own is ffmpeg 5.x (what the stand-in installs)", () => {
    expect(real.version).toMatch(/^ffmpeg version n?5\./);
  });

  test("only the npm 2018 build on PATH: not used; Debian's installed with apt-get, as root, and used", () => {
    const m = machine({ npmOnPath: true });
    const chosen = chooseEngineFfmpeg({ env: { PATH: m.bin }, isRoot: true, debianBin: m.debian });
    expect(m.calls()).toEqual(["install -y -qq --no-install-recommends ffmpeg"]);
    expect(chosen).toMatchObject({
      FFMPEG_PATH: path.join(m.debian, "ffmpeg"),
      FFPROBE_PATH: path.join(m.debian, "ffprobe"),
      how: "Debian's, installed with apt-get",
    });
    expect(chosen.version).toMatch(/^ffmpeg version n?5\./);
    expect(describeFfmpeg(chosen)).toContain(`at ${path.join(m.debian, "ffmpeg")}`);
  });

  test("not root: stops, naming the 2018 build it found and the one command to run; installs nothing", () => {
    const m = machine({ npmOnPath: true });
    const refusal = (() => {
      try {
        chooseEngineFfmpeg({ env: { PATH: m.bin }, isRoot: false, debianBin: m.debian });
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(FfmpegMissing);
    expect((refusal as FfmpegMissing).command).toBe("sudo apt-get install -y ffmpeg");
    expect((refusal as FfmpegMissing).message).toMatch(/ffmpeg version N-47683/);
    expect(m.calls()).toEqual([]);
  });

  test("no apt-get and no ffmpeg: stops with the command naming FFMPEG_PATH/FFPROBE_PATH", () => {
    const empty = path.join(root, "empty");
    mkdirSync(empty, { recursive: true });
    expect(() => chooseEngineFfmpeg({ env: { PATH: empty }, isRoot: true })).toThrow(
      /no ffmpeg 5\.x, the version the tests verify: no ffmpeg and ffprobe on PATH/,
    );
    try {
      chooseEngineFfmpeg({ env: { PATH: empty }, isRoot: true });
    } catch (err) {
      expect((err as FfmpegMissing).command).toMatch(/^FFMPEG_PATH=\S+ FFPROBE_PATH=\S+ npm run dev/);
    }
  });

  test("FFMPEG_PATH naming another version is refused, not run", () => {
    expect(() =>
      chooseEngineFfmpeg({
        env: { PATH: "/nonexistent", FFMPEG_PATH: npmBinary("ffmpeg")!, FFPROBE_PATH: npmBinary("ffprobe")! },
      }),
    ).toThrow(/are not ffmpeg 5\.x, the version the tests verify/);
  });

  test("PATH's ffmpeg 5.x is used as it is, without apt-get", () => {
    const m = machine();
    symlinkSync(real.FFMPEG_PATH, path.join(m.bin, "ffmpeg"));
    symlinkSync(real.FFPROBE_PATH, path.join(m.bin, "ffprobe"));
    const chosen = chooseEngineFfmpeg({ env: { PATH: m.bin }, isRoot: true, debianBin: m.debian });
    expect(chosen).toMatchObject({ FFMPEG_PATH: path.join(m.bin, "ffmpeg"), how: "found on PATH" });
    expect(m.calls()).toEqual([]);
  });
});

/**
 * `npm run dev` itself (its engine part, `--engine-only`) on a PATH that holds no ffmpeg, only a stand-in
 * apt-get that records its call (this machine's Debian ffmpeg stays in /usr/bin, where the real install puts
 * it). As root, dev installs (the stand-in is called), prints the ffmpeg 5.x it runs the engine on, and the
 * engine's /v1/health reports that version; not root, dev stops with the command to run.
 */
describe("npm run dev on a machine without ffmpeg on PATH", () => {
  const repo = path.resolve(import.meta.dirname, "../..");
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-dev-noffmpeg-"));
  let dev: ChildProcess | undefined;
  afterAll(async () => {
    if (dev?.pid !== undefined && dev.exitCode === null) {
      process.kill(-dev.pid, "SIGTERM");
      await new Promise((r) => dev!.once("exit", r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("the engine runs on Debian's ffmpeg 5.x, said so, or dev stops with the one command", async () => {
    const record = path.join(dir, "apt-get.calls");
    writeFileSync(path.join(dir, "apt-get"), `#!/bin/sh\necho "$*" >> '${record}'\n`);
    chmodSync(path.join(dir, "apt-get"), 0o755);
    const lines: string[] = [];
    dev = spawn(process.execPath, ["scripts/dev.ts", "--engine-only"], {
      cwd: repo,
      env: { PATH: dir, HOME: process.env.HOME ?? dir, ENGINE_PORT: "0", NO_COLOR: "1" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((r) => dev!.once("exit", r));
    for (const stream of [dev.stdout!, dev.stderr!]) {
      stream.setEncoding("utf8");
      let buffer = "";
      stream.on("data", (chunk: string) => {
        buffer += chunk;
        const parts = buffer.split("\n");
        buffer = parts.pop()!;
        lines.push(...parts);
      });
    }
    const url = await Promise.race([
      (async () => {
        for (;;) {
          const m = lines.map((l) => /^media engine: (http:\/\/\S+)/.exec(l)).find((x) => x);
          if (m) return m[1]!;
          await new Promise((r) => setTimeout(r, 100));
        }
      })(),
      exited.then(() => null),
      new Promise<null>((r) => setTimeout(() => r(null), 60_000)),
    ]);
    const out = lines.join("\n");
    if (process.getuid?.() !== 0) {
      expect(await exited, out).toBe(1);
      expect(out).toContain("Run: sudo apt-get install -y ffmpeg");
      expect(existsSync(record)).toBe(false);
      return;
    }
    expect(url, out).not.toBeNull();
    expect(readFileSync(record, "utf8").trim()).toBe("install -y -qq --no-install-recommends ffmpeg");
    expect(out).toMatch(
      /^Media engine on ffmpeg version 5\.\S+ at \/usr\/bin\/ffmpeg \(Debian's, installed with apt-get/m,
    );
    expect(out).toMatch(/^\[engine\] engine ffmpeg: \/usr\/bin\/ffmpeg \(ffmpeg version 5\./m);
    expect(out).not.toMatch(/ffmpeg-installer|N-47683/);
    const secret = parseDevVars(readFileSync(path.join(repo, ".dev.vars"), "utf8")).ENGINE_SECRET;
    const health = (await (
      await fetch(`${url}/v1/health`, { headers: { authorization: `Bearer ${secret}` } })
    ).json()) as { ffmpeg: string };
    expect(health.ffmpeg).toMatch(/^ffmpeg version 5\./);
  }, 90_000);
});
