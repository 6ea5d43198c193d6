import { z } from "./zod.ts";

/** Output formats of video.extract-audio; `original` copies the stream into a container that holds it. */
export const AUDIO_FORMATS = ["mp3", "m4a", "wav", "flac", "opus", "original"] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** Every sample rate the API names. */
export const SAMPLE_RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 96000] as const;

/** The rates each encoder takes, of those (MP3 stops at 48 kHz, Opus runs at 8/12/16/24/48 kHz). */
export const SAMPLE_RATES_OF: Record<Exclude<AudioFormat, "original">, readonly number[]> = {
  mp3: SAMPLE_RATES.filter((rate) => rate <= 48000),
  m4a: SAMPLE_RATES,
  wav: SAMPLE_RATES,
  flac: SAMPLE_RATES,
  opus: [8000, 16000, 24000, 48000],
};

/** Formats whose encoder takes a bitrate (wav and flac are lossless, original a copy). */
const WITH_BITRATE: readonly AudioFormat[] = ["mp3", "m4a", "opus"];

/** video.extract-audio (decisions.md §4): the first audio stream, encoded or copied. */
export const VideoExtractAudioParamsSchema = z
  .strictObject({
    format: z
      .enum(AUDIO_FORMATS)
      .optional()
      .openapi({ description: "Default mp3; original copies the stream." }),
    bitrate: z
      .string()
      .regex(/^\d{2,3}k$/, "Must be like 128k.")
      .refine((v) => {
        const kbps = Number.parseInt(v, 10);
        return kbps >= 32 && kbps <= 320;
      }, "Must be between 32k and 320k.")
      .optional()
      .openapi({
        description: "32k–320k; default 128k for mp3, m4a and opus; not with wav, flac or original.",
        example: "192k",
      }),
    sample_rate: z
      .union(SAMPLE_RATES.map((rate) => z.literal(rate)))
      .optional()
      .openapi({
        description:
          "Output sample rate in Hz; default the source's. mp3 takes up to 48000, opus 8000, 16000, 24000 or 48000; not with original.",
      }),
    channels: z
      .union([z.literal(1), z.literal(2)])
      .optional()
      .openapi({ description: "1 or 2; default the source's; not with original." }),
  })
  .superRefine((p, ctx) => {
    const format = p.format ?? "mp3";
    if (format === "original") {
      for (const key of ["bitrate", "sample_rate", "channels"] as const) {
        if (p[key] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "Does not apply to format original (a stream copy).",
          });
      }
      return;
    }
    if (p.bitrate !== undefined && !WITH_BITRATE.includes(format))
      ctx.addIssue({ code: "custom", path: ["bitrate"], message: `Does not apply to lossless ${format}.` });
    if (p.sample_rate !== undefined && !SAMPLE_RATES_OF[format].includes(p.sample_rate))
      ctx.addIssue({
        code: "custom",
        path: ["sample_rate"],
        message: `Must be one of ${SAMPLE_RATES_OF[format].join(", ")} for ${format}.`,
      });
  })
  .openapi("VideoExtractAudioParams");
