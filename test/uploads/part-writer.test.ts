import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  PartSession,
  type PartStore,
  PartStoreFailed,
  readTail,
  TailCorrupt,
} from "../../src/uploads/part-writer";
import { bytes } from "./support";

/**
 * The part writer's invariant, unit by unit: after every commit, the parts recorded plus the stored tail are
 * exactly the bytes sent, in order. Small parts and chunks (P = 64, C = 16) so every boundary case comes up
 * in a few hundred random sessions; the property test (lossless.test.ts) checks the same against real R2.
 */

const P = 64;
const C = 16;

/** The object's storage as a map, and R2 as the parts it was given (the last upload of a number wins). */
function world() {
  const chunks = new Map<number, Uint8Array>();
  const recorded = new Map<number, string>();
  const uploaded = new Map<string, Uint8Array>();
  let failNext = false;
  const store: PartStore = {
    getChunk: (k) => chunks.get(k),
    putChunk: (k, value) => chunks.set(k, value),
    deleteChunk: (k) => chunks.delete(k),
    putPart: (part) => recorded.set(part.partNumber, part.etag),
  };
  let etags = 0;
  const sink = async (partNumber: number, value: Uint8Array): Promise<R2UploadedPart> => {
    if (failNext) {
      failNext = false;
      throw new Error("R2 is down");
    }
    const etag = `etag-${++etags}`;
    uploaded.set(etag, value.slice());
    return { partNumber, etag };
  };
  /** The file as stored: recorded parts 1 … n in order, then the tail. */
  const file = (offset: number) => {
    const whole = Math.floor(offset / P);
    const out = new Uint8Array(offset);
    for (let n = 1; n <= whole; n++) {
      const etag = recorded.get(n);
      if (!etag) throw new Error(`part ${n} is not recorded`);
      out.set(uploaded.get(etag)!, (n - 1) * P);
    }
    expect([...recorded.keys()].filter((n) => n > whole)).toEqual([]);
    out.set(readTail(store, offset, P, C), whole * P);
    return out;
  };
  return { store, sink, chunks, file, failPart: () => (failNext = true) };
}

describe("PartSession", () => {
  it("three 10-byte writes inside one part keep every byte (the issue's repro)", async () => {
    const w = world();
    let offset = 0;
    for (const letter of "ABC") {
      const session = new PartSession(w.store, offset, P, w.sink, C);
      await session.write(new TextEncoder().encode(letter.repeat(10)));
      offset = session.commit();
    }
    expect(new TextDecoder().decode(w.file(offset))).toBe(
      `${"A".repeat(10)}${"B".repeat(10)}${"C".repeat(10)}`,
    );
    // Chunk 0 holds bytes 0..15, chunk 1 bytes 16..29: the invariant's layout.
    expect([...w.chunks.keys()].sort()).toEqual([0, 1]);
    expect(w.chunks.get(0)!.byteLength).toBe(16);
    expect(w.chunks.get(1)!.byteLength).toBe(14);
  });

  it("any sessions of any sizes, some abandoned: stored = sent after every commit", async () => {
    // A session: the pieces its body arrives in, and whether it commits (an abandoned one: a checksum mismatch).
    const session = fc.record({
      pieces: fc.array(fc.integer({ min: 1, max: 2 * P + 5 }), { minLength: 1, maxLength: 6 }),
      commits: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(session, { minLength: 1, maxLength: 12 }), async (plan) => {
        const w = world();
        const data = bytes(
          plan.flatMap((s) => s.pieces).reduce((a, b) => a + b, 0),
          plan.length,
        );
        let offset = 0;
        for (const { pieces, commits } of plan) {
          const writer = new PartSession(w.store, offset, P, w.sink, C);
          let at = offset;
          for (const piece of pieces) {
            await writer.write(data.subarray(at, at + piece));
            at += piece;
          }
          if (!commits) continue;
          expect(writer.commit()).toBe(at);
          offset = at;
          expect(w.file(offset)).toEqual(data.subarray(0, offset));
        }
      }),
      { seed: 37, numRuns: 300 },
    );
  });

  it("R2 refusing a part: the parts it took count, nothing after; never less than the start", async () => {
    const w = world();
    const data = bytes(4 * P, 7);
    const first = new PartSession(w.store, 0, P, w.sink, C);
    await first.write(data.subarray(0, 40));
    expect(first.commit()).toBe(40);
    // One part goes through, the next is refused.
    const second = new PartSession(w.store, 40, P, w.sink, C);
    await second.write(data.subarray(40, 40 + P));
    w.failPart();
    await expect(second.write(data.subarray(40 + P, 3 * P))).rejects.toBeInstanceOf(PartStoreFailed);
    expect(second.commit(true)).toBe(P);
    expect(w.file(P)).toEqual(data.subarray(0, P));
    // Refused on its first part: nothing of the session counts, the earlier tail stays.
    const third = new PartSession(w.store, P, P, w.sink, C);
    await third.write(data.subarray(P, P + 10));
    expect(third.commit()).toBe(P + 10);
    const fourth = new PartSession(w.store, P + 10, P, w.sink, C);
    w.failPart();
    await expect(fourth.write(data.subarray(P + 10, 3 * P))).rejects.toBeInstanceOf(PartStoreFailed);
    expect(fourth.commit(true)).toBe(P + 10);
    expect(w.file(P + 10)).toEqual(data.subarray(0, P + 10));
  });

  it("a stored tail that contradicts the invariant is refused, not patched over", async () => {
    const w = world();
    const session = new PartSession(w.store, 0, P, w.sink, C);
    await session.write(bytes(30, 3));
    session.commit();
    // The old bookkeeping's damage: chunk 1 overwritten short.
    w.chunks.set(1, bytes(4, 9));
    expect(() => new PartSession(w.store, 30, P, w.sink, C)).toThrow(TailCorrupt);
    expect(() => readTail(w.store, 30, P, C)).toThrow(TailCorrupt);
    // A chunk past the tail is as wrong.
    w.chunks.set(1, bytes(14, 9));
    w.chunks.set(2, bytes(1, 9));
    expect(() => readTail(w.store, 30, P, C)).toThrow(TailCorrupt);
  });
});
