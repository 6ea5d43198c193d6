/**
 * npm run deploy: an operator's deploy in one command, with wrangler's own commands (docs/deploy.md).
 *  1. checks the config (wrangler.toml as wrangler reads it; ERROR_TYPE_BASE; a custom domain; PUBLIC_ORIGIN: from
 *     the environment, [vars] or the first custom domain);
 *  2. creates the D1 database, the R2 buckets and the queues when they are absent, and writes the database's
 *     id into wrangler.toml; uploads the fonts too large for the bundle (CJK from Debian's fonts-noto-cjk, the
 *     Indic scripts not bundled from fonts-noto-core, the emoji pack) into the FONTS bucket, one at a time;
 *  3. applies the D1 migrations to the remote database;
 *  4. sets the secrets the Worker lacks (from the environment, else prompted; never rotates one it has);
 *  5. `wrangler deploy` with `--var PUBLIC_ORIGIN:<origin> --var WEBHOOK_EGRESS:platform`, which also builds and
 *     pushes the engine image (containers/ffmpeg/Dockerfile): Docker is checked (`docker info`) with the login,
 *     before anything is created. The static assets uploaded are only the renderer files /docs loads
 *     (src/docs/renderer-files.ts), copied from the [assets] directory
 *     (Scalar's browser build, 49 MB with its source maps and UMD build) and passed as `--assets`.
 *
 *   npm run deploy                   do it
 *   npm run deploy -- --dry-run      print every step, touch nothing remote, run `wrangler deploy --dry-run`
 *   npm run deploy -- --config <f>   another wrangler config (default: wrangler.toml)
 *
 * P6_WRANGLER runs another wrangler executable (the tests use a stand-in that records its calls); P6_DOCKER
 * another docker.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  cpSync,
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
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { unstable_readConfig } from "wrangler";
import { isRendererFile } from "../src/docs/renderer-files.ts";
import { EMOJI_FONT_PATH, EMOJI_PACKAGE, REMOTE_FONT_FILES } from "../src/text/remote-fonts.ts";
import { emojiPackFile } from "./lib/emoji-pack.ts";

const root = path.resolve(import.meta.dirname, "..");
const { values: options } = parseArgs({
  options: {
    "dry-run": { type: "boolean", default: false },
    config: { type: "string", default: "wrangler.toml" },
  },
});
const dryRun = options["dry-run"];
const configPath = path.resolve(root, options.config);
// wrangler finds wrangler.toml in the project by itself; another config is named on every command.
const configArgs = configPath === path.join(root, "wrangler.toml") ? [] : ["--config", configPath];
const wrangler = process.env.P6_WRANGLER ?? path.join(root, "node_modules/.bin/wrangler");
const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  NO_UPDATE_NOTIFIER: "1",
  // Non-interactive confirmations (migrations apply); wrangler still prompts for nothing else.
  CI: "1",
};

/** Secrets the Worker needs; `generate`: none of ours ever reads it back, so a random value serves. */
const SECRETS: { name: string; generate: boolean; purpose: string }[] = [
  { name: "ADMIN_TOKEN", generate: false, purpose: "the operator API token (/admin/v1, npm run admin)" },
  { name: "FILE_SIGNING_SECRET", generate: true, purpose: "the HMAC key of signed /files URLs" },
  {
    name: "ENGINE_SECRET",
    generate: true,
    purpose: "the secret shared by the Worker and its engine containers",
  },
];

/** The engine's image is built locally by `wrangler deploy`: without a running Docker it fails at the very end. */
const docker = process.env.P6_DOCKER ?? "docker";
const DOCKER_PURPOSE =
  "Docker builds the engine's image, containers/ffmpeg/Dockerfile, which wrangler deploy pushes to Cloudflare";

