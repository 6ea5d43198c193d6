/** A counting semaphore: at most `slots` holders at once; the rest wait in order. */
export class Semaphore {
  private readonly waiting: (() => void)[] = [];
  private free: number;

  constructor(slots: number) {
    this.free = slots;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
