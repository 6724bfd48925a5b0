/** A counting semaphore: caps sandboxes starting at once per process (startup storms, create limits). */
export class Semaphore {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(permits: number) {
    this.#free = permits;
  }

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }
}