function checkDocker() {
  console.log(`   $ ${docker} info`);
  const result = spawnSync(docker, ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8" });
  if (result.error || result.status !== 0) {
    const why = result.error ? result.error.message : (result.stderr || result.stdout).trim().split("\n")[0];
    throw new Error(`Docker is needed and not usable (${why}): ${DOCKER_PURPOSE}`);
  }
  console.log(`   Docker ${result.stdout.trim()}: ready`);
}

let stepNumber = 0;
function step(title: string) {
  console.log(`\n${++stepNumber}. ${title}`);
}

function show(command: string[]) {
  const args = [...command, ...configArgs];
  return `wrangler ${args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(" ")}`;
}

/** Runs wrangler; its output goes to the terminal unless `capture`. Throws on failure unless `allowFailure`. */
function run(
  args: string[],
  opts: { capture?: boolean; allowFailure?: boolean } = {},
): SpawnSyncReturns<string> {
  console.log(`   $ ${show(args)}`);
  const result = spawnSync(wrangler, [...args, ...configArgs], {
    cwd: root,
    env,
    encoding: "utf8",
    stdio: ["inherit", opts.capture ? "pipe" : "inherit", opts.capture ? "pipe" : "inherit"],
  });
  if (result.error) throw result.error;
  if (result.status !== 0 && !opts.allowFailure) {
    if (opts.capture) process.stderr.write(`${result.stdout}${result.stderr}`);
    throw new Error(`${show(args)} failed (exit ${result.status})`);
  }
  return result;
}

/** `info` succeeds → present; otherwise `create` (whose own failure, e.g. not logged in, stops the deploy). */
function ensure(what: string, info: string[], create: string[]) {
  if (dryRun) {
    console.log(`   would run: ${show(info)}; when absent: ${show(create)}`);
    return;
  }
  if (run(info, { capture: true, allowFailure: true }).status === 0) {
    console.log(`   ${what}: present`);
    return;
  }
  run(create);
  console.log(`   ${what}: created`);
}

// 1. The config, as wrangler reads it.
step(`Config: ${path.relative(root, configPath) || configPath}`);
/** The parts of the config this script reads (wrangler's own types for them do not resolve here). */
interface DeployConfig {
  name: string;
  d1_databases: { binding: string; database_name?: string; database_id?: string }[];
  r2_buckets: { binding: string; bucket_name?: string }[];
  queues: { producers?: { queue: string }[]; consumers?: { queue: string; dead_letter_queue?: string }[] };
  containers?: unknown[];
  vars: Record<string, unknown>;
  routes?: (string | { pattern: string })[];
  assets?: { directory?: string };
  send_email?: { name: string; allowed_sender_addresses?: string[] }[];
}
const config = unstable_readConfig({ config: configPath }) as DeployConfig;
const problems: string[] = [];
const database = config.d1_databases.find((d) => d.binding === "DB");
const bucket = config.r2_buckets.find((b) => b.binding === "FILES");
const fontsBucket = config.r2_buckets.find((b) => b.binding === "FONTS");
if (database?.database_name === undefined) problems.push("no D1 database bound as DB");
if (bucket?.bucket_name === undefined) problems.push("no R2 bucket bound as FILES");
if (fontsBucket?.bucket_name === undefined) problems.push("no R2 bucket bound as FONTS");
for (const font of REMOTE_FONT_FILES)
  if (!existsSync(font.path)) problems.push(`${font.path} is missing: apt-get install ${font.package}`);
if (!existsSync(EMOJI_FONT_PATH))
  problems.push(`${EMOJI_FONT_PATH} is missing: apt-get install ${EMOJI_PACKAGE}`);
const assetsDirectory = config.assets?.directory
  ? path.resolve(path.dirname(configPath), config.assets.directory)
  : undefined;
if (assetsDirectory === undefined || !existsSync(path.join(assetsDirectory, "standalone.esm.js")))
  problems.push(
    `no API reference renderer in [assets] directory ${assetsDirectory ?? "(unset)"}: npm install`,
  );
if (config.containers?.length !== 1) problems.push("expected one [[containers]] entry (the media engine)");
if (String(config.vars.ENGINE_URL ?? "") !== "") {
  problems.push(
    "ENGINE_URL is set: production reaches the engine through the Container binding, leave it empty",
  );
}
if (String(config.vars.ALLOW_PRIVATE_SOURCES ?? "false") !== "false") {
  problems.push("ALLOW_PRIVATE_SOURCES must be false in production");
}
const routeHosts = (config.routes ?? [])
  .map((r) => (typeof r === "string" ? r : r.pattern).replace(/\/.*$/, ""))
  .filter((host) => host !== "" && !host.includes("*"));
// Where every mailed link points (docs/console.md "Mail"): set here, never taken from a request's Host.
const publicOrigin =
  process.env.PUBLIC_ORIGIN ||
  String(config.vars.PUBLIC_ORIGIN ?? "") ||
  (routeHosts[0] ? `https://${routeHosts[0]}` : "");
if (publicOrigin === "") {
  problems.push(
    "PUBLIC_ORIGIN is not set and there is no custom domain: export PUBLIC_ORIGIN, the address customers open (https://<name>.<account subdomain>.workers.dev), or add a custom domain",
  );
} else if (!/^https:\/\/[^/]+$/.test(publicOrigin.replace(/\/$/, ""))) {
  problems.push(
    `PUBLIC_ORIGIN must be an https origin, like https://media.example.com (got ${publicOrigin})`,
  );
}
if (problems.length > 0) {
  for (const p of problems) console.error(`   ✗ ${p}`);
  process.exit(1);
}

/**
 * Names under the domains kept for documentation and testing (RFC 2606, RFC 6761): a value naming one is a
 * placeholder nobody replaced.
 */
const PLACEHOLDER_DOMAIN = /(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost)$/i;
/** The first host name in `value` (a URL, an address, a bare name) under a placeholder domain. */
const placeholderHost = (value: string): string | undefined =>
  value.match(/[\w-]+(?:\.[\w-]+)*/g)?.find((host) => PLACEHOLDER_DOMAIN.test(host));

/** What would deploy but not work as a customer expects: said in words, in the dry run and the real deploy. */
const warnings: string[] = [];
const mailFrom = String(config.vars.MAIL_FROM ?? "") || "noreply@example.com";
const mailTransport = String(config.vars.MAIL_TRANSPORT ?? "") || "cloudflare";
if (mailTransport === "cloudflare" && PLACEHOLDER_DOMAIN.test(mailFrom.split("@").pop() ?? "")) {
  warnings.push(
    `MAIL_FROM is ${mailFrom}, a placeholder: no verification or password-reset mail would be delivered (sign-ups still work; each unsent mail is logged as "console mail not sent"). Set MAIL_FROM, and the EMAIL binding's allowed_sender_addresses, to an address on a domain onboarded to Cloudflare Email Sending (docs/deploy.md "Console mail").`,
  );
} else if (mailTransport === "cloudflare") {
  const allowed = config.send_email?.find((b) => b.name === "EMAIL")?.allowed_sender_addresses;
  if (allowed !== undefined && !allowed.includes(mailFrom)) {
    warnings.push(
      `MAIL_FROM is ${mailFrom}, which the EMAIL binding's allowed_sender_addresses (${allowed.join(", ")}) does not list: Cloudflare would refuse every console mail. List it there.`,
    );
  }
}
if (mailTransport === "mailbox") {
  warnings.push(
    "MAIL_TRANSPORT is mailbox: console mail is kept in the FILES bucket and shown only on loopback (/dev/mailbox, for npm run dev and the tests), never delivered. Set it to cloudflare.",
  );
}
const signupCredits = Number(String(config.vars.SIGNUP_CREDITS ?? "") || "0");
if (signupCredits === 0) {
  warnings.push(
    "SIGNUP_CREDITS is 0: customers who sign up at /console/sign-up get no credits, so every call that costs credits answers 402 until an operator grants some (npm run admin -- credits grant <account_id> <amount> --reason …, or the dashboard). Set SIGNUP_CREDITS in [vars] to the credits a verified sign-up receives.",
  );
}
for (const [name, value] of Object.entries(config.vars)) {
  if (name === "MAIL_FROM" || typeof value !== "string") continue;
  const host = placeholderHost(value);
  if (host !== undefined) warnings.push(`${name} is ${value}: ${host} is a placeholder domain.`);
}
for (const warning of warnings) console.log(`   ⚠ ${warning}`);

const queues = [
  ...new Set([
    ...(config.queues.producers ?? []).map((q) => q.queue),
    ...(config.queues.consumers ?? []).flatMap((q) => [q.queue, q.dead_letter_queue ?? ""]),
  ]),
].filter((q) => q !== "");
const errorTypeBase = String(config.vars.ERROR_TYPE_BASE ?? "");
const domains = (config.routes ?? []).map((r) => (typeof r === "string" ? r : r.pattern));
console.log(`   Worker ${config.name}; D1 ${database!.database_name}; R2 ${bucket!.bucket_name}`);
console.log(`   queues: ${queues.join(", ")}`);
console.log(
  `   routes: ${domains.length > 0 ? domains.join(", ") : "none (workers.dev only; see docs/deploy.md)"}`,
);
console.log(
  `   ERROR_TYPE_BASE: ${errorTypeBase || "unset (problem types are <request origin>/errors/<suffix>; see docs/deploy.md)"}`,
);
console.log(`   PUBLIC_ORIGIN (mailed links): ${publicOrigin}; webhooks through Cloudflare's egress`);

if (dryRun) {
  // Nothing is asked of Cloudflare or Docker here: say what the real deploy checks, never that it passed.
  step("Cloudflare login (not checked: dry run)");
  console.log(
    `   would run: ${show(["whoami"])} (needs \`wrangler login\` or CLOUDFLARE_API_TOKEN; stops the deploy if it fails)`,
  );
  step("Docker (not checked: dry run)");
  console.log(`   would run: ${docker} info (${DOCKER_PURPOSE}; stops the deploy if it fails)`);
} else {
  step("Cloudflare login");
  run(["whoami"]);
  step("Docker");
  checkDocker();
}

// 2. Resources, created when absent.
step(`D1 database ${database!.database_name}`);
ensure(
  "D1 database",
  ["d1", "info", database!.database_name!, "--json"],
  ["d1", "create", database!.database_name!],
);
if (!dryRun) {
  const info = JSON.parse(
    run(["d1", "info", database!.database_name!, "--json"], { capture: true }).stdout,
  ) as {
    uuid: string;
  };
  if (info.uuid !== database!.database_id) {
    // wrangler deploy binds the database by id: record it where the config says it is.
    const toml = readFileSync(configPath, "utf8");
    const updated = toml.replace(
      /^(database_id\s*=\s*)"[^"]*"/m,
      (_, key: string) => `${key}${JSON.stringify(info.uuid)}`,
    );
    if (updated === toml) throw new Error(`${configPath}: no database_id line to update`);
    writeFileSync(configPath, updated);
    console.log(`   ${path.basename(configPath)}: database_id = "${info.uuid}" (commit this change)`);
  }
} else {
  console.log(
    `   would write the database's id into ${path.basename(configPath)} (database_id) if it differs`,
  );
}

