import { domainOf, MAX_HELD_PER_DOMAIN, MAX_HELD_PER_HOST, type HeldPages } from './held-authorizations';

/**
 * Exact payments under way per host and per domain (domainOf). Each may come back refused while
 * the site holds its signed authorization, so a host has at most as many under way as it may still
 * hold (MAX_HELD_PER_HOST less the pages it holds), its domain likewise (MAX_HELD_PER_DOMAIN): more
 * of its pages fetched at once wait their turn, and a site refusing every payment is given no more
 * authorizations than the agent would let it hold one after the other.
 */
export class PaymentSlots {
  private readonly underWay = new Map<string, number>();
  private readonly waiting = new Set<() => void>();

  /**
   * Waits for a slot of `host` (and its domain); what frees it, or null when the pages the host or
   * its domain holds leave none (no payment may be made there now). Throws when `signal` aborts.
   */
  async take(host: string, held: HeldPages, signal?: AbortSignal): Promise<(() => void) | null> {
    const keys = [`host ${host}`, `domain ${domainOf(host)}`] as const;
    for (;;) {
      signal?.throwIfAborted();
      const holds = held.counted(host);
      const room = [MAX_HELD_PER_HOST - holds.host, MAX_HELD_PER_DOMAIN - holds.domain];
      if (room.some((left) => left <= 0)) return null;
      if (keys.every((key, i) => this.count(key) < room[i])) {
        for (const key of keys) this.underWay.set(key, this.count(key) + 1);
        let freed = false;
        return () => {
          if (freed) return;
          freed = true;
          for (const key of keys) {
            const left = this.count(key) - 1;
            if (left > 0) this.underWay.set(key, left);
            else this.underWay.delete(key);
          }
          for (const wake of [...this.waiting]) wake();
        };
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiting.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.waiting.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private count(key: string): number {
    return this.underWay.get(key) ?? 0;
  }
}
