/** loadConfig: the engine's environment, its defaults and its bounds (a bad value stops the start). */
import os from "node:os";
import { describe, expect, test } from "vitest";
import { loadConfig } from "../src/config.ts";

/** Only what binary resolution needs from this process's environment, so its other variables do not count. */
const { PATH, FFMPEG_PATH, FFPROBE_PATH } = process.env;
const env = (extra: Record<string, string> = {}) => ({
  PATH,
  FFMPEG_PATH,
  FFPROBE_PATH,
  ENGINE_SECRET: "s",
  ...extra,
});

describe("loadConfig", () => {
  test("defaults", () => {
    const config = loadConfig(env());
    expect(config).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      allowPrivateSources: false,
      slots: os.availableParallelism(),
      queue: 2 * os.availableParallelism(),
      connectTimeoutMs: 10_000,
      readTimeoutMs: 30_000,
      x264Preset: "veryfast",
      downloadAheadBytes: 8 * 1024 * 1024,
      warmProbes: 3,
      warmCommands: 2,
      lightSlots: os.availableParallelism(),
      taskNice: 10,
    });
  });

  test("ENGINE_SECRET is required", () => {
    expect(() => loadConfig(env({ ENGINE_SECRET: "" }))).toThrow(/ENGINE_SECRET is required/);
  });

  test.each([
    ["ENGINE_WARM_PROBES", "0", "warmProbes", 0],
    ["ENGINE_WARM_PROBES", "32", "warmProbes", 32],
    ["ENGINE_WARM_COMMANDS", "0", "warmCommands", 0],
    ["ENGINE_WARM_COMMANDS", "16", "warmCommands", 16],
    ["ENGINE_SLOTS", "1", "slots", 1],
    ["ENGINE_LIGHT_SLOTS", "0", "lightSlots", 0],
    ["ENGINE_TASK_NICE", "0", "taskNice", 0],
    ["ENGINE_TASK_NICE", "19", "taskNice", 19],
    ["ENGINE_QUEUE", "0", "queue", 0],
    ["PORT", "0", "port", 0],
    ["ENGINE_DOWNLOAD_LEAD_BYTES", "8388608", "downloadLeadBytes", 8388608],
  ] as const)("%s=%s is taken", (name, value, key, expected) => {
    expect(loadConfig(env({ [name]: value }))[key]).toBe(expected);
  });

  test.each([
    ["ENGINE_WARM_PROBES", "33"],
    ["ENGINE_WARM_PROBES", "-1"],
    ["ENGINE_WARM_PROBES", "two"],
    ["ENGINE_WARM_COMMANDS", "17"],
    ["ENGINE_SLOTS", "0"],
    ["ENGINE_TASK_NICE", "20"],
    ["ENGINE_LIGHT_SLOTS", "-1"],
    ["ENGINE_QUEUE", "1.5"],
    ["PORT", "65536"],
    ["ENGINE_READ_TIMEOUT_MS", "99"],
    ["ENGINE_DOWNLOAD_AHEAD_BYTES", "1024"],
    ["ENGINE_DOWNLOAD_LEAD_BYTES", "1024"],
  ])("%s=%s stops the start, naming the variable and its range", (name, value) => {
    expect(() => loadConfig(env({ [name]: value }))).toThrow(
      new RegExp(`^${name} must be an integer between`),
    );
  });

  test("ENGINE_RESERVED_SLOTS: half the slots by default, at most one fewer than the slots", () => {
    expect(loadConfig(env({ ENGINE_SLOTS: "2" })).reservedSlots).toBe(1);
    expect(loadConfig(env({ ENGINE_SLOTS: "5" })).reservedSlots).toBe(2);
    expect(loadConfig(env({ ENGINE_SLOTS: "1" })).reservedSlots).toBe(0);
    expect(loadConfig(env({ ENGINE_SLOTS: "4", ENGINE_RESERVED_SLOTS: "3" })).reservedSlots).toBe(3);
    expect(loadConfig(env({ ENGINE_SLOTS: "4", ENGINE_RESERVED_SLOTS: "0" })).reservedSlots).toBe(0);
    expect(() => loadConfig(env({ ENGINE_SLOTS: "4", ENGINE_RESERVED_SLOTS: "4" }))).toThrow(
      /^ENGINE_RESERVED_SLOTS must be an integer between 0 and 3/,
    );
  });

  test("ENGINE_RESERVE_HOLD_MS: 30 s by default", () => {
    expect(loadConfig(env()).reserveHoldMs).toBe(30_000);
    expect(loadConfig(env({ ENGINE_RESERVE_HOLD_MS: "0" })).reserveHoldMs).toBe(0);
  });

  test("ENGINE_TASK_MIN_SLOTS: off by default, at most the slots", () => {
    expect(loadConfig(env({ ENGINE_SLOTS: "2" })).taskMinSlots).toBe(0);
    expect(loadConfig(env({ ENGINE_SLOTS: "2", ENGINE_TASK_MIN_SLOTS: "1" })).taskMinSlots).toBe(1);
    expect(() => loadConfig(env({ ENGINE_SLOTS: "2", ENGINE_TASK_MIN_SLOTS: "3" }))).toThrow(
      /^ENGINE_TASK_MIN_SLOTS must be an integer between 0 and 2/,
    );
  });

  test("ALLOW_PRIVATE_SOURCES is on only for the exact value true", () => {
    expect(loadConfig(env({ ALLOW_PRIVATE_SOURCES: "true" })).allowPrivateSources).toBe(true);
    expect(loadConfig(env({ ALLOW_PRIVATE_SOURCES: "1" })).allowPrivateSources).toBe(false);
  });
});
