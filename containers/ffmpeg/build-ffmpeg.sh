#!/usr/bin/env bash
# The engine's ffmpeg and ffprobe: Debian's own ffmpeg 5.1 source package (the version apt would install,
# Debian's patches applied), configured with only what the engine and its tests use, its libav* linked in.
#
# Why: Debian's ffmpeg loads 215 shared libraries (every codec, device, filter and protocol library Debian
# enables) and each start of ffmpeg or ffprobe cost ≈ 150 ms of CPU in the dynamic loader and the kernel
# before reading a byte. The engine starts several a second under load (docs/performance.md "What one job
# costs the engine"). This build loads 18 and starts in 13–18 ms. The decoders, demuxers, muxers and filters
# are ffmpeg's own, all of them, as in Debian's build; the external libraries are those the engine needs:
#   encoders  libx264 (H.264), libmp3lame, libopus, libvorbis, libwebp; libvpx (VP8/VP9 with alpha, decoding)
#   decoders  libdav1d (AV1: 5.1 has no software AV1 decoder of its own), libspeex (Speex in FLV and Ogg)
#   formats   zlib, bzip2, lzma (compressed Matroska, PNG, TIFF), iconv (subtitle charsets)
# Left out, with Debian's build: input and output devices (except lavfi, which the engine's tests use to
# make fixtures; the engine forces a demuxer on every input and never opens a device), TLS (the engine
# downloads sources itself and ffmpeg reads them over loopback HTTP), hardware acceleration, text drawing
# (the Worker draws text marks), and the other codec libraries Debian adds (x265, aom, svt-av1, rav1e encoders;
# JPEG XL, SVG, tracker-module and game-music decoders), which no operation of the API produces or accepts.
#
# Usage: build-ffmpeg.sh <prefix>   installs <prefix>/bin/ffmpeg, <prefix>/bin/ffprobe and
#        <prefix>/runtime-packages (the Debian packages of the libraries they load, for the runtime image).
# Needs Debian (bookworm), and root when build packages are missing. ≈ 8 min on 2 free cores.
# Used by containers/ffmpeg/Dockerfile, and by `npm run build:ffmpeg` for the local engine (.tools/ffmpeg).
set -euo pipefail
prefix="${1:?usage: build-ffmpeg.sh <prefix>}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export DEBIAN_FRONTEND=noninteractive

packages=(build-essential pkg-config nasm dpkg-dev xz-utils
  libx264-dev libmp3lame-dev libopus-dev libvorbis-dev libvpx-dev libwebp-dev libdav1d-dev libspeex-dev
  zlib1g-dev libbz2-dev liblzma-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "build-ffmpeg.sh: missing packages (install them as root): ${missing[*]}" >&2; exit 1; }
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The source package, from deb-src twins of the system's own package sources, in lists of their own (the
# system's apt configuration is left as it is).
mkdir -p "$work/sources" "$work/lists/partial"
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$work/sources/$(basename "$f")"
done
if [ -f /etc/apt/sources.list ]; then
  sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$work/sources/system.list"
fi
apt_src=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/sources"
  -o "Dir::State::Lists=$work/lists" -o "APT::Sandbox::User=root")
apt-get -qq "${apt_src[@]}" update
version="$(dpkg-query -W -f '${Version}' ffmpeg 2>/dev/null || apt-cache policy ffmpeg | awk '/Candidate:/ { print $2 }')"
# The installed (or candidate) version's source; the newest one when the mirror no longer has it.
(cd "$work" && { apt-get -qq "${apt_src[@]}" source "ffmpeg${version:+=$version}" >/dev/null 2>&1 ||
  apt-get -qq "${apt_src[@]}" source ffmpeg >/dev/null; })
src="$(find "$work" -maxdepth 1 -type d -name 'ffmpeg-*' | head -1)"
[ -n "$src" ] || { echo "build-ffmpeg.sh: the ffmpeg source package did not unpack" >&2; exit 1; }

cd "$src"
./configure --prefix="$prefix" --toolchain=hardened --extra-version="p6" \
  --disable-autodetect --disable-doc --disable-debug --disable-ffplay \
  --disable-shared --enable-static --disable-postproc \
  --disable-indevs --enable-indev=lavfi --disable-outdevs \
  --enable-gpl --enable-libx264 --enable-libmp3lame --enable-libopus --enable-libvorbis --enable-libvpx \
  --enable-libwebp --enable-libdav1d --enable-libspeex --enable-zlib --enable-bzlib --enable-lzma --enable-iconv \
  >"$work/configure.log" || { tail -30 "$work/configure.log" >&2; exit 1; }
make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
make install-progs >/dev/null
strip "$prefix/bin/ffmpeg" "$prefix/bin/ffprobe"

# The packages owning the libraries the two programs load (dpkg knows a merged-/usr path under one spelling).
for lib in $(ldd "$prefix/bin/ffmpeg" "$prefix/bin/ffprobe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u); do
  dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null || dpkg -S "${lib#/usr}" 2>/dev/null ||
    { echo "build-ffmpeg.sh: no package owns $lib" >&2; exit 1; }
done | cut -d: -f1 | sort -u >"$prefix/runtime-packages"
echo "ffmpeg $version built into $prefix: $(ldd "$prefix/bin/ffmpeg" | wc -l) libraries loaded, from $(wc -l <"$prefix/runtime-packages") packages"
