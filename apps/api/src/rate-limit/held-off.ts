/**
 * Keys held off until a time, in this process: what a shared bucket answered when this process
 * last counted in it, kept so that the requests between two counts need not ask. Bounded: when
 * full, the key held off longest ago goes first.
 */
export class HeldOff {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** How long `key` stays held off, in ms; 0 when it is not. */
  heldOffFor(key: string): number {
    const until = this.until.get(key);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.until.delete(key);
    return 0;
  }

  /** Whether any key is held off now (those whose time is over are forgotten on the way). */
  holdsAny(): boolean {
    for (const key of this.until.keys()) if (this.heldOffFor(key) > 0) return true;
    return false;
  }

  holdOff(key: string, untilMs: number): void {
    this.until.delete(key);
    if (this.until.size >= this.maxKeys) this.until.delete(this.until.keys().next().value as string);
    this.until.set(key, untilMs);
  }
}
