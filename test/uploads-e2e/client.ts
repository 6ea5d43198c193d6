import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { Upload } from "tus-js-client";
import { expect, inject } from "vitest";
import { resolveBinaries } from "../../containers/ffmpeg/src/config.ts";

/** What the test:uploads files share: the service under test (global-setup.ts), tus-js-client, read-backs. */

export const base = () => inject("uploadsBase");
export const key = () => inject("uploadsKey");

export const api = (p: string, init: RequestInit = {}) =>
  fetch(`${base()}${p}`, {
    ...init,
    headers: { Authorization: `Bearer ${key()}`, "Content-Type": "application/json", ...init.headers },
  });

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

type Options = ConstructorParameters<typeof Upload>[1];

/** tus-js-client against /v1/uploads with the test's key; `options` over the defaults. */
export function tusUpload(bytes: Buffer, options: Partial<Options>) {
  return new Upload(bytes, {
    endpoint: `${base()}/v1/uploads`,
    headers: { Authorization: `Bearer ${key()}` },
    retryDelays: [250, 1000, 2000],
    storeFingerprintForResuming: false,
    metadata: { filename: "upload.mp4", filetype: "video/mp4" },
    ...options,
  });
}

/** Uploads `bytes` whole with tus-js-client (no interruption); the upload's id. */
export function uploadWhole(bytes: Buffer, options: Partial<Options> = {}) {
  return new Promise<string>((resolve, reject) => {
    const upload = tusUpload(bytes, {
      ...options,
      onError: reject,
      onSuccess: () => resolve(upload.url!.split("/").pop()!),
    });
    upload.start();
  });
}

/** GET /v1/uploads/{id}/content: the stored bytes, as the API gives them back. */
export async function storedBytes(id: string) {
  const response = await api(`/v1/uploads/${id}/content`);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

const { ffprobe } = resolveBinaries(process.env);

/** What ffprobe, run here on the local file, says: what POST /v1/video/probe must answer for the upload. */
export async function ffprobeTruth(file: string) {
  const { stdout: out } = await promisify(execFile)(ffprobe, [
    ...[
      "-v",
      "error",
      "-select_streams",
      "v:0",
      "-show_entries",
      "stream=codec_name,width,height,avg_frame_rate",
    ],
    ...["-show_entries", "format=duration", "-of", "json", file],
  ]);
  const parsed = JSON.parse(out) as {
    streams: { codec_name: string; width: number; height: number; avg_frame_rate: string }[];
    format: { duration: string };
  };
  const video = parsed.streams[0]!;
  return {
    codec: video.codec_name,
    width: video.width,
    height: video.height,
    fps: video.avg_frame_rate,
    duration: Number(parsed.format.duration),
  };
}

/** POST /v1/video/probe on source_upload_id, checked against ffprobe's reading of the local file. */
export async function expectProbeTruth(id: string, file: string) {
  const response = await api("/v1/video/probe", {
    method: "POST",
    headers: { "Idempotency-Key": `probe-${id}` },
    body: JSON.stringify({ source_upload_id: id }),
  });
  expect(response.status).toBe(200);
  const probed = (await response.json()) as {
    codec: string;
    width: number;
    height: number;
    fps: string;
    durationSec: number;
  };
  const truth = await ffprobeTruth(file);
  expect(probed).toMatchObject({
    codec: truth.codec,
    width: truth.width,
    height: truth.height,
    fps: truth.fps,
  });
  expect(probed.durationSec).toBeCloseTo(truth.duration, 1);
}
