/** Output containers: how each `format` is muxed and served, and which audio codec goes into which. */
import type { OutputFormat } from "../protocol.ts";
import type { AudioInfo } from "./media-info.ts";

export interface Container {
  format: OutputFormat;
  /** ffmpeg muxer (-f). */
  muxer: string;
  ext: string;
  contentType: string;
  /** Extra muxer options. */
  options: string[];
}

const FASTSTART = ["-movflags", "+faststart"];

export const CONTAINERS: Record<OutputFormat, Container> = {
  mp4: { format: "mp4", muxer: "mp4", ext: "mp4", contentType: "video/mp4", options: FASTSTART },
  webm: { format: "webm", muxer: "webm", ext: "webm", contentType: "video/webm", options: [] },
  mkv: { format: "mkv", muxer: "matroska", ext: "mkv", contentType: "video/x-matroska", options: [] },
  jpeg: { format: "jpeg", muxer: "image2pipe", ext: "jpg", contentType: "image/jpeg", options: [] },
  png: { format: "png", muxer: "image2pipe", ext: "png", contentType: "image/png", options: [] },
  webp: { format: "webp", muxer: "image2pipe", ext: "webp", contentType: "image/webp", options: [] },
  mp3: { format: "mp3", muxer: "mp3", ext: "mp3", contentType: "audio/mpeg", options: [] },
  m4a: { format: "m4a", muxer: "mp4", ext: "m4a", contentType: "audio/mp4", options: FASTSTART },
  wav: { format: "wav", muxer: "wav", ext: "wav", contentType: "audio/wav", options: [] },
  flac: { format: "flac", muxer: "flac", ext: "flac", contentType: "audio/flac", options: [] },
  opus: { format: "opus", muxer: "opus", ext: "opus", contentType: "audio/ogg; codecs=opus", options: [] },
  ogg: { format: "ogg", muxer: "ogg", ext: "ogg", contentType: "audio/ogg", options: [] },
  mka: { format: "mka", muxer: "matroska", ext: "mka", contentType: "audio/x-matroska", options: [] },
  // AMR only (amr-cut.ts): the MP4 muxer refuses it; 3GP states by its edit list which samples play.
  "3gp": { format: "3gp", muxer: "3gp", ext: "3gp", contentType: "audio/3gpp", options: FASTSTART },
  // The PCM, G.711 and IMA ADPCM of AIFF and CAF sources, kept in their own container: WAV holds neither
  // big-endian PCM nor QuickTime's IMA ADPCM.
  aiff: { format: "aiff", muxer: "aiff", ext: "aiff", contentType: "audio/aiff", options: [] },
  caf: { format: "caf", muxer: "caf", ext: "caf", contentType: "audio/x-caf", options: [] },
};

/** Sniffed formats read by the MP4/MOV demuxer. */
const MP4_FAMILY = new Set(["mp4", "mov", "m4a"]);

/** Codecs an AIFF/AIFF-C or CAF file (ffmpeg 5.1's muxers) holds, written back into one as they are. */
const AIFF_CODECS = /^(pcm_(s8|s16be|s24be|s32be|f32be|f64be|alaw|mulaw)|adpcm_ima_qt)$/;
const CAF_CODECS = /^(pcm_(s8|s16[lb]e|s24[lb]e|s32[lb]e|f32[lb]e|f64[lb]e|alaw|mulaw)|adpcm_ima_qt)$/;

/**
 * The container of an AIFF or CAF source (`sourceFormat`, as sniffed) when it holds `codec` as it is: a
 * cut or copy of it stays what it was. Null for other sources and for codecs with a container of their
 * own (AAC and ALAC in CAF go into M4A, as from any source).
 */
function sourceContainer(codec: string, sourceFormat: string | undefined): Container | null {
  if (sourceFormat === "aiff" && AIFF_CODECS.test(codec)) return CONTAINERS.aiff;
  if (sourceFormat === "caf" && CAF_CODECS.test(codec)) return CONTAINERS.caf;
  return null;
}

/**
 * The container an audio stream of `codec` can be copied into unchanged, or null when none fits; from an
 * AIFF or CAF source (`sourceFormat`), that container for the codecs it holds.
 */