step(`R2 bucket ${bucket!.bucket_name}`);
ensure(
  "R2 bucket",
  ["r2", "bucket", "info", bucket!.bucket_name!],
  ["r2", "bucket", "create", bucket!.bucket_name!],
);

step(`R2 bucket ${fontsBucket!.bucket_name} and its fonts`);
ensure(
  "R2 bucket",
  ["r2", "bucket", "info", fontsBucket!.bucket_name!],
  ["r2", "bucket", "create", fontsBucket!.bucket_name!],
);
// Uploaded on every deploy, one at a time (~52 MB with the Indic fonts and the emoji pack, scripts/lib/emoji-pack.ts): a changed Debian package
// reaches production without a version check.
for (const font of [...REMOTE_FONT_FILES, emojiPackFile()!]) {
  const put = [
    "r2",
    "object",
    "put",
    `${fontsBucket!.bucket_name}/${font.key}`,
    "--file",
    font.path,
    "--remote",
  ];
  if (dryRun) console.log(`   would run: ${show(put)}`);
  else run(put);
}

step(`Queues (${queues.length})`);
for (const queue of queues) ensure(`queue ${queue}`, ["queues", "info", queue], ["queues", "create", queue]);

// 3. Migrations.
step("D1 migrations, remote");
const migrate = ["d1", "migrations", "apply", "DB", "--remote"];
if (dryRun) console.log(`   would run: ${show(migrate)}`);
else run(migrate);

