/** Phase timer behind X-Debug-Timing → Server-Timing (auth, engine, fetch, process, store, total). */
export class Timing {
  private readonly started = performance.now();
  private readonly phases = new Map<string, number>();

  async measure<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.add(phase, performance.now() - start);
    }
  }

  add(phase: string, ms: number) {
    this.phases.set(phase, (this.phases.get(phase) ?? 0) + ms);
  }

  header(): string {
    const parts = [...this.phases].map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`);
    parts.push(`total;dur=${(performance.now() - this.started).toFixed(1)}`);
    return parts.join(", ");
  }
}
