import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

/** `redocly lint` with the project's redocly.yaml on a document; its JSON report (totals and problems). */
async function redoclyLint(file: string) {
  const cli = path.join(ROOT, "node_modules/@redocly/cli/bin/cli.js");
  const args = [cli, "lint", file, "--format=json", `--config=${path.join(ROOT, "redocly.yaml")}`];
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
  try {
    return (await exec(process.execPath, args, { env, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    // Exit code 1 when there are errors: the report is still on stdout.
    const stdout = (error as { stdout?: string }).stdout;
    if (stdout?.trim().startsWith("{")) return stdout;
    throw error;
  }
}

/**
 * A loopback helper for the workerd tests, which cannot run processes or Node-only libraries: POST the bytes
 * of a produced file to /probe and get ffprobe's JSON (streams and format) back — checks run on real ffprobe,
 * as the engine's own do; POST an OpenAPI document to /openapi to validate it with @apidevtools/swagger-parser,
 * or to /redocly to get the JSON report of `redocly lint` (@redocly/cli with the project's redocly.yaml);
 * POST a video to /frame?t=<seconds> to get that frame decoded by ffmpeg as raw RGB24 (headers x-width,
 * x-height; `pix_fmt=rgba` for RGBA); POST a video to /frames for its video frames' presentation times and
 * durations (ffprobe -show_frames); POST audio to /samples for the number of samples it decodes to and its
 * rate (ffmpeg decodes it to raw PCM; the count is of the decoded bytes, not of any header).
 */
export async function startInspector(ffprobe: string, ffmpeg: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "p6-inspector-"));
  let n = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url === "/openapi") {
      try {
        await SwaggerParser.validate(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        res.writeHead(200, { "content-type": "application/json" }).end('{"valid":true}');
      } catch (error) {
        res.writeHead(422, { "content-type": "text/plain" }).end(String((error as Error).message));
      }
      return;
    }
    const file = path.join(dir, `f${++n}`);
    if (req.url === "/redocly") {
      writeFileSync(`${file}.json`, Buffer.concat(chunks));
      try {
        res.writeHead(200, { "content-type": "application/json" }).end(await redoclyLint(`${file}.json`));
      } catch (error) {
        res.writeHead(500, { "content-type": "text/plain" }).end(String((error as Error).message));
      } finally {
        rmSync(`${file}.json`, { force: true });
      }
      return;
    }
    writeFileSync(file, Buffer.concat(chunks));
    if (req.url === "/frames" || req.url === "/samples") {
      try {
        if (req.url === "/frames") {
          const { stdout } = await exec(
            ffprobe,
            [
              ...["-v", "error", "-select_streams", "v:0", "-show_entries"],
              ...["frame=best_effort_timestamp_time,pkt_duration_time,duration_time", "-of", "json", file],
            ],
            { maxBuffer: 64 * 1024 * 1024 },
          );
          const frames = (JSON.parse(stdout) as { frames: Record<string, string | undefined>[] }).frames.map(
            (f) => ({
              time: Number(f.best_effort_timestamp_time),
              duration: Number(f.duration_time ?? f.pkt_duration_time),
            }),
          );
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ frames }));
        } else {
          const rate = await exec(ffprobe, [
            ...["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=sample_rate"],
            ...["-of", "csv=p=0", file],
          ]);
          const { stdout } = await exec(
            ffmpeg,
            [
              "-v",
              "error",
              "-i",
              file,
              "-map",
              "0:a:0",
              "-ac",
              "1",
              "-f",
              "s16le",
              "-acodec",
              "pcm_s16le",
              "-",
            ],
            { encoding: "buffer", maxBuffer: 512 * 1024 * 1024 },
          );
          const body = { samples: stdout.length / 2, sample_rate: Number(rate.stdout.trim()) };
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
        }
      } catch (error) {
        res.writeHead(422, { "content-type": "text/plain" }).end(String((error as Error).message));
      } finally {
        rmSync(file, { force: true });
      }
      return;
    }
    if (req.url?.startsWith("/frame")) {
      const query = new URL(req.url, "http://inspector").searchParams;
      const t = query.get("t") ?? "0";
      const pixFmt = query.get("pix_fmt") === "rgba" ? "rgba" : "rgb24";
      try {
        const size = await exec(ffprobe, [
          ...["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height"],
          ...["-of", "csv=p=0", file],
        ]);
        const [width, height] = size.stdout.trim().split(",");
        const { stdout } = await exec(
          ffmpeg,
          ["-v", "error", "-ss", t, "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pixFmt, "-"],
          { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
        );
        res.writeHead(200, { "x-width": width, "x-height": height }).end(stdout);
      } catch (error) {
        res.writeHead(422, { "content-type": "text/plain" }).end(String((error as Error).message));
      } finally {
        rmSync(file, { force: true });
      }
      return;
    }
    try {
      const { stdout } = await exec(ffprobe, [
        "-v",
        "error",
        "-show_streams",
        "-show_format",
        "-of",
        "json",
        file,
      ]);
      res.writeHead(200, { "content-type": "application/json" }).end(stdout);
    } catch (error) {
      res.writeHead(422, { "content-type": "text/plain" }).end(String((error as Error).message));
    } finally {
      rmSync(file, { force: true });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}