// 4. Secrets the Worker lacks: from the environment, else prompted.
step("Secrets");
let present: string[] = [];
if (dryRun) {
  console.log(`   would run: ${show(["secret", "list", "--format", "json"])} and set only the missing ones`);
} else {
  // A Worker that was never deployed has no secrets yet (the command fails).
  const listed = run(["secret", "list", "--format", "json"], { capture: true, allowFailure: true });
  if (listed.status === 0) present = (JSON.parse(listed.stdout) as { name: string }[]).map((s) => s.name);
}
const toSet: Record<string, string> = {};
const prompt = process.stdin.isTTY
  ? createInterface({ input: process.stdin, output: process.stdout })
  : undefined;
for (const secret of SECRETS) {
  if (present.includes(secret.name)) {
    console.log(`   ${secret.name}: set on the Worker, kept`);
    continue;
  }
  const fromEnv = process.env[secret.name];
  if (fromEnv) {
    console.log(`   ${secret.name}: from the environment`);
    if (!dryRun) toSet[secret.name] = fromEnv;
    continue;
  }
  if (dryRun) {
    console.log(
      `   ${secret.name}: ${secret.generate ? "would prompt (empty: generate one)" : "would prompt"}`,
    );
    continue;
  }
  if (prompt === undefined) {
    if (!secret.generate) throw new Error(`${secret.name} is not set: export it (${secret.purpose})`);
    toSet[secret.name] = randomBytes(32).toString("hex");
    console.log(`   ${secret.name}: generated`);
    continue;
  }
  const answer = (
    await prompt.question(
      `   ${secret.name}, ${secret.purpose}${secret.generate ? " (empty: generate one)" : ""}: `,
    )
  ).trim();
  if (answer === "" && !secret.generate) throw new Error(`${secret.name} is required`);
  toSet[secret.name] = answer === "" ? randomBytes(32).toString("hex") : answer;
}
prompt?.close();