export function audioCopyContainer(codec: string, sourceFormat?: string): Container | null {
  const own = sourceContainer(codec, sourceFormat);
  if (own !== null) return own;
  // AC-3 and E-AC-3 from an MP4/MOV: M4A keeps the edit list that hides their encoder's delay (256 samples);
  // Matroska cannot state it, and the copy began 5 ms early (h264-ac3.mp4 of the media matrix).
  if ((codec === "ac3" || codec === "eac3") && MP4_FAMILY.has(sourceFormat ?? "")) return CONTAINERS.m4a;
  if (codec === "mp3") return CONTAINERS.mp3;
  if (codec === "aac" || codec === "alac") return CONTAINERS.m4a;
  if (/^pcm_(s16le|s24le|s32le|u8|f32le|f64le|alaw|mulaw)$/.test(codec)) return CONTAINERS.wav;
  if (codec === "flac") return CONTAINERS.flac;
  if (codec === "opus") return CONTAINERS.opus;
  if (codec === "vorbis") return CONTAINERS.ogg;
  if (codec === "amr_nb" || codec === "amr_wb") return CONTAINERS["3gp"];
  if (["ac3", "eac3", "dts", "truehd", "mp2", "wmav2"].includes(codec) || codec.startsWith("pcm_")) {
    return CONTAINERS.mka;
  }
  return null;
}

/** PCM codecs a WAV file holds as they are. */
const WAV_PCM = /^pcm_(s16le|s24le|s32le|u8|f32le|f64le|alaw|mulaw)$/;

/** The little-endian PCM of the same depth (WAV holds no big-endian or signed 8-bit PCM). */
function wavPcm(codec: string): string {
  if (WAV_PCM.test(codec)) return codec;
  const m = /^pcm_([suf])(\d+)/.exec(codec);
  const bits = Number(m?.[2] ?? 16);
  if (m?.[1] === "f") return bits === 64 ? "pcm_f64le" : "pcm_f32le";
  if (bits <= 8) return "pcm_u8";
  return bits > 24 ? "pcm_s32le" : bits > 16 ? "pcm_s24le" : "pcm_s16le";
}

/**
 * Layouts libopus cannot take as they are, and the layout of the same channel order it takes: "(side)"
 * layouts name their surround channels differently, so they are relabelled, not mixed.
 */
const OPUS_LAYOUTS: Record<string, string> = { "5.1(side)": "5.1", "5.0(side)": "5.0", "7.1(wide)": "7.1" };

/** Filters an Opus encode of `audio` needs (none for mono, stereo and the layouts libopus knows). */
export function opusLayoutFilters(audio: AudioInfo, channels?: number): string[] {
  const target = audio.layout === undefined ? undefined : OPUS_LAYOUTS[audio.layout];
  return target === undefined || (channels !== undefined && channels <= 2)
    ? []
    : [`channelmap=channel_layout=${target}`];
}

/** The same as -af arguments. */
export function opusLayoutArgs(audio: AudioInfo, channels?: number): string[] {
  const filters = opusLayoutFilters(audio, channels);
  return filters.length === 0 ? [] : ["-af", filters.join(",")];
}

/**
 * The ADPCM block size (bytes) of an encode at `rate` × `channels`: about 10 ms of samples per block. WAV
 * cannot say that the last block is partly padding, so a decoder plays it whole: a smaller block is a
 * smaller excess (the encoder's default, 1024 bytes, is 92 ms of mono at 22.05 kHz) for 7 header bytes per
 * channel and block.
 */
export function adpcmBlockSize(rate: number, channels: number): number {
  const bytes = (rate * channels) / 200 + 7 * channels;
  return Math.min(8192, Math.max(32, 2 ** Math.round(Math.log2(bytes))));
}

/** ADPCM codecs ffmpeg encodes and WAV holds. */
export const WAV_ADPCM = new Set(["adpcm_ms", "adpcm_ima_wav"]);

/** Samples per channel in one ADPCM block of `bytes` (Microsoft: 7 header bytes a channel; IMA: 4). */
function adpcmBlockSamples(codec: string, bytes: number, channels: number): number {
  return codec === "adpcm_ms"
    ? ((bytes - 7 * channels) * 2) / channels + 2
    : ((bytes - 4 * channels) * 2) / channels + 1;
}

/**
 * The ADPCM block size (bytes; ffmpeg's encoders take powers of 2) for a cut of `samples` at `rate`: a
 * decoder plays the last block whole and WAV cannot say it is partly padding, so the blocks should end
 * where the samples do. The largest block (the least header per sample) whose padding at the end is at
 * most 1 ms, else the one with the least padding: fixture.avi's 27 ms window [0.028, 0.055) (1,191
 * stereo samples at 44.1 kHz) takes 64-byte blocks of 52 samples, 5 samples of padding (was 309 with
 * 512-byte blocks).
 */
export function adpcmCutBlock(codec: string, samples: number, rate: number, channels: number): number {
  let best = { bytes: 0, pad: Number.POSITIVE_INFINITY };
  for (let bytes = 8192; bytes >= 32; bytes /= 2) {
    const per = adpcmBlockSamples(codec, bytes, channels);
    if (per < 2) continue;
    const pad = Math.ceil(samples / per) * per - samples;
    if (pad <= rate / 1000) return bytes;
    if (pad < best.pad) best = { bytes, pad };
  }
  return best.bytes;
}

