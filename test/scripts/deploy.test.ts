/**
 * npm run deploy (scripts/deploy.ts) without the network: wrangler is replaced by a stand-in (P6_WRANGLER) that
 * records every call and answers like a Cloudflare account in a given state. The dry run hands only
 * `wrangler deploy --dry-run` to the real wrangler, which builds the Worker locally.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { EMOJI_PACK_KEY, REMOTE_FONT_FILES } from "../../src/text/remote-fonts.ts";

const root = path.resolve(import.meta.dirname, "../..");
const realWrangler = path.join(root, "node_modules/.bin/wrangler");
const UUID = "4f1e0c2a-9b7d-4e1f-8a3c-2d5e6f708192";

/** What the stand-in's account holds; it creates into it as wrangler would. */
interface Account {
  d1: Record<string, string>;
  r2: string[];
  queues: string[];
  /** null: the Worker was never deployed (secret list fails). */
  secrets: string[] | null;
}

const STAND_IN = `#!/usr/bin/env node
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
const args = process.argv.slice(2).filter((a, i, all) => a !== "--config" && all[i - 1] !== "--config");
const state = JSON.parse(readFileSync(process.env.P6_FAKE_STATE, "utf8"));
const record = { args };
const save = () => writeFileSync(process.env.P6_FAKE_STATE, JSON.stringify(state));
const [a, b, c] = args;
let code = 0;
if (a === "d1" && b === "info") {
  if (state.d1[c]) console.log(JSON.stringify({ uuid: state.d1[c], name: c }));
  else code = 1;
} else if (a === "d1" && b === "create") {
  state.d1[c] = "${UUID}";
  save();
} else if (a === "r2" && b === "bucket" && c === "info") code = state.r2.includes(args[3]) ? 0 : 1;
else if (a === "r2" && b === "bucket" && c === "create") { state.r2.push(args[3]); save(); }
else if (a === "queues" && b === "info") code = state.queues.includes(c) ? 0 : 1;
else if (a === "queues" && b === "create") { state.queues.push(c); save(); }
else if (a === "secret" && b === "list") {
  if (state.secrets === null) code = 1;
  else console.log(JSON.stringify(state.secrets.map((name) => ({ name, type: "secret_text" }))));
} else if (a === "deploy") {
  const file = args[args.indexOf("--secrets-file") + 1];
  if (args.includes("--secrets-file")) record.secrets = JSON.parse(readFileSync(file, "utf8"));
  if (args.includes("--assets")) {
    const dir = args[args.indexOf("--assets") + 1];
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    record.assets = files.map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
    record.assetBytes = files.reduce((sum, e) => sum + statSync(path.join(e.parentPath, e.name)).size, 0);
  }
  if (args.includes("--dry-run")) {
    code = spawnSync(process.env.P6_REAL_WRANGLER, process.argv.slice(2), { stdio: "inherit" }).status;
  }
}
appendFileSync(process.env.P6_FAKE_LOG, JSON.stringify(record) + "\\n");
process.exit(code);
`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "p6-deploy-test-"));
  writeFileSync(path.join(dir, "wrangler"), STAND_IN);
  chmodSync(path.join(dir, "wrangler"), 0o755);
  // A Docker that answers `docker info` like a running daemon; a test may replace it.
  writeFileSync(
    path.join(dir, "docker"),
    '#!/bin/sh\necho "docker $*" >> "$(dirname "$0")/docker.log"\necho 27.5.1\n',
  );
  chmodSync(path.join(dir, "docker"), 0o755);
  writeFileSync(path.join(dir, "calls.jsonl"), "");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function deploy(account: Account, args: string[], env: Record<string, string> = {}) {
  writeFileSync(path.join(dir, "state.json"), JSON.stringify(account));
  const quiet: Record<string, string | undefined> = { ...process.env };
  for (const name of ["ADMIN_TOKEN", "FILE_SIGNING_SECRET", "ENGINE_SECRET", "CLOUDFLARE_API_TOKEN"]) {
    delete quiet[name];
  }
  const result = spawnSync(process.execPath, [path.join(root, "scripts/deploy.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...quiet,
      P6_WRANGLER: path.join(dir, "wrangler"),
      P6_DOCKER: path.join(dir, "docker"),
      P6_REAL_WRANGLER: realWrangler,
      P6_FAKE_STATE: path.join(dir, "state.json"),
      P6_FAKE_LOG: path.join(dir, "calls.jsonl"),
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      PUBLIC_ORIGIN: "https://p6-media-api.example.workers.dev",
      ...env,
    },
  });
  const calls = readFileSync(path.join(dir, "calls.jsonl"), "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          args: string[];
          secrets?: Record<string, string>;
          assets?: string[];
          assetBytes?: number;
        },
    );
  return {
    status: result.status,
    output: `${result.stdout}${result.stderr}`,
    calls,
    commands: calls.map((c) => c.args.join(" ")),
    account: JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as Account,
  };
}

