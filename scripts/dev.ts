/**
 * npm run dev: the whole service on this machine.
 *  0. the ffmpeg the engine runs on, printed with its version: ffmpeg 5.x, the version the tests verify
 *  (scripts/lib/engine-ffmpeg.ts: FFMPEG_PATH, .tools/ffmpeg (the image's build, `npm run build:ffmpeg`), PATH's,
 *  else Debian's installed with apt-get when root; otherwise it stops with the command to run),
 *  1. .dev.vars with generated secrets (first start), 2. local D1 migrations, 3. the media engine as a local
 *  process on that ffmpeg, 3b. the R2 fonts
 *  (CJK, the Indic scripts not bundled) and the emoji pack into the local FONTS bucket
 *  (src/text/remote-fonts.ts; Debian's fonts-noto-cjk, fonts-noto-core and fonts-noto-color-emoji, installed
 *  with apt-get when missing and possible), 4. wrangler dev on http://localhost:8787 (ENGINE_URL pointing at the engine, private sources
 *  allowed), 5. a dev account with 10,000 credits on first start; its API key and webhook secret are printed.
 * Environment: PORT (8787), ENGINE_PORT (8788), P6_STATE_DIR (.wrangler/state) — tests use them to run a
 * second instance beside yours; P6_ENGINE_URL: use an engine already running there (with this checkout's
 * ENGINE_SECRET) instead of starting one (bench:load's BENCH_TASKS_APART); INSPECTOR_PORT (PORT + 442: 9229,
 * wrangler's own default, for the default PORT): the Worker's DevTools inspector (bench:load profiles the
 * isolate through it). Always passed to wrangler: left to itself, it takes the next free port after 9229
 * without saying so, and a second instance's inspector moved to 9230.
 * wrangler's bindings table and containers list are printed once (scripts/lib/wrangler-output.ts).
 * PUBLIC_ORIGIN: where mailed links point (default http://localhost:<PORT>).
 * `npm run dev -- --engine-only`: steps 0, 1 and 3 only (the engine as dev starts it, its URL printed).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getPlatformProxy, unstable_readConfig } from "wrangler";
import {
  EMOJI_FONT_PATH,
  EMOJI_PACKAGE,
  FONTS_PACKAGES,
  REMOTE_FONT_FILES,
} from "../src/text/remote-fonts.ts";
import { ensureDevVars } from "./lib/dev-vars.ts";
import { emojiPackFile } from "./lib/emoji-pack.ts";
import { chooseEngineFfmpeg, describeFfmpeg, type EngineFfmpeg, FfmpegMissing } from "./lib/engine-ffmpeg.ts";
import { startGroup, stopGroup, waitForHttp, waitForLine } from "./lib/processes.ts";
import { onceTables } from "./lib/wrangler-output.ts";

const root = path.resolve(import.meta.dirname, "..");
process.chdir(root);
const port = Number(process.env.PORT ?? 8787);
const enginePort = Number(process.env.ENGINE_PORT ?? 8788);
const stateDir = process.env.P6_STATE_DIR ?? ".wrangler/state";
const inspectorPort = Number(process.env.INSPECTOR_PORT ?? port + 442);
if (!Number.isInteger(inspectorPort) || inspectorPort < 1 || inspectorPort > 65535) {
  console.error(`The inspector port ${inspectorPort} (PORT + 442) is not a port: set INSPECTOR_PORT.`);
  process.exit(1);
}
const seedFile = path.join(stateDir, "dev-account.json");
const wrangler = path.join(root, "node_modules/.bin/wrangler");
const quietEnv = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  NO_UPDATE_NOTIFIER: "1",
};

const engineOnly = process.argv.includes("--engine-only");
const engineMain = "containers/ffmpeg/src/main.ts";
const engineUrlGiven = process.env.P6_ENGINE_URL ?? "";

// First, so that a machine without the tested ffmpeg stops before anything else is set up.
let ffmpeg: EngineFfmpeg | null = null;
if (engineUrlGiven === "" && existsSync(engineMain)) {
  try {
    ffmpeg = chooseEngineFfmpeg({ preferBuild: true, log: (line) => console.log(line) });
  } catch (err) {
    if (!(err instanceof FfmpegMissing)) throw err;
    console.error(`The media engine needs ${err.message}.\nRun: ${err.command}`);
    process.exit(1);
  }
}

const { vars, created } = ensureDevVars();
if (created) console.log("Generated .dev.vars with ADMIN_TOKEN, FILE_SIGNING_SECRET and ENGINE_SECRET.");

if (!engineOnly) {
  // The font uploads first, then the migrations: each starts a workerd on the same state directory, and two at
  // once can meet a SQLite lock (SQLITE_BUSY, seen on a fresh state directory).
  await seedFonts();

  console.log("Applying local D1 migrations…");
  execFileSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...quietEnv, CI: "1" },
  });
}

/** The fonts too large for the bundle, into the local R2 bucket FONTS once per state directory and file. */
async function seedFonts() {
  const missing = REMOTE_FONT_FILES.some((font) => !existsSync(font.path)) || !existsSync(EMOJI_FONT_PATH);
  if (missing && process.getuid?.() === 0) {
    console.log(`Installing ${[...FONTS_PACKAGES, EMOJI_PACKAGE].join(", ")} (fonts for text watermarks)…`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    try {
      execFileSync(
        "apt-get",
        ["install", "-y", "-qq", "--no-install-recommends", ...FONTS_PACKAGES, EMOJI_PACKAGE],
        {
          stdio: "ignore",
          env,
        },
      );
    } catch {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
      execFileSync(
        "apt-get",
        ["install", "-y", "-qq", "--no-install-recommends", ...FONTS_PACKAGES, EMOJI_PACKAGE],
        {
          stdio: "ignore",
          env,
        },
      );
    }
  }
  const marker = path.join(stateDir, "fonts-seeded.json");
  const seeded = existsSync(marker)
    ? (JSON.parse(readFileSync(marker, "utf8")) as Record<string, number>)
    : {};
  const config = unstable_readConfig({ config: "wrangler.toml" }) as {
    r2_buckets: { binding: string; bucket_name?: string }[];
    compatibility_date?: string;
  };
  const bucket = config.r2_buckets.find((b) => b.binding === "FONTS")?.bucket_name;
  // The colour emoji pack (src/text/emoji.ts) is cut out of Debian's NotoColorEmoji.ttf first.
  const emojiPack = emojiPackFile();
  const due = [];
  for (const font of [...REMOTE_FONT_FILES, ...(emojiPack ? [emojiPack] : [])]) {
    if (!existsSync(font.path)) {
      const from = "package" in font ? ` (apt-get install ${font.package})` : "";
      console.warn(`${font.path} is missing${from}: text watermarks that need it will fail.`);
      continue;
    }
    const stamp = statSync(font.path).mtimeMs;
    if (seeded[font.key] !== stamp) due.push({ ...font, stamp });
  }
  if (due.length === 0) return;
  // All the puts through one local R2 binding, in the state directory `wrangler … --local --persist-to` uses
  // (<dir>/v3): wrangler's getPlatformProxy starts one workerd for them, where a `wrangler r2 object put` per
  // font started seventeen (≈ 50 s of a first start). Its config holds the FONTS bucket alone: the Worker's
  // own bindings (Durable Objects, Queues, the container) are not needed to write an object.
  const configDir = mkdtempSync(path.join(os.tmpdir(), "p6-fonts-"));
  const configPath = path.join(configDir, "wrangler.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      name: "p6-fonts-seed",
      compatibility_date: config.compatibility_date,
      r2_buckets: [{ binding: "FONTS", bucket_name: bucket }],
    }),
  );
  const proxy = await getPlatformProxy<{ FONTS: { put(key: string, value: Uint8Array): Promise<unknown> } }>({
    configPath,
    persist: { path: path.resolve(stateDir, "v3") },
    remoteBindings: false,
  });
  try {
    for (const font of due) {
      console.log(`Putting ${font.key} into the local FONTS bucket…`);
      await proxy.env.FONTS.put(font.key, readFileSync(font.path));
      seeded[font.key] = font.stamp;
    }
  } finally {
    await proxy.dispose();
    rmSync(configDir, { recursive: true, force: true });
  }
  writeFileSync(marker, JSON.stringify(seeded));
}

