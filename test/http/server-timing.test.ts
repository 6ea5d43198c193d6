import { describe, expect, it } from "vitest";
import { call, newAccount } from "../helpers/api";
import { media, operate } from "../helpers/media";

/** X-Debug-Timing → Server-Timing (hono/timing): on a synchronous operation's success only. */
const dur = (header: string, phase: string) =>
  Number(new RegExp(`(?:^|,)\\s*${phase};dur=([\\d.]+)`).exec(header)?.[1]);

describe("Server-Timing", () => {
  it("a success: every phase once, total within the client's own wall time and above each phase", async () => {
    const { key } = await newAccount({ credits: 10 });
    const started = performance.now();
    const response = await operate(
      "/v1/video/probe",
      key,
      { source_url: media("av.mp4") },
      {
        headers: { "X-Debug-Timing": "1" },
      },
    );
    const wall = performance.now() - started;
    expect(response.status).toBe(200);
    const header = response.headers.get("server-timing") ?? "";
    const names = [...header.matchAll(/(?:^|,)\s*([\w-]+);dur=/g)].map((m) => m[1]!);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(["auth", "engine", "total"]));
    for (const phase of names.filter((n) => n !== "total"))
      expect(dur(header, phase)).toBeLessThanOrEqual(dur(header, "total") + 0.1);
    expect(dur(header, "total")).toBeLessThanOrEqual(wall + 1);
  });

  it("not on a refused request, not on other routes, not without X-Debug-Timing", async () => {
    const { key } = await newAccount({ credits: 10 });
    const headers = { "X-Debug-Timing": "1" };
    const refused = await operate(
      "/v1/video/probe",
      key,
      { source_url: "http://10.0.0.1/a.mp4" },
      { headers },
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get("server-timing")).toBeNull();
    const list = await call("/v1/tasks", { key, headers });
    expect(list.status).toBe(200);
    expect(list.headers.get("server-timing")).toBeNull();
    const plain = await operate("/v1/video/probe", key, { source_url: media("av.mp4") });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("server-timing")).toBeNull();
  });
});
