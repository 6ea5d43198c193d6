import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify, stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { machinePath } from "./fresh-copy.ts";
import { e2eDevOutput, e2eService } from "./service.ts";

const exec = promisify(execFile);
const { dir, base, apiKey, installOutput } = await e2eService();
const readme = readFileSync(path.join(import.meta.dirname, "../../README.md"), "utf8").replace(/\s+/g, " ");

/**
 * Every line `npm install` and `npm run dev` may print on a fresh copy, each with the README words that explain
 * it (issue 41: "prints nothing the README does not explain"). A line no pattern matches is unexplained; a
 * pattern whose words are not in the README explains nothing.
 */
const EXPLAINED: [RegExp, string][] = [
  [/^$/, ""],
  // npm install
  [/^npm warn EBADENGINE /, "npm warn EBADENGINE Unsupported engine"],
  [
    /^(?:added|removed|changed|up to date)\b.* in \d[\d.hms]*$/,
    "npm's own summary (`added … packages in …`)",
  ],
  // npm run dev
  [/^> p6-media-api@\S+ dev$|^> node scripts\/node22\.mjs scripts\/dev\.ts$/, "npm's two-line header"],
  [
    /^Node \S+ is older than 22\.18: installing node-\S+@22 into \.tools\/node \(once\)…$/,
    "into `.tools/node`",
  ],
  [/^Generated \.dev\.vars with /, "`Generated .dev.vars …`"],
  [/^Installing .* \(fonts for text watermarks\)…$/, "installed first with apt-get"],
  [/^Built NotoColorEmoji\.pack: \d+ emoji, [\d.]+ MB\.$/, "`Built NotoColorEmoji.pack …`"],
  [/^Putting \S+ into the local FONTS bucket…$/, "`Putting … into the local FONTS bucket…`"],
  [/^Applying local D1 migrations…$/, "`Applying local D1 migrations…`"],
  [/^Media engine on ffmpeg version .*\.$/, "the ffmpeg the media engine runs on"],
  [/^\(`npm run build:ffmpeg` builds /, "`npm run build:ffmpeg`"],
  [
    /^\[engine\] engine (?:ffmpeg|ffprobe): |^\[engine\] engine listening on http/,
    "the engine's `[engine]` lines",
  ],
  [/^\[engine\] request failed: /, "one per request it fails"],
  [/^\[engine\] job \S+ [a-z.-]+ (?:ok \d+ms|failed [A-Z_]+: )/, "one per job, `job <id> <type> ok <ms>`"],
  [/^\[wrangler\]$/, ""],
  [/^\[wrangler\] ⛅️ wrangler \d|^\[wrangler\] ─+$/, "its banner"],
  [/^\[wrangler\] Using secrets defined in \.dev\.vars$/, "`Using secrets defined in .dev.vars`"],
  [
    /^\[wrangler\] (?:Your Worker has access to the following bindings:|Binding +Resource +Mode|env\.\S+.* local)$/,
    "the bindings table",
  ],
  [
    /^\[wrangler\] (?:The following containers are available:|- \S+ \(\S+Dockerfile\))$/,
    "the containers list",
  ],
  [
    /^\[wrangler\] (?:▲ \[WARNING\] Scheduled Workers are not automatically triggered during local development\.|To manually trigger a scheduled event, run:|curl "http:\/\/127\.0\.0\.1:\d+\/cdn-cgi\/local\/scheduled"|For more details, see https:\/\/developers\.cloudflare\.com\/\S+)$/,
    "a warning that scheduled Workers are not triggered locally",
  ],
  [/^\[wrangler\] ⎔ Starting local server\.\.\.$/, "`⎔ Starting local server...`"],
  [/^\[wrangler\] \[wrangler:info\] Ready on http:\/\/127\.0\.0\.1:\d+$/, "`Ready on …`"],
  [/^\[wrangler\] \[wrangler:info\] [A-Z]+ \S+ \d{3} .*\(\d+ms\)$/, "a line per request"],
  [/^\[wrangler\] \[wrangler:info\] QUEUE \S+ \d+\/\d+ \(\d+ms\)$/, "a line per queue batch"],
  [/^\[wrangler\] \{.*\}$/, "the Worker's own JSON log lines"],
  [
    /^(?:p6 media API is running on |media engine: |inspector: |Dev account |API key: |Webhook secret: |Admin CLI: |Console mail: |Try: curl )/,
    "the addresses, the inspector, and the dev account's API key and webhook secret",
  ],
];

/** The lines no EXPLAINED pattern matches (colours and surrounding spaces aside). */
function unexplained(lines: string[]): string[] {
  return lines
    .map((line) => stripVTControlCharacters(line).replace(/\s+/g, " ").trim())
    .filter((line) => !EXPLAINED.some(([pattern]) => pattern.test(line)));
}

describe("the README's first command, on a fresh copy", () => {
  it("the service answers with the printed key", async () => {
    const response = await fetch(`${base}/v1/tasks`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      has_next: expect.any(Boolean),
      next_cursor: expect.any(String),
    });
    expect(response.headers.get("ratelimit-policy")).toBe('"default";q=60;w=60');
  });

  it("the dev account holds 10,000 credits and the admin CLI reaches it on PORT", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: new URL(base).port };
    delete env.ADMIN_URL;
    // Not execFileSync: a loop blocked for the CLI's seconds (15-60 s on a loaded machine) cannot see the
    // service close the first test's idle keep-alive connection, and the fetch below was then sent on it
    // ("fetch failed … other side closed", twice at load 30).
    const run = async (...args: string[]) => {
      try {
        return (
          await exec("npm", ["run", "--silent", "admin", "--", ...args], { cwd: dir, encoding: "utf8", env })
        ).stdout;
      } catch (error) {
        const { stdout, stderr } = error as { stdout: string; stderr: string };
        throw new Error(`npm run admin -- ${args.join(" ")} failed:\n${stdout}\n${stderr}`);
      }
    };
    const accounts = JSON.parse(await run("accounts", "list")) as { results: { id: string; name: string }[] };
    const dev = accounts.results.find((a) => a.name === "Local development");
    expect(dev).toBeDefined();
    const ledger = JSON.parse(await run("ledger", dev!.id)) as {
      results: { kind: string; amount: number; reason: string }[];
    };
    expect(ledger.results.at(-1)).toMatchObject({ kind: "grant", amount: 10_000, reason: "opening balance" });
    const key = JSON.parse(await run("keys", "create", dev!.id, "--name", "e2e", "--scopes", "read")) as {
      key: string;
    };
    const response = await fetch(`${base}/v1/tasks`, { headers: { Authorization: `Bearer ${key.key}` } });
    expect(response.status).toBe(200);
  });

  it("public documentation is served", async () => {
    expect((await fetch(`${base}/v1/openapi.json`)).status).toBe(200);
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  });

  it("npm install and npm run dev print nothing the README does not explain, each table once", async () => {
    for (const [, words] of EXPLAINED) expect(readme, `README: ${words}`).toContain(words);
    expect(unexplained(installOutput)).toEqual([]);
    // On a Node older than 22.18 (this machine's is 20), npm warns once per package that asks for Node 22.
    const [major, minor] = execFileSync("node", ["--version"], {
      encoding: "utf8",
      env: { ...process.env, PATH: machinePath() },
    })
      .trim()
      .slice(1)
      .split(".")
      .map(Number);
    if (major! < 22 || (major === 22 && minor! < 18)) {
      expect(
        installOutput.filter((l) => l.includes("EBADENGINE Unsupported engine {")).length,
      ).toBeGreaterThan(0);
    }
    // Read now, after the other e2e files (and other wrangler dev on the machine) had their time to make
    // wrangler print its tables again.
    const dev = await e2eDevOutput();
    expect(unexplained(dev)).toEqual([]);
    const count = (title: string) => dev.filter((line) => line.includes(title)).length;
    expect(count("Your Worker has access to the following bindings:")).toBe(1);
    expect(count("The following containers are available:")).toBe(1);
    expect(count("Connection status updated")).toBe(0);
    // The inspector follows PORT (PORT + 442, unless INSPECTOR_PORT says), and says where it is.
    const port = Number(new URL(base).port);
    const inspectorPort = Number(process.env.INSPECTOR_PORT ?? port + 442);
    const inspector = dev
      .map((line) => line.replace(/\s+/g, " ").trim())
      .filter((l) => l.startsWith("inspector:"));
    expect(inspector).toEqual([
      `inspector: 127.0.0.1:${inspectorPort} (the Worker in Chrome DevTools: chrome://inspect)`,
    ]);
  });
});
