import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, newAccount, newKey } from "../helpers/api";
import { bytes, createUpload, cutOff, head, patch, sha1Base64, sha256Base64, sha256Hex } from "./support";

/**
 * Lossless uploads (issue 37): whatever the sequence of PATCH sizes, interruptions and HEADs, the bytes R2
 * holds at the end are the bytes sent. Real Worker, real upload Durable Object, real local R2; the stored
 * object is read back from the bucket and compared by sha256 with the file.
 *
 * The property test runs UPLOAD_PROPERTY_RUNS plans (default 6, a few seconds) from UPLOAD_PROPERTY_SEED
 * (default 37): `UPLOAD_PROPERTY_RUNS=200 npx vitest run --project worker test/uploads/lossless.test.ts`
 * runs many more, and a failure prints the seed and the plan that reproduce it.
 */

const MiB = 1024 * 1024;
const PART = 8 * MiB;
const text = new TextEncoder();

async function storedBytes(accountId: string, id: string) {
  const object = await env.FILES.get(`accounts/${accountId}/uploads/${id}`);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}

const offsetOf = async (key: string, path: string) => {
  const response = await head(key, path);
  expect(response.status).toBe(200);
  return Number(response.headers.get("upload-offset"));
};

describe("lossless: every byte sent is the byte stored", () => {
  it("three 10-byte PATCHes inside one part are stored in order (the issue's repro)", async () => {
    const { key, accountId } = await newAccount();
    const { id, path } = await createUpload(key, 30);
    for (const [i, letter] of ["A", "B", "C"].entries()) {
      const response = await patch(key, path, i * 10, text.encode(letter.repeat(10)));
      expect(response.status).toBe(204);
    }
    const view = (await (await call(path, { key })).json()) as { state: string };
    expect(view.state).toBe("complete");
    const stored = await storedBytes(accountId, id);
    expect(new TextDecoder().decode(stored!)).toBe("AAAAAAAAAABBBBBBBBBBCCCCCCCCCC");
  });

  it("a read-only key's HEAD does not stop another client's PATCH; a writer's does", async () => {
    const { key, accountId } = await newAccount();
    const readKey = await newKey(accountId, { scopes: ["read"] });
    const data = bytes(3 * MiB, 5);
    const { id, path } = await createUpload(key, data.byteLength);
    const sent = MiB + 7;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Sends `sent` bytes, then waits (a slow client) until released, then the rest.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(data.slice(0, sent));
      },
      async pull(controller) {
        await released;
        try {
          controller.enqueue(data.slice(sent));
          controller.close();
        } catch {
          // Stopped meanwhile.
        }
      },
    });
    const running = patch(key, path, 0, body);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The read key only looks: the committed offset, and the PATCH goes on.
    expect(await offsetOf(readKey, path)).toBe(0);
    release();
    const done = await running;
    expect(done.status).toBe(204);
    expect(done.headers.get("upload-offset")).toBe(String(data.byteLength));
    expect(await sha256Hex((await storedBytes(accountId, id))!)).toBe(await sha256Hex(data));
  });

  // One step of a client: a PATCH of `size` bytes, plain, cut off after `cut` of them (its body errors), or
  // stalled after `cut` of them while a HEAD is sent (from a writer, which stops it, or from a read-only key,
  // which does not); with an Upload-Checksum or none.
  const step = fc.record({
    size: fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 64 * 1024 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 16 }) },
      { weight: 1, arbitrary: fc.integer({ min: MiB, max: PART + MiB }) },
    ),
    kind: fc.constantFrom("plain", "plain", "cut", "head", "readHead"),
    cut: fc.double({ min: 0, max: 1, noNaN: true }),
    checksum: fc.constantFrom(null, null, "sha1", "sha256"),
  });
  const plan = fc.record({
    length: fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 256 * 1024 }) },
      { weight: 2, arbitrary: fc.integer({ min: PART - 100_000, max: PART + 100_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 2 * PART, max: 2 * PART + MiB }) },
    ),
    steps: fc.array(step, { minLength: 1, maxLength: 25 }),
  });
  type Step = { size: number; kind: string; cut: number; checksum: string | null };

  async function checksumHeader(name: string | null, body: Uint8Array): Promise<Record<string, string>> {
    if (name === null) return {};
    const digest = name === "sha1" ? await sha1Base64(body) : await sha256Base64(body);
    return { "Upload-Checksum": `${name} ${digest}` };
  }

  /** Runs one step from `offset`; the offset the server then reports (HEAD by a writer, nothing running). */
  async function run(key: string, readKey: string, path: string, data: Uint8Array, offset: number, s: Step) {
    const chunk = data.slice(offset, Math.min(data.byteLength, offset + s.size));
    const sent = Math.floor(chunk.byteLength * s.cut);
    const headers = await checksumHeader(s.checksum, chunk);
    if (s.kind === "plain") {
      const response = await patch(key, path, offset, chunk, headers);
      expect(response.status).toBe(204);
      expect(Number(response.headers.get("upload-offset"))).toBe(offset + chunk.byteLength);
    } else if (s.kind === "cut") {
      await patch(key, path, offset, cutOff(chunk.slice(0, sent)), headers).catch(() => undefined);
    } else {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (sent > 0) controller.enqueue(chunk.slice(0, sent));
        },
        async pull(controller) {
          await released;
          try {
            controller.enqueue(chunk.slice(sent));
            controller.close();
          } catch {
            // The PATCH was stopped by the HEAD.
          }
        },
      });
      const running = patch(key, path, offset, body, headers).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const during = await offsetOf(s.kind === "head" ? key : readKey, path);
      // A writer's HEAD stops the PATCH where it is; a read-only key's only sees the committed offset.
      if (s.kind === "readHead") expect(during).toBe(offset);
      expect(during).toBeGreaterThanOrEqual(offset);
      expect(during).toBeLessThanOrEqual(offset + sent);
      release();
      await running;
    }
    const now = await offsetOf(key, path);
    expect(now).toBeGreaterThanOrEqual(offset);
    expect(now).toBeLessThanOrEqual(offset + chunk.byteLength);
    // A checksummed PATCH keeps all of its bytes or none.
    if (s.checksum !== null) expect([offset, offset + chunk.byteLength]).toContain(now);
    return now;
  }

  it("any PATCH sizes, interruptions and HEADs: sha256(stored) = sha256(sent)", async () => {
    const { key, accountId } = await newAccount();
    const readKey = await newKey(accountId, { scopes: ["read"] });
    const runs = Number(env.UPLOAD_PROPERTY_RUNS) || 6;
    const seed = Number(env.UPLOAD_PROPERTY_SEED) || 37;
    let round = 0;
    await fc.assert(
      fc.asyncProperty(plan, async ({ length, steps }) => {
        const data = bytes(length, ++round);
        const { id, path } = await createUpload(key, length);
        let offset = 0;
        for (const s of steps) {
          if (offset === length) break;
          offset = await run(key, readKey, path, data, offset, s);
        }
        // The client finishes from wherever it stands.
        while (offset < length) {
          const response = await patch(key, path, offset, data.slice(offset));
          expect(response.status).toBe(204);
          offset = Number(response.headers.get("upload-offset"));
        }
        const view = (await (await call(path, { key })).json()) as { state: string; offset: number };
        expect(view).toMatchObject({ state: "complete", offset: length });
        const stored = await storedBytes(accountId, id);
        expect(stored?.byteLength).toBe(length);
        expect(await sha256Hex(stored!)).toBe(await sha256Hex(data));
        // Deleted, so that many runs stay within the account's bytes quota.
        await call(path, { method: "DELETE", key, headers: { "Tus-Resumable": "1.0.0" } });
      }),
      { seed, numRuns: runs, endOnFailure: true },
    );
  }, 600_000);
});
