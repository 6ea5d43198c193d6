import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

/**
 * Per-file timings for docs/performance.md "Test suite time": vitest's own diagnostics of every test module
 * (setup, import, tests) plus wall-clock marks, so a file's whole cost — including the runner startup no
 * duration field counts, such as a workerd instance per file — can be read from the report.
 *   npm test -- --reporter=default --reporter=./test/support/file-times-reporter.ts
 * writes FILE_TIMES_OUT (default test-artifacts/file-times.json); summarise with scripts/file-times.ts.
 */
type Row = {
  project: string;
  file: string;
  queuedAt?: number;
  startedAt?: number;
  endedAt?: number;
  tests: number;
  state?: string;
  diagnostic?: ReturnType<TestModule["diagnostic"]>;
};

export default class FileTimesReporter implements Reporter {
  private readonly rows = new Map<string, Row>();
  private runStartedAt = 0;

  private row(module: TestModule): Row {
    const key = `${module.project.name}\0${module.moduleId}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { project: module.project.name, file: module.relativeModuleId, tests: 0 };
      this.rows.set(key, row);
    }
    return row;
  }

  onTestRunStart() {
    this.runStartedAt = Date.now();
  }

  onTestModuleQueued(module: TestModule) {
    this.row(module).queuedAt = Date.now();
  }

  onTestModuleStart(module: TestModule) {
    this.row(module).startedAt = Date.now();
  }

  onTestModuleEnd(module: TestModule) {
    const row = this.row(module);
    row.endedAt = Date.now();
    row.tests = [...module.children.allTests()].length;
    row.state = module.state();
    row.diagnostic = module.diagnostic();
  }

  onTestRunEnd() {
    const out = process.env.FILE_TIMES_OUT ?? "test-artifacts/file-times.json";
    writeFileSync(
      out,
      JSON.stringify(
        { startedAt: this.runStartedAt, endedAt: Date.now(), files: [...this.rows.values()] },
        null,
        1,
      ),
    );
  }
}