/** Every file under `dir`, by its path relative to `dir` with forward slashes. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? filesUnder(dir, name) : [name];
  });
}

/** The static assets to upload: only the renderer files /docs loads, copied into `into`. */
function stageAssets(from: string, into: string) {
  const all = filesUnder(from);
  const shipped = all.filter(isRendererFile);
  const size = (names: string[]) =>
    names.reduce((sum, name) => sum + statSync(path.join(from, name)).size, 0);
  for (const name of shipped) cpSync(path.join(from, name), path.join(into, name));
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  console.log(
    `   static assets: ${shipped.length} of ${all.length} files, ${mb(size(shipped))} of ${mb(size(all))} in ${path.relative(root, from)} (only what /docs loads; no source maps, no UMD build)`,
  );
}

// 5. Deploy (wrangler builds and pushes the engine image as part of it).
step(dryRun ? "wrangler deploy --dry-run" : "wrangler deploy");
const scratch = mkdtempSync(path.join(os.tmpdir(), "p6-deploy-"));
try {
  const assets = path.join(scratch, "assets");
  stageAssets(assetsDirectory!, assets);
  // Production's own settings (docs/deploy.md): mail links, and webhooks through fetch() on Cloudflare's network
  // (WEBHOOK_EGRESS=platform; docs/decisions.md "Webhooks" says why sockets cannot serve there).
  const vars = [
    "--var",
    `PUBLIC_ORIGIN:${publicOrigin.replace(/\/$/, "")}`,
    "--var",
    "WEBHOOK_EGRESS:platform",
  ];
  const deploy = ["deploy", "--assets", assets, ...vars];
  // A dry run builds the Worker only: the engine image needs Docker and is built by the real deploy.
  if (dryRun) deploy.push("--dry-run", "--outdir", path.join(scratch, "dist"), "--containers-rollout=none");
  if (Object.keys(toSet).length > 0) {
    // Uploaded with the version; the file (mode 0600) is removed right after.
    const file = path.join(scratch, "secrets.json");
    writeFileSync(file, JSON.stringify(toSet), { mode: 0o600 });
    deploy.push("--secrets-file", file);
  }
  run(deploy);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(dryRun ? "\nDry run: nothing was created, changed or deployed." : "\nDeployed.");
if (warnings.length > 0) {
  const names = warnings.map((w) => w.split(" ")[0]).join(", ");
  console.log(
    `⚠ ${warnings.length} warning${warnings.length === 1 ? "" : "s"} under step 1 (${names}): read them before customers sign up.`,
  );
}
