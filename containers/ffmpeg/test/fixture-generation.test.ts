import { execFile } from "node:child_process";
import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { resolveBinaries } from "../src/config.ts";
import { FIXTURES, generateFixtures } from "./support/media.ts";

const exec = promisify(execFile);
const { ffmpeg, ffprobe } = resolveBinaries(process.env);

/**
 * Made again by the test (the rest are linked from the run's fixture folder): an MP4 whose index ffmpeg writes
 * last, and the fixture cut from it (its first 60 %). The cheapest pair with the shape of the issue's
 * huge-16384x8192.mp4 and its faststart remux, which take seconds of CPU each.
 */
const REMADE = [FIXTURES.avTail, FIXTURES.truncated];

/**
 * Issue 42: e2e files generated fixtures into one folder at once, and one remuxed a huge-16384x8192.mp4 that
 * another was still writing ("moov atom not found"). Here two generators share a folder: the second starts as
 * soon as the first's av-tail.mp4 shows under its name, and a watcher copies it the moment its name appears,
 * as a reader would take it.
 */
describe("generateFixtures: two generators in one folder at once", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "p6-fixtures-race-"));
    const made = inject("fixtureDir");
    for (const name of readdirSync(made)) {
      if (!REMADE.includes(name as (typeof REMADE)[number]) && !name.startsWith(".")) {
        linkSync(path.join(made, name), path.join(dir, name));
      }
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("both finish, a file is never seen under its name before it is whole, nothing is cut from a part", async () => {
    const file = (name: string) => path.join(dir, name);
    const snapshot = file("seen-av-tail.mp4");
    let seen = false;
    let firstDone = false;
    const first = generateFixtures(ffmpeg, dir).finally(() => {
      firstDone = true;
    });
    while (!seen && !firstDone) {
      if (existsSync(file(FIXTURES.avTail))) {
        copyFileSync(file(FIXTURES.avTail), snapshot);
        seen = true;
      }
      await sleep(1);
    }
    const second = generateFixtures(ffmpeg, dir);
    const outcomes = await Promise.allSettled([first, second]);

    expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : o.status))).toEqual([
      "fulfilled",
      "fulfilled",
    ]);
    expect(seen).toBe(true);
    // The copy taken the moment the name appeared is a whole MP4: ffprobe finds its index and duration.
    const probed = await exec(ffprobe, ["-v", "error", "-show_entries", "format=duration", snapshot])
      .then(({ stdout }) => stdout.trim())
      .catch((error: Error) => error.message);
    expect(probed).toMatch(/^\[FORMAT\]\nduration=6\.\d+\n\[\/FORMAT\]$/);
    // truncated.mp4 is what FIXTURES says: the first 60 % of av-tail.mp4, not of a part of it.
    const whole = readFileSync(file(FIXTURES.avTail));
    expect(
      readFileSync(file(FIXTURES.truncated)).equals(whole.subarray(0, Math.floor(whole.length * 0.6))),
    ).toBe(true);
    expect(readdirSync(dir).filter((name) => name.startsWith(".partial-"))).toEqual([]);
  });
});
