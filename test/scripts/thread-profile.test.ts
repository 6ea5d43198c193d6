/** bench:load's BENCH_PERF fold (bench/lib/thread-profile.ts): whose CPU a perf sample of workerd's thread is. */
import { describe, expect, test } from "vitest";
import { ownerOf } from "../../bench/lib/thread-profile.ts";

// Stacks leaf first, as `perf script -F tid,ip,sym` prints them (addresses dropped), from a bench:load run.
describe("ownerOf", () => {
  test("the outermost JS frame's script owns the sample", () => {
    expect(
      ownerOf([
        "JS:wasm-function[194]-194-turbofan",
        "Builtins_JSToWasmWrapper",
        "JS:o+compositeOver index.js:66200:23",
        "JS:^run index.js:74763:12",
        "Builtins_RunMicrotasks",
      ]),
    ).toBe("the Worker: WASM (image codecs)");
    expect(
      ownerOf([
        "Builtins_MapPrototypeGet",
        "JS:^queryWithCache index.js:36224:23",
        "kj::TaskSet::Task::fire",
      ]),
    ).toBe("the Worker: JS and the runtime it calls");
    // The Worker's D1 call runs the simulator's code inside it: the outermost script is the simulator's caller.
    expect(
      ownerOf(["sqlite3VdbeExec", "JS:+'#query database.worker.js:206:12", "JS:+ database.worker.js:244:51"]),
    ).toBe("local D1 (miniflare)");
    expect(ownerOf(["Builtins_MapPrototypeGet", "JS:^#finishBatch collector.worker.js:627:15"])).toBe(
      "wrangler's local trace collector",
    );
    expect(ownerOf(["memcpy", "JS:+'put bucket.worker.js:1:1"])).toBe("local R2 (miniflare)");
    expect(ownerOf(["x", "JS:+'fetch entry.worker.js:99:14"])).toBe(
      "other miniflare workers (entry, queues, Durable Object wrappers)",
    );
  });

  test("without a JS frame: the trace collector's native side, or the runtime", () => {
    expect(ownerOf(["workerd::tracing::TailEvent::copyTo", "workerd::tracing::TailStreamWriter::pump"])).toBe(
      "wrangler's local trace collector",
    );
    expect(ownerOf(["kj::HttpServer::Connection::loop", "kj::_::waitImpl"])).toBe(
      "runtime outside any script (HTTP, RPC, I/O, GC)",
    );
  });
});
