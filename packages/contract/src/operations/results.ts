/**
 * What each operation produces, as the engine reports it (X-Engine-Result of a file answer, the JSON body of a
 * probe) and as the public result carries it after `id`, `type`, `url` and `expires_at` (decisions.md §5). One
 * schema per operation, with an example true for that operation: the OpenAPI document shows these, the Worker
 * parses the engine's answers with them.
 */
import { z } from "../params/zod.ts";

/** Every container an output file can be in, by its `format` name. */
export const OUTPUT_FORMATS = [
  "mp4",
  "webm",
  "mkv",
  "jpeg",
  "png",
  "webp",
  "mp3",
  "m4a",
  "wav",
  "flac",
  "opus",
  "ogg",
  "mka",
  "3gp",
  "aiff",
  "caf",
] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The formats an audio output can be in: an encode's (mp3 m4a wav flac opus) or a copy's container. */
const AUDIO_OUTPUT_FORMATS = [
  "mp3",
  "m4a",
  "wav",
  "flac",
  "opus",
  "ogg",
  "mka",
  "3gp",
  "aiff",
  "caf",
] as const;

const sizeBytes = z.number().int().min(0).openapi({ description: "Size of the produced file in bytes." });
const width = z.number().int().openapi({ description: "Width of the output in pixels." });
const height = z.number().int().openapi({ description: "Height of the output in pixels." });
const duration = z.number().openapi({ description: "Duration of the output in seconds." });
const trimWindow = {
  duration,
  start: z.number().openapi({
    description: "Actual start in the source (fast mode: the keyframe at or before the asked start).",
  }),
  end: z.number().openapi({ description: "Actual end in the source: start + duration." }),
};

export const ImageWatermarkResultSchema = z.object({
  format: z.enum(["jpeg", "png", "webp"]).openapi({ description: "Format of the output image." }),
  size_bytes: sizeBytes,
  width,
  height,
});

export const VideoWatermarkResultSchema = z.object({
  format: z.enum(["mp4"]).openapi({ description: "Always mp4 (H.264 + AAC, faststart)." }),
  size_bytes: sizeBytes,
  width,
  height,
  duration,
});

export const VideoExtractCoverResultSchema = z.object({
  format: z.enum(["jpeg", "png", "webp"]).openapi({ description: "The asked format (default jpeg)." }),
  size_bytes: sizeBytes,
  width,
  height,
});

export const VideoTrimResultSchema = z.object({
  format: z.enum(["mp4", "webm", "mkv"]).openapi({
    description: "mp4 when re-encoded; a fast cut keeps the source's family (mp4, webm or mkv).",
  }),
  size_bytes: sizeBytes,
  width,
  height,
  ...trimWindow,
  copied: z.boolean().openapi({
    description:
      "true when the video was stream-copied from a keyframe (fast; its audio re-encoded to exactly the copied video's interval); false when the cut was re-encoded (accurate, or a fast cut whose keyframe lies before the source's presented start, which a copy cannot present exactly).",
  }),
});

export const AudioTrimResultSchema = z.object({
  format: z.enum(AUDIO_OUTPUT_FORMATS).openapi({ description: "The source codec's container." }),
  size_bytes: sizeBytes,
  ...trimWindow,
  copied: z.boolean().openapi({
    description:
      "true when the audio stream was copied unchanged (the window is the whole stream); false when the cut was re-encoded to be exact.",
  }),
});

export const VideoExtractAudioResultSchema = z.object({
  format: z
    .enum(AUDIO_OUTPUT_FORMATS)
    .openapi({ description: "The asked format; with original, the container that holds the stream." }),
  size_bytes: sizeBytes,
  duration,
});

/** video.probe's answer: interface.md's probe result without id and type. */
export const VideoProbeResultSchema = z.object({
  codec: z.string().openapi({ description: "Codec of the first video stream (ffprobe's name)." }),
  durationSec: z.number().openapi({ description: "Duration in seconds, on a player's timeline." }),
  fps: z.string().openapi({ description: 'Frame rate as a reduced fraction, e.g. "30000/1001".' }),
  hasAlpha: z.boolean().openapi({ description: "The pixel format (or VP9 alpha_mode) carries alpha." }),
  width,
  height,
});
export type ProbeResult = z.output<typeof VideoProbeResultSchema>;

/**
 * X-Engine-Result of any file answer: every field a file result may have. Each operation's own schema above is
 * a narrowing of it (checked where the registry is built).
 */
export const EngineResultSchema = z.object({
  format: z.enum(OUTPUT_FORMATS),
  size_bytes: sizeBytes,
  width: width.optional(),
  height: height.optional(),
  duration: duration.optional(),
  start: z.number().optional(),
  end: z.number().optional(),
  copied: z.boolean().optional(),
});
export type EngineResult = z.output<typeof EngineResultSchema>;
