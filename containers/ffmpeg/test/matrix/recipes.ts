/**
 * The media matrix (issue 43): one small file per container × codec a customer plausibly sends, and the odd
 * cases (rotation, variable frame rate, a timeline that starts late, one long GOP, a stream without packets,
 * an init-only fragmented MP4), each made by Debian's ffmpeg 5.1 at test time from synthetic sources (a moving
 * test pattern, a chirp that no window of it repeats, so that cross-correlation finds its place). 160×90 at
 * 15 fps for 3 s with a keyframe every second: trims at 30–60 % start between two keyframes, where a demuxer
 * whose seek lands inexactly (MPEG-TS) shows it.
 */

/** What a recipe's file must get from the engine when it is not read. */
export interface Refusal {
  status: number;
  /** The documented message (docs/media-support.md "Refused"). */
  message: RegExp;
}

export interface Recipe {
  /** File name: what the cell is, with its usual extension. */
  name: string;
  /** Container and codecs, as the table shows them. */
  container: string;
  codecs: string;
  /** ffmpeg arguments after the inputs (`-i video -i audio`, as `inputs` says), up to the output file. */
  args: readonly string[];
  /** Which synthetic inputs: video, audio, or both (the default). */
  inputs?: "av" | "video" | "audio";
  /** Audio input's rate and channels (default 48 kHz stereo). */
  audio?: { rate: number; channels: number };
  /** The documented refusal this file must get from every operation (a format the service does not read). */
  refused?: Refusal;
  /** Why the recipe is in the matrix, when not obvious. */
  note?: string;
}

/** The synthetic inputs' shape: small and short so that the whole matrix runs in minutes on two cores. */
export const SOURCE = { width: 160, height: 90, fps: 15, seconds: 3, gop: 15 } as const;

const x264 = (extra: readonly string[] = []) => [
  ...["-c:v", "libx264", "-preset", "veryfast", "-g", String(SOURCE.gop), "-pix_fmt", "yuv420p"],
  ...extra,
];
const NO_B = ["-bf", "0"];
const aac = ["-c:a", "aac", "-b:a", "96k"];
const mp3 = ["-c:a", "libmp3lame", "-b:a", "128k"];
const opus = ["-c:a", "libopus", "-b:a", "64k"];
const vorbis = ["-c:a", "libvorbis", "-q:a", "3"];
const ac3 = ["-c:a", "ac3", "-b:a", "128k"];
const mp2 = ["-c:a", "mp2", "-b:a", "128k"];
const hevc = [
  "-c:v",
  "libx265",
  "-preset",
  "ultrafast",
  "-x265-params",
  `keyint=${SOURCE.gop}:log-level=error`,
];
const vp8 = ["-c:v", "libvpx", "-b:v", "300k", "-g", String(SOURCE.gop), "-deadline", "realtime"];
const vp9 = [
  "-c:v",
  "libvpx-vp9",
  "-b:v",
  "300k",
  "-g",
  String(SOURCE.gop),
  "-deadline",
  "realtime",
  "-cpu-used",
  "8",
];
const av1 = [
  "-c:v",
  "libaom-av1",
  "-cpu-used",
  "8",
  "-b:v",
  "200k",
  "-g",
  String(SOURCE.gop),
  "-row-mt",
  "1",
];
const mpeg2 = ["-c:v", "mpeg2video", "-b:v", "600k", "-g", String(SOURCE.gop), "-bf", "2"];
const mpeg4 = ["-c:v", "mpeg4", "-q:v", "5", "-g", String(SOURCE.gop), "-bf", "1"];
const prores = ["-c:v", "prores_ks", "-profile:v", "0"];
const theora = ["-c:v", "libtheora", "-q:v", "6", "-g", String(SOURCE.gop)];

/** A stream declared in the header whose every packet the `noise` bitstream filter drops. */
const NO_PACKETS = (stream: "v" | "a") => [`-bsf:${stream}`, "noise=drop=1"];

const PS_REFUSED: Refusal = { status: 415, message: /not a supported audio or video format/ };