const children: ReturnType<typeof startGroup>[] = [];
const shutdown = (code: number) => {
  for (const child of children) stopGroup(child);
  process.exit(code);
};
process.on("SIGINT", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));

let engineUrl = engineUrlGiven;
if (engineUrl !== "") {
  console.log(`Media engine: the one already running at ${engineUrl} (P6_ENGINE_URL).`);
} else if (ffmpeg !== null) {
  const lines: string[] = [];
  console.log(`Media engine on ${describeFfmpeg(ffmpeg)}.`);
  if (!ffmpeg.how.includes(".tools/ffmpeg")) {
    console.log("(`npm run build:ffmpeg` builds the engine image's lighter ffmpeg 5.1 into .tools/ffmpeg.)");
  }
  const engine = startGroup("engine", process.execPath, [engineMain], {
    env: {
      PORT: String(enginePort),
      HOST: "127.0.0.1",
      ENGINE_SECRET: vars.ENGINE_SECRET,
      ALLOW_PRIVATE_SOURCES: "true",
      FFMPEG_PATH: ffmpeg.FFMPEG_PATH,
      FFPROBE_PATH: ffmpeg.FFPROBE_PATH,
    },
    onLine: (line) => lines.push(line),
  });
  children.push(engine);
  engine.on("exit", (code) => {
    console.error(`The media engine exited (${code}); stopping.`);
    shutdown(1);
  });
  const match = await waitForLine(engine, lines, /engine listening on (http:\/\/\S+)/, 30_000);
  engineUrl = match[1]!;
} else {
  console.log("No media engine in this checkout; video and audio operations will answer 503.");
}
if (engineOnly) {
  console.log(`media engine: ${engineUrl || "not started"} (--engine-only: no Worker; Ctrl-C stops it)`);
  await new Promise(() => {});
}

