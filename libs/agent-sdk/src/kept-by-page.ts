/**
 * Values by page (TokenCache.key), in memory, bounded: each kept until its last use, which its
 * owner reads now (`lastUse`: a life of the site's tokens learned since may lengthen it). A full
 * store drops those past their last use, then its oldest; or, given `groupsOf` (a page's groups,
 * widest first: its domain, then narrower), the oldest of the group holding the most at each
 * level in turn. Never by an end a front may have forged short, which would drop the very value it
 * shortened; with groups, never another site's first, which a site filling the store would push out.
 */
export class KeptByPage<Value> {
  private readonly byPage = new Map<string, Value>();
  /** Each page's groups, read once when it is kept. */
  private readonly groups = new Map<string, readonly string[]>();

  constructor(
    private readonly lastUse: (value: Value, page: string) => number,
    private readonly max: number,
    private readonly groupsOf?: (page: string) => readonly string[],
  ) {}

  keep(page: string, value: Value, now = Date.now()): void {
    this.forget(page);
    if (this.byPage.size >= this.max) this.makeRoom(now);
    this.byPage.set(page, value);
    if (this.groupsOf) this.groups.set(page, this.groupsOf(page));
  }

  /** The page's value until its last use; an older one is dropped. */
  get(page: string, now = Date.now()): Value | undefined {
    const value = this.byPage.get(page);
    if (value === undefined || now < this.lastUse(value, page)) return value;
    this.forget(page);
    return undefined;
  }

  forget(page: string): void {
    this.byPage.delete(page);
    this.groups.delete(page);
  }

  private makeRoom(now: number): void {
    for (const [page, value] of this.byPage) if (!(now < this.lastUse(value, page))) this.forget(page);
    while (this.byPage.size >= this.max) this.forget(this.groupsOf ? this.oldestOfLargestGroups() : this.oldest());
  }

  private oldest(): string {
    return this.byPage.keys().next().value as string;
  }

  /**
   * At each level of the groups, widest first, the group holding the most of the pages still in
   * play (of groups as large, the one whose oldest page is newest: a newcomer's); its oldest page.
   */
  private oldestOfLargestGroups(): string {
    let pages = [...this.byPage.keys()];
    for (let level = 0; pages.length > 1; level++) {
      const byGroup = new Map<string, string[]>();
      let deeper = false;
      for (const page of pages) {
        const groups = this.groups.get(page) ?? [];
        deeper ||= level < groups.length;
        const group = groups[level] ?? '';
        const members = byGroup.get(group);
        if (members) members.push(page);
        else byGroup.set(group, [page]);
      }
      if (!deeper) break;
      let largest: string[] = [];
      for (const members of byGroup.values()) if (members.length >= largest.length) largest = members;
      pages = largest;
    }
    return pages[0];
  }
}