/** A copy of the project's config, which a real deploy edits (database_id). */
function configCopy(): string {
  const file = path.join(root, `wrangler.deploy-test-${path.basename(dir)}.toml`);
  copyFileSync(path.join(root, "wrangler.toml"), file);
  return file;
}

const QUEUES = ["p6-tasks", "p6-webhooks", "p6-tasks-dlq", "p6-webhooks-dlq"];
const EMPTY: Account = { d1: {}, r2: [], queues: [], secrets: null };

describe("npm run deploy -- --dry-run", () => {
  // One dry run (a real `wrangler deploy --dry-run` build, ≈ 8 s) read by both tests: the same command twice
  // gave the same output. Whether it ran docker is noted before the test's directory goes.
  let shared: { run: ReturnType<typeof deploy>; ranDocker: boolean } | undefined;
  const dryRun = () => {
    if (!shared) {
      const run = deploy(EMPTY, ["--dry-run"]);
      shared = { run, ranDocker: existsSync(path.join(dir, "docker.log")) };
    }
    return shared;
  };

  test("prints every step and runs only wrangler deploy --dry-run", () => {
    const { run } = dryRun();
    expect(run.status, run.output).toBe(0);
    expect(run.commands).toHaveLength(1);
    expect(run.calls[0]!.args).toEqual(expect.arrayContaining(["deploy", "--dry-run"]));
    for (const line of [
      "would run: wrangler d1 info p6-media --json; when absent: wrangler d1 create p6-media",
      "would run: wrangler r2 bucket info p6-media-files; when absent: wrangler r2 bucket create p6-media-files",
      "would run: wrangler r2 object put p6-media-fonts/NotoSansCJK-Regular.ttc",
      ...QUEUES.map((q) => `when absent: wrangler queues create ${q}`),
      "would run: wrangler d1 migrations apply DB --remote",
      "ADMIN_TOKEN: would prompt",
      "--dry-run: exiting now.",
      "(only what /docs loads; no source maps, no UMD build)",
      "Dry run: nothing was created, changed or deployed.",
    ]) {
      expect(run.output).toContain(line);
    }
  });

  test("warns, in words, that MAIL_FROM is a placeholder and SIGNUP_CREDITS is 0, and still finishes", () => {
    const { run } = dryRun();
    expect(run.status, run.output).toBe(0);
    expect(run.output).toContain(
      "⚠ MAIL_FROM is noreply@example.com, a placeholder: no verification or password-reset mail would be delivered",
    );
    expect(run.output).toContain(
      "⚠ SIGNUP_CREDITS is 0: customers who sign up at /console/sign-up get no credits, so every call that costs credits answers 402 until an operator grants some",
    );
    expect(run.output.trimEnd().split("\n").at(-1)).toBe(
      "⚠ 2 warnings under step 1 (MAIL_FROM, SIGNUP_CREDITS): read them before customers sign up.",
    );
  });

  test("says what it would check (login, Docker) and never that it logged in", () => {
    const { run, ranDocker } = dryRun();
    expect(run.status, run.output).toBe(0);
    expect(run.output).not.toMatch(/Logged in/i);
    expect(run.output).toContain("Cloudflare login (not checked: dry run)");
    expect(run.output).toContain("would run: wrangler whoami");
    expect(run.output).toContain("Docker (not checked: dry run)");
    expect(run.output).toMatch(
      /would run: \S*docker info \(Docker builds the engine's image, containers\/ffmpeg\/Dockerfile/,
    );
    // Neither wrangler whoami nor docker was run.
    expect(run.commands.some((c) => c.startsWith("whoami"))).toBe(false);
    expect(ranDocker).toBe(false);
  });
});

/**
 * What /docs loads of the renderer, found by its own route: the entry module and every module it imports,
 * statically or on demand, followed through the files themselves.
 */
function rendererModules(dir: string) {
  const seen = new Set<string>();
  const queue = ["standalone.esm.js"];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(path.join(dir, file), "utf8");
    for (const m of source.matchAll(/(?:from|import)\s*\(?\s*["'`](\.{1,2}\/[^"'`]+\.js)["'`]/g)) {
      queue.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
    }
  }
  return [...seen].sort();
}

describe("npm run deploy: the static assets", () => {
  test("uploads only the renderer modules /docs loads, not the 49 MB folder with its maps and UMD build", () => {
    const config = configCopy();
    try {
      const run = deploy(
        {
          d1: { "p6-media": UUID },
          r2: ["p6-media-files", "p6-media-fonts"],
          queues: QUEUES,
          secrets: ["ADMIN_TOKEN", "FILE_SIGNING_SECRET", "ENGINE_SECRET"],
        },
        ["--config", config],
      );
      expect(run.status, run.output).toBe(0);
      const call = run.calls.at(-1)!;
      expect(call.args[0]).toBe("deploy");
      const folder = path.join(root, "node_modules/@scalar/api-reference/dist/browser");
      const modules = rendererModules(folder);
      expect(modules.length).toBeGreaterThan(50);
      expect(call.assets).toEqual(modules);
      const shipped = modules.reduce((sum, name) => sum + statSync(path.join(folder, name)).size, 0);
      expect(call.assetBytes).toBe(shipped);
      expect(call.assetBytes!).toBeLessThan(8e6);
      const whole = readdirSync(folder, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .reduce((sum, e) => sum + statSync(path.join(e.parentPath, e.name)).size, 0);
      expect(whole).toBeGreaterThan(5 * shipped);
      expect(run.output).toMatch(new RegExp(`static assets: ${modules.length} of \\d+ files`));
    } finally {
      rmSync(config, { force: true });
    }
  });
});

describe("npm run deploy against an account (wrangler stand-in)", () => {
  test("a fresh account: creates the database, bucket and queues, migrates, sets the secrets, deploys", () => {
    const config = configCopy();
    try {
      const run = deploy(EMPTY, ["--config", config], { ADMIN_TOKEN: "operator-token" });
      expect(run.status, run.output).toBe(0);
      expect(run.commands).toEqual([
        "whoami",
        "d1 info p6-media --json",
        "d1 create p6-media",
        "d1 info p6-media --json",
        "r2 bucket info p6-media-files",
        "r2 bucket create p6-media-files",
        "r2 bucket info p6-media-fonts",
        "r2 bucket create p6-media-fonts",
        // One put per R2 font (CJK, the Indic scripts not bundled), then the emoji pack built from Debian's font.
        ...REMOTE_FONT_FILES.map(
          (font) => `r2 object put p6-media-fonts/${font.key} --file ${font.path} --remote`,
        ),
        `r2 object put p6-media-fonts/${EMOJI_PACK_KEY} --file ${path.join(root, ".wrangler/emoji", EMOJI_PACK_KEY)} --remote`,
        ...QUEUES.flatMap((q) => [`queues info ${q}`, `queues create ${q}`]),
        "d1 migrations apply DB --remote",
        "secret list --format json",
        expect.stringMatching(
          /^deploy --assets \S+ --var PUBLIC_ORIGIN:https:\/\/p6-media-api\.example\.workers\.dev --var WEBHOOK_EGRESS:platform --secrets-file \S+secrets\.json$/,
        ),
      ]);
      expect(run.account).toMatchObject({
        d1: { "p6-media": UUID },
        r2: ["p6-media-files", "p6-media-fonts"],
        queues: QUEUES,
      });
      const secrets = run.calls.at(-1)!.secrets!;
      expect(secrets.ADMIN_TOKEN).toBe("operator-token");
      expect(secrets.FILE_SIGNING_SECRET).toMatch(/^[0-9a-f]{64}$/);
      expect(secrets.ENGINE_SECRET).toMatch(/^[0-9a-f]{64}$/);
      expect(run.output).not.toContain("operator-token");
      expect(readFileSync(config, "utf8")).toContain(`database_id = "${UUID}"`);
    } finally {
      rmSync(config, { force: true });
    }
  });

  test("everything present: creates nothing, keeps the secrets, deploys", () => {
    const config = configCopy();
    writeFileSync(
      config,
      readFileSync(config, "utf8").replace(/^database_id = .*$/m, `database_id = "${UUID}"`),
    );
    try {
      const run = deploy(
        {
          d1: { "p6-media": UUID },
          r2: ["p6-media-files", "p6-media-fonts"],
          queues: QUEUES,
          secrets: ["ADMIN_TOKEN", "FILE_SIGNING_SECRET", "ENGINE_SECRET"],
        },
        ["--config", config],
      );
      expect(run.status, run.output).toBe(0);
      expect(run.commands.filter((c) => c.includes("create"))).toEqual([]);
      expect(run.commands.at(-1)).toMatch(
        /^deploy --assets \S+ --var PUBLIC_ORIGIN:https:\/\/p6-media-api\.example\.workers\.dev --var WEBHOOK_EGRESS:platform$/,
      );
      expect(run.output).toContain("ADMIN_TOKEN: set on the Worker, kept");
    } finally {
      rmSync(config, { force: true });
    }
  });

  const PRESENT: Account = {
    d1: { "p6-media": UUID },
    r2: ["p6-media-files", "p6-media-fonts"],
    queues: QUEUES,
    secrets: ["ADMIN_TOKEN", "FILE_SIGNING_SECRET", "ENGINE_SECRET"],
  };
  const SENDER = "noreply@media.p6.dev";
  const mailOn = (toml: string, from: string, allowed: string) =>
    toml
      .replace(/^MAIL_FROM = .*$/m, `MAIL_FROM = "${from}"`)
      .replace(/^allowed_sender_addresses = .*$/m, `allowed_sender_addresses = ["${allowed}"]`);
  test.each([
    {
      what: "a real sender the binding lists and sign-up credits: no warning",
      edit: (toml: string) =>
        mailOn(toml, SENDER, SENDER).replace(/^SIGNUP_CREDITS = .*$/m, 'SIGNUP_CREDITS = "100"'),
      warnings: [],
    },
    {
      what: "a sender the EMAIL binding does not list",
      edit: (toml: string) =>
        mailOn(toml, SENDER, "other@media.p6.dev").replace(/^SIGNUP_CREDITS = .*$/m, 'SIGNUP_CREDITS = "5"'),
      warnings: [
        `⚠ MAIL_FROM is ${SENDER}, which the EMAIL binding's allowed_sender_addresses (other@media.p6.dev) does not list: Cloudflare would refuse every console mail.`,
      ],
    },
    {
      what: "mail kept in the local mailbox, a placeholder ERROR_TYPE_BASE, SIGNUP_CREDITS unset",
      edit: (toml: string) =>
        toml
          .replace(/^MAIL_TRANSPORT = .*$/m, 'MAIL_TRANSPORT = "mailbox"')
          .replace(/^ERROR_TYPE_BASE = .*$/m, 'ERROR_TYPE_BASE = "https://media.example.com/errors"')
          .replace(/^SIGNUP_CREDITS = .*$/m, ""),
      warnings: [
        "⚠ MAIL_TRANSPORT is mailbox: console mail is kept in the FILES bucket and shown only on loopback (/dev/mailbox, for npm run dev and the tests), never delivered.",
        "⚠ SIGNUP_CREDITS is 0:",
        "⚠ ERROR_TYPE_BASE is https://media.example.com/errors: media.example.com is a placeholder domain.",
      ],
    },
  ])("the real deploy warns too: $what", ({ edit, warnings }) => {
    const config = configCopy();
    writeFileSync(
      config,
      edit(readFileSync(config, "utf8").replace(/^database_id = .*$/m, `database_id = "${UUID}"`)),
    );
    try {
      const run = deploy(PRESENT, ["--config", config]);
      expect(run.status, run.output).toBe(0);
      const said = run.output.split("\n").filter((line) => line.includes("⚠"));
      expect(
        said.slice(0, warnings.length).map((line, i) => line.trim().slice(0, warnings[i]!.length)),
      ).toEqual(warnings);
      expect(said).toHaveLength(warnings.length === 0 ? 0 : warnings.length + 1);
    } finally {
      rmSync(config, { force: true });
    }
  });

  test("no usable Docker: stops after the login check, before creating anything", () => {
    writeFileSync(
      path.join(dir, "docker"),
      "#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n",
    );
    const config = configCopy();
    try {
      const run = deploy(EMPTY, ["--config", config], { ADMIN_TOKEN: "operator-token" });
      expect(run.status).not.toBe(0);
      expect(run.output).toContain("Docker is needed and not usable (Cannot connect to the Docker daemon)");
      expect(run.output).toContain("engine's image, containers/ffmpeg/Dockerfile");
      expect(run.commands).toEqual(["whoami"]);
    } finally {
      rmSync(config, { force: true });
    }
  });

  test("PUBLIC_ORIGIN: required without a custom domain, and an https origin", () => {
    const config = configCopy();
    try {
      const unset = deploy(EMPTY, ["--config", config], { ADMIN_TOKEN: "operator-token", PUBLIC_ORIGIN: "" });
      expect(unset.status).not.toBe(0);
      expect(unset.output).toContain("PUBLIC_ORIGIN is not set and there is no custom domain");
      expect(unset.commands).toEqual([]);
      const http = deploy(EMPTY, ["--config", config], {
        ADMIN_TOKEN: "operator-token",
        PUBLIC_ORIGIN: "http://media.example.com",
      });
      expect(http.output).toContain("PUBLIC_ORIGIN must be an https origin");
      expect(http.commands).toEqual([]);
    } finally {
      rmSync(config, { force: true });
    }
  });

  test("PUBLIC_ORIGIN: the custom domain's when the environment names none", () => {
    const config = configCopy();
    try {
      writeFileSync(
        config,
        readFileSync(config, "utf8").replace(
          /^(name = .*)$/m,
          '$1\nroutes = [{ pattern = "media.example.com", custom_domain = true }]',
        ),
      );
      const routed = deploy(EMPTY, ["--config", config], {
        ADMIN_TOKEN: "operator-token",
        PUBLIC_ORIGIN: "",
      });
      expect(routed.status).toBe(0);
      expect(routed.commands.at(-1)).toMatch(
        / --var PUBLIC_ORIGIN:https:\/\/media\.example\.com --var WEBHOOK_EGRESS:platform/,
      );
    } finally {
      rmSync(config, { force: true });
    }
  });

  test("no ADMIN_TOKEN anywhere and no terminal to ask: stops before deploying", () => {
    const config = configCopy();
    try {
      const run = deploy(EMPTY, ["--config", config]);
      expect(run.status).not.toBe(0);
      expect(run.output).toContain("ADMIN_TOKEN is not set");
      expect(run.commands.some((c) => c.startsWith("deploy"))).toBe(false);
    } finally {
      rmSync(config, { force: true });
    }
  });
});