const workerLines: string[] = [];
const wranglerOutput = onceTables();
const worker = startGroup(
  "wrangler",
  wrangler,
  [
    "dev",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--persist-to",
    stateDir,
    "--var",
    `ENGINE_URL:${engineUrl}`,
    "--var",
    "ALLOW_PRIVATE_SOURCES:true",
    "--var",
    "SIGNUP_CREDITS:100",
    "--var",
    "MAIL_TRANSPORT:mailbox",
    // Mail links point at this instance, whatever Host a request names (docs/console.md "Mail").
    "--var",
    `PUBLIC_ORIGIN:${process.env.PUBLIC_ORIGIN ?? `http://localhost:${port}`}`,
    "--show-interactive-dev-session=false",
    "--inspector-port",
    String(inspectorPort),
  ],
  {
    env: { ...quietEnv },
    quiet: true,
    onLine: (line) => {
      workerLines.push(line);
      for (const out of wranglerOutput.feed(line)) console.log(`[wrangler] ${out}`);
    },
  },
);
children.push(worker);
worker.on("exit", (code) => {
  for (const out of wranglerOutput.flush()) console.log(`[wrangler] ${out}`);
  console.error(`wrangler dev exited (${code}); stopping.`);
  shutdown(1);
});
const base = `http://127.0.0.1:${port}`;
await waitForHttp(`${base}/healthz`, 60_000);

const admin = (p: string, init: RequestInit = {}) =>
  fetch(`${base}${p}`, {
    ...init,
    headers: { Authorization: `Bearer ${vars.ADMIN_TOKEN}`, "Content-Type": "application/json" },
  });

type Seed = { account_id: string; api_key: string; webhook_secret: string };
let seed: Seed | undefined = existsSync(seedFile)
  ? (JSON.parse(readFileSync(seedFile, "utf8")) as Seed)
  : undefined;
if (seed && (await admin(`/admin/v1/accounts/${seed.account_id}`)).status !== 200) seed = undefined;
if (!seed) {
  const response = await admin("/admin/v1/accounts", {
    method: "POST",
    body: JSON.stringify({ name: "Local development", credits: 10_000 }),
  });
  if (response.status !== 201)
    throw new Error(`seeding the dev account failed: ${response.status} ${await response.text()}`);
  const account = (await response.json()) as { id: string; webhook_secret: string; api_key: { key: string } };
  seed = { account_id: account.id, api_key: account.api_key.key, webhook_secret: account.webhook_secret };
  writeFileSync(seedFile, JSON.stringify(seed, null, 2), { mode: 0o600 });
}

console.log(`
  p6 media API is running on http://localhost:${port}   (docs: http://localhost:${port}/docs)
  media engine: ${engineUrl || "not started"}
  inspector:    127.0.0.1:${inspectorPort}   (the Worker in Chrome DevTools: chrome://inspect)

  Dev account ${seed.account_id} (10,000 credits on first start)
  API key:        ${seed.api_key}
  Webhook secret: ${seed.webhook_secret}
  Admin CLI:      npm run admin -- accounts list
  Console mail:   http://localhost:${port}/dev/mailbox   (verification and reset links; docs/console.md)

  Try: curl -H "Authorization: Bearer ${seed.api_key}" http://localhost:${port}/v1/tasks
`);
