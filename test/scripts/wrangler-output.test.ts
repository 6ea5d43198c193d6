import { describe, expect, it } from "vitest";
import { onceTables } from "../../scripts/lib/wrangler-output.ts";

/** The shape of `wrangler dev`'s output (4.164, recorded from npm run dev), shortened. */
const TABLE = [
  "Your Worker has access to the following bindings:",
  "Binding                                   Resource                  Mode",
  "env.KEY_GATE (KeyGate)                    Durable Object            local",
  'env.MAIL_FROM ("noreply@example.com")     Environment Variable      local',
  "",
];
const CONTAINERS = [
  "The following containers are available:",
  "- p6-media-api-mediaenginecontainer (/p6/containers/ffmpeg/Dockerfile)",
  "",
];
const STATUS = "\u001b[2m⎔ Connection status updated\u001b[22m";

function run(lines: string[]) {
  const filter = onceTables();
  return [...lines.flatMap((line) => filter.feed(line)), ...filter.flush()];
}

describe("onceTables: wrangler dev's bindings table and containers list, once", () => {
  it("drops a reprint identical to the last, and the status line announcing it", () => {
    const start = [" ⛅️ wrangler 4.164.0", "Using secrets defined in .dev.vars", ...TABLE, ...CONTAINERS];
    const out = run([
      ...start,
      "⎔ Starting local server...",
      STATUS,
      ...TABLE,
      ...CONTAINERS,
      "[wrangler:info] Ready on http://127.0.0.1:8787",
      // Another wrangler dev on the machine starts, then stops.
      STATUS,
      ...TABLE,
      ...CONTAINERS,
      STATUS,
      ...TABLE,
      ...CONTAINERS,
      "[wrangler:info] GET /healthz 200 OK (3ms)",
    ]);
    expect(out).toEqual([
      ...start,
      "⎔ Starting local server...",
      "[wrangler:info] Ready on http://127.0.0.1:8787",
      "[wrangler:info] GET /healthz 200 OK (3ms)",
    ]);
  });

  it("prints a block that changed, with its status line", () => {
    const changed = [...TABLE.slice(0, 3), "env.OTHER (other-worker)  Worker  local [connected]", ""];
    expect(run([...TABLE, STATUS, ...changed, STATUS, ...changed])).toEqual([...TABLE, STATUS, ...changed]);
  });

  it("a status line without a block after it is printed; so is a block cut short by wrangler's exit", () => {
    expect(run([STATUS, "✘ [ERROR] Address already in use", ...TABLE.slice(0, 2)])).toEqual([
      STATUS,
      "✘ [ERROR] Address already in use",
      ...TABLE.slice(0, 2),
    ]);
  });
});