/**
 * How audio.trim encodes a cut of `audio` so that it presents exactly the window it was cut to (a stream
 * copy keeps whole packets, and often priming hidden behind an edit list or pre-skip): the same codec and
 * the container it would be copied into, lossless codecs losslessly. The encoders' own priming (AAC, MP3,
 * Opus) is marked in the file (edit list, LAME tag, pre-skip) and is at most one frame for a player that
 * ignores it. AMR, which no encoder here writes, is its frames copied into 3GP instead (amr-cut.ts); MP3 for
 * the other codecs without an encoder.
 */
export interface CutEncoding {
  container: Container;
  codec: string[];
  frame?: EncoderFrame;
}

/**
 * An encoder whose delay (samples a decoder outputs before the first one given) MP4's edit list hides, and
 * which loses that many samples at the end unless given more: its frame size, the delay, and whether the
 * encoder states it itself (AC-3's first packet at −256) or it must be stated for it (DTS). See
 * audio-encode.ts frameAligned.
 */
export interface EncoderFrame {
  size: number;
  delay: number;
  stated: boolean;
}

export function audioCutEncoding(audio: AudioInfo, sourceFormat?: string): CutEncoding {
  const c = audio.codec;
  const own = sourceContainer(c, sourceFormat);
  // IMA ADPCM (QuickTime): blocks of 64 samples, so a cut ends at most 63 samples after `end`.
  if (own !== null) return { container: own, codec: ["-c:a", c] };
  const stereo = audio.channels > 2 ? ["-ac", "2"] : [];
  if (c === "aac") return { container: CONTAINERS.m4a, codec: ["-c:a", "aac", "-b:a", "192k"] };
  if (c === "alac") return { container: CONTAINERS.m4a, codec: ["-c:a", "alac"] };
  if (c === "flac") return { container: CONTAINERS.flac, codec: ["-c:a", "flac"] };
  if (c.startsWith("pcm_")) return { container: CONTAINERS.wav, codec: ["-c:a", wavPcm(c)] };
  if (WAV_ADPCM.has(c)) {
    const channels = Math.min(2, audio.channels);
    const block = adpcmBlockSize(audio.sampleRate, channels);
    return { container: CONTAINERS.wav, codec: ["-c:a", c, "-block_size", String(block), ...stereo] };
  }
  if (c === "opus") {
    return {
      container: CONTAINERS.opus,
      codec: ["-c:a", "libopus", "-b:a", "128k", ...opusLayoutArgs(audio)],
    };
  }
  if (c === "vorbis") return { container: CONTAINERS.ogg, codec: ["-c:a", "libvorbis", "-q:a", "6"] };
  // AC-3, E-AC-3 and DTS go into M4A, whose edit list hides their encoders' delay (256 and 512 samples,
  // measured): Matroska cannot state it, and a cut there began 5–21 ms late (ac3.mkv, toothsome-dts.mp4).
  if (c === "ac3" || c === "eac3") {
    return {
      container: CONTAINERS.m4a,
      codec: ["-c:a", c, "-b:a", "448k"],
      frame: { size: 1536, delay: 256, stated: true },
    };
  }
  // MP2 too: ffmpeg's encoder states the 481-sample delay of its filter bank (its first packet at −481), and
  // its decoder plays it; Matroska and MPEG-TS cannot hide it, and a cut there began 10 ms before `start`
  // (mpeg2-mp2.mkv and mpeg2-mp2.ts of the media matrix).
  if (c === "mp2") {
    return {
      container: CONTAINERS.m4a,
      codec: ["-c:a", "mp2", "-b:a", "256k", ...stereo],
      frame: { size: 1152, delay: 481, stated: true },
    };
  }
  if (c === "dts") {
    // ffmpeg's DTS encoder is marked experimental; it takes mono, stereo and 5.0/5.1 up to 48 kHz.
    const layout = [1, 2, 5, 6].includes(audio.channels) ? [] : ["-ac", "2"];
    const rate = audio.sampleRate > 48000 ? ["-ar", "48000"] : [];
    return {
      container: CONTAINERS.m4a,
      codec: ["-c:a", "dca", "-strict", "experimental", "-b:a", "768k", ...layout, ...rate],
      frame: { size: 512, delay: 512, stated: false },
    };
  }
  return { container: CONTAINERS.mp3, codec: ["-c:a", "libmp3lame", "-b:a", "192k", ...stereo] };
}
