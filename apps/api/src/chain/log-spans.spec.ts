import { eventsInSpans, type LogSpan } from './log-spans';

/**
 * A node's eth_getLogs over blocks holding one event each at `eventBlocks`, refusing spans wider
 * than `cap` blocks (as hosted nodes do), or every call when `down`; it records what it was asked.
 */
function node(eventBlocks: bigint[], { cap = Infinity, down = false }: { cap?: number; down?: boolean } = {}) {
  const asked: { from: bigint; to: bigint; refused: boolean }[] = [];
  const ask = async (from: bigint, to: bigint) => {
    const refused = down || Number(to - from + 1n) > cap;
    asked.push({ from, to, refused });
    if (refused) throw new Error(down ? 'node down' : `eth_getLogs is limited to a ${cap} block range`);
    return eventBlocks.filter((block) => block >= from && block <= to);
  };
  return { ask, asked };
}

/** The blocks the answered calls covered, each once and in order, from `from` to `to`. */
function expectCoveredOnce(asked: { from: bigint; to: bigint; refused: boolean }[], from: bigint, to: bigint) {
  let next = from;
  for (const call of asked.filter((one) => !one.refused)) {
    expect({ from: call.from }).toEqual({ from: next });
    next = call.to + 1n;
  }
  expect(next).toBe(to + 1n);
}

describe('eventsInSpans', () => {
  it('asks an uncapped node once for the whole range', async () => {
    const { ask, asked } = node([5n, 700n, 9_000n]);
    const span: LogSpan = { blocks: 10_000n };
    expect(await eventsInSpans(span, 1n, 10_000n, ask)).toEqual([5n, 700n, 9_000n]);
    expect(asked).toEqual([{ from: 1n, to: 10_000n, refused: false }]);
    expect(span.blocks).toBe(10_000n);
  });

  it('halves a span a capped node refuses, covers every block once, and keeps the width that answered for the next search', async () => {
    const events = [0n, 999n, 1_000n, 4_321n, 9_999n];
    const { ask, asked } = node(events, { cap: 1_000 });
    const span: LogSpan = { blocks: 10_000n };
    expect(await eventsInSpans(span, 0n, 9_999n, ask)).toEqual(events);
    expectCoveredOnce(asked, 0n, 9_999n);
    // 10,000, 5,000, 2,500 and 1,250 refused; 625 answered.
    expect(asked.filter((call) => call.refused)).toHaveLength(4);
    expect(span.blocks).toBe(625n);
    asked.length = 0;
    expect(await eventsInSpans(span, 0n, 9_999n, ask)).toEqual(events);
    expect(asked.filter((call) => call.refused)).toEqual([]);
    expectCoveredOnce(asked, 0n, 9_999n);
  });

  it('finds every event once over any range, cap and starting span', async () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    for (let round = 0; round < 300; round++) {
      const from = BigInt(random(5_000));
      const to = from + BigInt(random(20_000));
      const events = Array.from({ length: random(30) }, () => from + BigInt(random(Number(to - from) + 1)))
        .filter((block, i, all) => all.indexOf(block) === i)
        .sort((a, b) => (a < b ? -1 : 1));
      const cap = 1 + random(12_000);
      const first = BigInt(1 + random(15_000));
      const span: LogSpan = { blocks: first };
      const { ask, asked } = node(events, { cap });
      expect({ round, found: await eventsInSpans(span, from, to, ask) }).toEqual({ round, found: events });
      expectCoveredOnce(asked, from, to);
      // Narrowed to what the node answers once it refused, else as it was.
      if (asked.some((call) => call.refused)) expect(Number(span.blocks)).toBeLessThanOrEqual(cap);
      else expect(span.blocks).toBe(first);
    }
  });

  it('throws a node’s failure once a single block is refused, after at most one call per halving, its span as it was', async () => {
    const { ask, asked } = node([], { down: true });
    const span: LogSpan = { blocks: 10_000n };
    await expect(eventsInSpans(span, 0n, 9_999n, ask)).rejects.toThrow('node down');
    expect(asked.length).toBeLessThanOrEqual(15); // 10,000 halved to 1: 14 halvings
    expect(asked.at(-1)).toMatchObject({ to: asked.at(-1)!.from });
    expect(span.blocks).toBe(10_000n);
  });

  it('asks nothing over an empty range', async () => {
    const { ask, asked } = node([1n]);
    expect(await eventsInSpans({ blocks: 100n }, 10n, 9n, ask)).toEqual([]);
    expect(asked).toEqual([]);
  });
});