/** Every file of the matrix. */
export const RECIPES: readonly Recipe[] = [
  // MP4 family
  { name: "h264-aac.mp4", container: "MP4", codecs: "H.264 (B-frames), AAC", args: [...x264(), ...aac] },
  {
    name: "h264-nob-aac.mp4",
    container: "MP4",
    codecs: "H.264 (no B-frames), AAC",
    args: [...x264(NO_B), ...aac],
  },
  {
    name: "h264-opengop-aac.mp4",
    container: "MP4",
    codecs: "H.264 (open GOP), AAC",
    args: [...x264(["-x264-params", "open-gop=1:bframes=3"]), ...aac],
  },
  { name: "hevc-aac.mp4", container: "MP4", codecs: "HEVC, AAC", args: [...hevc, "-tag:v", "hvc1", ...aac] },
  { name: "av1-opus.mp4", container: "MP4", codecs: "AV1, Opus", args: [...av1, ...opus] },
  { name: "mpeg4-mp3.mp4", container: "MP4", codecs: "MPEG-4 Part 2, MP3", args: [...mpeg4, ...mp3] },
  { name: "h264-ac3.mp4", container: "MP4", codecs: "H.264, AC-3", args: [...x264(), ...ac3] },
  {
    name: "h264-pcm.mov",
    container: "MOV",
    codecs: "H.264, PCM s16le",
    args: [...x264(), "-c:a", "pcm_s16le"],
  },
  {
    name: "prores-pcm24.mov",
    container: "MOV",
    codecs: "ProRes 422 Proxy, PCM s24le",
    args: [...prores, "-c:a", "pcm_s24le"],
  },
  { name: "h264-alac.mov", container: "MOV", codecs: "H.264, ALAC", args: [...x264(), "-c:a", "alac"] },
  {
    // No B-frames: with them ffmpeg's fragmenting muxer stretches the first AAC sample over the video's start
    // offset (a 112 ms gap after it), which the engine places by its timestamps and the checker, counting
    // samples, does not (docs/media-support.md "How the corpus check measures").
    name: "h264-aac-frag.mp4",
    container: "fragmented MP4",
    codecs: "H.264 (no B-frames), AAC",
    args: [...x264(NO_B), ...aac, "-movflags", "frag_keyframe+empty_moov+default_base_moof"],
  },
  { name: "h264-aac.3gp", container: "3GP", codecs: "H.264, AAC", args: [...x264(), ...aac, "-ar", "44100"] },
  { name: "mpeg4-aac.3gp", container: "3GP", codecs: "MPEG-4 Part 2, AAC", args: [...mpeg4, ...aac] },
  // Matroska / WebM
  { name: "h264-aac.mkv", container: "Matroska", codecs: "H.264, AAC", args: [...x264(), ...aac] },
  { name: "hevc-ac3.mkv", container: "Matroska", codecs: "HEVC, AC-3", args: [...hevc, ...ac3] },
  { name: "h264-flac.mkv", container: "Matroska", codecs: "H.264, FLAC", args: [...x264(), "-c:a", "flac"] },
  { name: "mpeg2-mp2.mkv", container: "Matroska", codecs: "MPEG-2, MP2", args: [...mpeg2, ...mp2] },
  { name: "vp8-vorbis.webm", container: "WebM", codecs: "VP8, Vorbis", args: [...vp8, ...vorbis] },
  { name: "vp9-opus.webm", container: "WebM", codecs: "VP9, Opus", args: [...vp9, ...opus] },
  { name: "av1-opus.webm", container: "WebM", codecs: "AV1, Opus", args: [...av1, ...opus] },
  // MPEG transport and program streams
  { name: "h264-aac.ts", container: "MPEG-TS", codecs: "H.264 (B-frames), AAC", args: [...x264(), ...aac] },
  {
    name: "h264-nob-mp3.ts",
    container: "MPEG-TS",
    codecs: "H.264 (no B-frames), MP3",
    args: [...x264(NO_B), ...mp3],
  },
  { name: "hevc-ac3.ts", container: "MPEG-TS", codecs: "HEVC, AC-3", args: [...hevc, ...ac3] },
  { name: "mpeg2-mp2.ts", container: "MPEG-TS", codecs: "MPEG-2, MP2", args: [...mpeg2, ...mp2] },
  {
    name: "h264-ac3.m2ts",
    container: "M2TS",
    codecs: "H.264, AC-3",
    args: [...x264(), ...ac3, "-f", "mpegts", "-mpegts_m2ts_mode", "1"],
  },
  {
    name: "mpeg2-mp2.mpg",
    container: "MPEG-PS",
    codecs: "MPEG-2, MP2",
    args: [...mpeg2, ...mp2, "-f", "vob"],
    refused: PS_REFUSED,
    note: "program streams are not read (docs/media-support.md)",
  },
  // Older containers
  { name: "h264-aac.flv", container: "FLV", codecs: "H.264, AAC", args: [...x264(), ...aac, "-ar", "44100"] },
  { name: "mpeg4-mp3.avi", container: "AVI", codecs: "MPEG-4 Part 2, MP3", args: [...mpeg4, ...mp3] },
  {
    name: "h264-pcm.avi",
    container: "AVI",
    codecs: "H.264 (no B-frames), PCM s16le",
    args: [...x264(NO_B), "-c:a", "pcm_s16le"],
  },
  { name: "theora-vorbis.ogv", container: "Ogg", codecs: "Theora, Vorbis", args: [...theora, ...vorbis] },
  // Audio only
  { name: "pcm16.wav", container: "WAV", codecs: "PCM s16le", inputs: "audio", args: ["-c:a", "pcm_s16le"] },
  { name: "pcm24.wav", container: "WAV", codecs: "PCM s24le", inputs: "audio", args: ["-c:a", "pcm_s24le"] },
  { name: "float.wav", container: "WAV", codecs: "PCM f32le", inputs: "audio", args: ["-c:a", "pcm_f32le"] },
  {
    name: "ulaw.wav",
    container: "WAV",
    codecs: "µ-law",
    inputs: "audio",
    audio: { rate: 8000, channels: 1 },
    args: ["-c:a", "pcm_mulaw"],
  },
  {
    name: "ima.wav",
    container: "WAV",
    codecs: "IMA ADPCM",
    inputs: "audio",
    args: ["-c:a", "adpcm_ima_wav"],
  },
  {
    name: "pcm16.aiff",
    container: "AIFF",
    codecs: "PCM s16be",
    inputs: "audio",
    args: ["-c:a", "pcm_s16be"],
  },
  {
    name: "pcm24.aiff",
    container: "AIFF",
    codecs: "PCM s24be",
    inputs: "audio",
    args: ["-c:a", "pcm_s24be"],
  },
  {
    name: "pcm32.aiff",
    container: "AIFF",
    codecs: "PCM s32be",
    inputs: "audio",
    args: ["-c:a", "pcm_s32be"],
  },
  {
    name: "float.aifc",
    container: "AIFF-C",
    codecs: "PCM f32be",
    inputs: "audio",
    args: ["-c:a", "pcm_f32be", "-f", "aiff"],
  },
  {
    name: "ulaw.aifc",
    container: "AIFF-C",
    codecs: "µ-law",
    inputs: "audio",
    audio: { rate: 8000, channels: 1 },
    args: ["-c:a", "pcm_mulaw", "-f", "aiff"],
  },
  {
    name: "alaw.aifc",
    container: "AIFF-C",
    codecs: "A-law",
    inputs: "audio",
    audio: { rate: 8000, channels: 1 },
    args: ["-c:a", "pcm_alaw", "-f", "aiff"],
  },
  {
    name: "ima.aifc",
    container: "AIFF-C",
    codecs: "IMA ADPCM (QuickTime)",
    inputs: "audio",
    args: ["-c:a", "adpcm_ima_qt", "-f", "aiff"],
  },
  { name: "pcm16.caf", container: "CAF", codecs: "PCM s16le", inputs: "audio", args: ["-c:a", "pcm_s16le"] },
  {
    name: "pcm24be.caf",
    container: "CAF",
    codecs: "PCM s24be",
    inputs: "audio",
    args: ["-c:a", "pcm_s24be"],
  },
  { name: "float.caf", container: "CAF", codecs: "PCM f32le", inputs: "audio", args: ["-c:a", "pcm_f32le"] },
  {
    name: "ulaw.caf",
    container: "CAF",
    codecs: "µ-law",
    inputs: "audio",
    audio: { rate: 8000, channels: 1 },
    args: ["-c:a", "pcm_mulaw"],
  },
  {
    name: "alaw.caf",
    container: "CAF",
    codecs: "A-law",
    inputs: "audio",
    audio: { rate: 8000, channels: 1 },
    args: ["-c:a", "pcm_alaw"],
  },
  {
    name: "ima.caf",
    container: "CAF",
    codecs: "IMA ADPCM (QuickTime)",
    inputs: "audio",
    args: ["-c:a", "adpcm_ima_qt"],
  },
  { name: "alac.caf", container: "CAF", codecs: "ALAC", inputs: "audio", args: ["-c:a", "alac"] },
  { name: "aac.caf", container: "CAF", codecs: "AAC", inputs: "audio", args: [...aac] },
  { name: "audio.flac", container: "FLAC", codecs: "FLAC", inputs: "audio", args: ["-c:a", "flac"] },
  {
    name: "cbr-lame.mp3",
    container: "MP3",
    codecs: "MP3 CBR (LAME tag)",
    inputs: "audio",
    audio: { rate: 44100, channels: 2 },
    args: [...mp3],
    note: "its LAME tag states encoder delay and end padding",
  },
  {
    name: "vbr.mp3",
    container: "MP3",
    codecs: "MP3 VBR",
    inputs: "audio",
    audio: { rate: 44100, channels: 2 },
    args: ["-c:a", "libmp3lame", "-q:a", "4"],
  },
  {
    name: "audio.aac",
    container: "AAC (ADTS)",
    codecs: "AAC",
    inputs: "audio",
    args: [...aac, "-f", "adts"],
  },
  { name: "audio.opus", container: "Opus (Ogg)", codecs: "Opus", inputs: "audio", args: [...opus] },
  { name: "vorbis.ogg", container: "Ogg", codecs: "Vorbis", inputs: "audio", args: [...vorbis] },
  {
    name: "flac.oga",
    container: "Ogg",
    codecs: "FLAC",
    inputs: "audio",
    args: ["-c:a", "flac", "-f", "ogg"],
  },
  { name: "aac.m4a", container: "M4A", codecs: "AAC", inputs: "audio", args: [...aac] },
  { name: "aac.mka", container: "Matroska audio", codecs: "AAC", inputs: "audio", args: [...aac] },
  {
    name: "aac-audio-only.ts",
    container: "MPEG-TS",
    codecs: "AAC (audio only)",
    inputs: "audio",
    args: [...aac],
  },
  // The odd cases
  {
    name: "rotated90.mp4",
    container: "MP4",
    codecs: "H.264, AAC; rotation 90°",
    args: [...x264(), ...aac, "-metadata:s:v:0", "rotate=90"],
  },
  {
    name: "vfr.mp4",
    container: "MP4",
    codecs: "H.264, AAC; variable frame rate",
    args: [...x264(), ...aac, "-vf", "select='not(eq(mod(n\\,4)\\,1))'", "-vsync", "vfr"],
  },
  {
    name: "vfr.mkv",
    container: "Matroska",
    codecs: "H.264, Opus; variable frame rate",
    args: [...x264(), ...opus, "-vf", "select='not(eq(mod(n\\,3)\\,2))'", "-vsync", "vfr"],
  },
  {
    name: "start10.mkv",
    container: "Matroska",
    codecs: "H.264, AAC; timeline from 10 s",
    args: [...x264(), ...aac, "-output_ts_offset", "10"],
  },
  {
    name: "start10.ts",
    container: "MPEG-TS",
    codecs: "H.264, AAC; timeline from 10 s",
    args: [...x264(), ...aac, "-output_ts_offset", "10"],
  },
  {
    name: "longgop.mp4",
    container: "MP4",
    codecs: "H.264, AAC; one keyframe",
    args: [...x264(), ...aac, "-g", "600", "-sc_threshold", "0"],
  },
  {
    name: "longgop.ts",
    container: "MPEG-TS",
    codecs: "H.264, AAC; one keyframe",
    args: [...x264(), ...aac, "-g", "600", "-sc_threshold", "0"],
  },
  { name: "video-only.mp4", container: "MP4", codecs: "H.264; no audio", inputs: "video", args: [...x264()] },
  { name: "video-only.webm", container: "WebM", codecs: "VP9; no audio", inputs: "video", args: [...vp9] },
  {
    name: "empty-audio.ts",
    container: "MPEG-TS",
    codecs: "H.264, AAC stream with no packets",
    args: [...x264(), ...aac, ...NO_PACKETS("a")],
    note: "a declared audio stream without packets: ignored",
  },
  {
    name: "empty-audio.mkv",
    container: "Matroska",
    codecs: "H.264, Opus track with no blocks",
    args: [...x264(), ...opus, ...NO_PACKETS("a")],
    note: "a declared audio track without blocks: ignored",
  },
  {
    name: "init-only.mp4",
    container: "fragmented MP4",
    codecs: "H.264, AAC; init segment only (no samples)",
    args: [
      ...x264(),
      ...aac,
      ...NO_PACKETS("v"),
      ...NO_PACKETS("a"),
      "-movflags",
      "frag_keyframe+empty_moov",
    ],
    // A fast trim's first probe seeks, which a file without samples fails: its 415 says it cannot be decoded.
    refused: { status: 415, message: /no audio or video stream|truncated or cannot be decoded/ },
    note: "nothing to present: the documented 415",
  },
];
