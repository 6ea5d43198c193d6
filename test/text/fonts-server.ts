import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { buildEmojiPack } from "../../scripts/lib/emoji-pack.ts";
import { EMOJI_FONT_PATH, REMOTE_FONT_FILES } from "../../src/text/remote-fonts.ts";

const run = promisify(execFile);

/**
 * Global setup of the worker project for test/text: what workerd cannot do itself, served on loopback.
 *   GET /fonts/<key>    an R2 font (src/text/remote-fonts.ts REMOTE_FONT_FILES) read from Debian's package
 *                       path; 404 when its package (fonts-noto-cjk, fonts-noto-core) is not installed.
 *   GET /emoji-pack     the colour emoji pack as `npm run dev` builds it (scripts/lib/emoji-pack.ts);
 *                       404 when fonts-noto-color-emoji is not installed.
 *   GET /pango?text=&font=&size=[&rtl=1]   a reference rendering by another shaping stack (Pango +
 *                       HarfBuzz + FreeType, Debian's pango-view) as PNG, black on transparent;
 *                       404 when pango-view (pango1.0-tools) is not installed.
 */
export default async function setup(project: TestProject) {
  const pango = ["/usr/bin/pango-view", "/usr/local/bin/pango-view"].find((p) => existsSync(p));
  let emojiPack: Buffer | undefined;
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname.startsWith("/fonts/")) {
        const key = decodeURIComponent(url.pathname.slice("/fonts/".length));
        const file = REMOTE_FONT_FILES.find((f) => f.key === key);
        if (!file || !existsSync(file.path)) return void res.writeHead(404).end(`${key} is not installed`);
        return void res.writeHead(200).end(await readFile(file.path));
      }
      if (url.pathname === "/emoji-pack") {
        if (!existsSync(EMOJI_FONT_PATH))
          return void res.writeHead(404).end(`${EMOJI_FONT_PATH} is not installed`);
        emojiPack ??= buildEmojiPack(EMOJI_FONT_PATH).pack;
        return void res.writeHead(200).end(emojiPack);
      }
      if (url.pathname === "/pango") {
        if (!pango) return void res.writeHead(404).end("pango-view is not installed (pango1.0-tools)");
        const dir = await mkdtemp(path.join(os.tmpdir(), "p6-pango-"));
        try {
          const out = path.join(dir, "ref.png");
          const args = [
            "--no-display",
            "-q",
            "--pixels",
            "--hinting=none",
            "--antialias=gray",
            "--margin=8",
            "--background=transparent",
            "--foreground=#000000",
            `--font=${url.searchParams.get("font")} ${url.searchParams.get("size")}`,
            `--output=${out}`,
            `--text=${url.searchParams.get("text")}`,
          ];
          if (url.searchParams.get("rtl")) args.push("--rtl");
          // pango-view converts --text from the locale's charset: under a C/POSIX locale (an `env -i` shell,
          // a bare CI runner) any non-ASCII text fails with "Invalid byte sequence in conversion input".
          await run(pango, args, { timeout: 60_000, env: { ...process.env, LC_ALL: "C.UTF-8" } });
          return void res.writeHead(200, { "Content-Type": "image/png" }).end(await readFile(out));
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      res.writeHead(404).end();
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("fontsUrl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

declare module "vitest" {
  export interface ProvidedContext {
    /** test/text/fonts-server.ts: R2 fonts from Debian's packages and pango-view reference renderings. */
    fontsUrl: string;
  }
}
