/**
 * Values by page (TokenCache.key), in memory, bounded: each kept until its last use, which its
 * owner reads now (`lastUse`: a life of the site's tokens learned since may lengthen it). A full
 * store drops those past their last use, then the oldest of the group (`groupOf`: a page's site)
 * holding the most: never by an end a front may have forged short, which would drop the very value
 * it shortened, and never another site's first, which a site filling the store would push out.
 */
export class KeptByPage<Value> {
  private readonly byPage = new Map<string, Value>();

  constructor(
    private readonly lastUse: (value: Value, page: string) => number,
    private readonly max: number,
    private readonly groupOf: (page: string) => string = () => '',
  ) {}

  keep(page: string, value: Value, now = Date.now()): void {
    this.byPage.delete(page);
    if (this.byPage.size >= this.max) this.makeRoom(now);
    this.byPage.set(page, value);
  }

  /** The page's value until its last use; an older one is dropped. */
  get(page: string, now = Date.now()): Value | undefined {
    const value = this.byPage.get(page);
    if (value === undefined || now < this.lastUse(value, page)) return value;
    this.byPage.delete(page);
    return undefined;
  }

  forget(page: string): void {
    this.byPage.delete(page);
  }

  private makeRoom(now: number): void {
    for (const [page, value] of this.byPage) if (!(now < this.lastUse(value, page))) this.byPage.delete(page);
    while (this.byPage.size >= this.max) this.byPage.delete(this.oldestOfLargestGroup());
  }

  /** The oldest page of the group holding the most pages (of those, the one whose oldest is oldest). */
  private oldestOfLargestGroup(): string {
    const groups = new Map<string, { oldest: string; size: number }>();
    for (const page of this.byPage.keys()) {
      const group = this.groupOf(page);
      const seen = groups.get(group);
      if (seen) seen.size++;
      else groups.set(group, { oldest: page, size: 1 });
    }
    let largest = { oldest: '', size: 0 };
    for (const group of groups.values()) if (group.size > largest.size) largest = group;
    return largest.oldest;
  }
}
