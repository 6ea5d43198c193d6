/**
 * scripts/lib/system-ca.sh, which .ci/run sources before anything reaches the npm registry: Node and npm get the
 * machine's CA store (NODE_EXTRA_CA_CERTS) unless the environment already names one. Run under `env -i`, as a
 * fresh CI shell would be.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const bundle = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
].find((file) => existsSync(file));

/** NODE_EXTRA_CA_CERTS after sourcing the script in a shell with only `env`. */
function sourced(env: Record<string, string>): string {
  const r = spawnSync(
    "env",
    [
      "-i",
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      "bash",
      "-c",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template.
      'set -eu; source scripts/lib/system-ca.sh; printf %s "${NODE_EXTRA_CA_CERTS-unset}"',
    ],
    { cwd: root, encoding: "utf8" },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe("scripts/lib/system-ca.sh", () => {
  test.skipIf(!bundle)("names the machine's CA bundle when the environment names none", () => {
    expect(sourced({ PATH: "/usr/bin:/bin" })).toBe(bundle);
  });

  test("keeps a bundle the environment already names", () => {
    expect(sourced({ PATH: "/usr/bin:/bin", NODE_EXTRA_CA_CERTS: "/somewhere/own.pem" })).toBe(
      "/somewhere/own.pem",
    );
  });

  test(".ci/run sources it before its first call to node or npm", () => {
    const lines = readFileSync(path.join(root, ".ci/run"), "utf8").split("\n");
    const sourcedAt = lines.findIndex((line) => line.trim() === "source scripts/lib/system-ca.sh");
    const firstNode = lines.findIndex((line) => /^[^#]*\b(node|npm)\s/.test(line));
    expect(sourcedAt).toBeGreaterThan(-1);
    expect(sourcedAt).toBeLessThan(firstNode);
  });
});
