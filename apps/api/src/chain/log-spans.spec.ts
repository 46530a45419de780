import { createPublicClient, http, HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { startRpcRewriter, type RpcRefusal } from '../../test/rpc-rewriter';
import { workerChain } from '../../test/test-chain';
import { firstRecentBlock } from './chain-context';
import { eventsInSpans, isRangeRefusal, isResultsCap, WIDEN_AFTER_MS, type LogSpan } from './log-spans';

const url = 'http://node.test';
const capRefusal = (cap: number) =>
  new RpcRequestError({
    body: {},
    error: { code: -32602, message: `eth_getLogs is limited to a ${cap} block range` },
    url,
  });

/** A node's refusal of a range for the number of its events (Infura's, and others'). */
const resultsCapRefusal = (cap: number) =>
  new RpcRequestError({ body: {}, error: { code: -32005, message: `query returned more than ${cap} results` }, url });

type Asked = { from: bigint; to: bigint; refused: boolean }[];

/**
 * A node's eth_getLogs over blocks holding one event each at `eventBlocks`, refusing spans wider
 * than `cap` blocks (as hosted nodes do); `fails(n)` makes its n-th call (from 1) fail with that
 * error instead. It records what it was asked.
 */
function node(eventBlocks: bigint[], { cap = Infinity, fails = (_n: number): Error | undefined => undefined } = {}) {
  const asked: Asked = [];
  const ask = async (from: bigint, to: bigint) => {
    const failure = fails(asked.length + 1) ?? (Number(to - from + 1n) > cap ? capRefusal(cap) : undefined);
    asked.push({ from, to, refused: failure !== undefined });
    if (failure) throw failure;
    return eventBlocks.filter((block) => block >= from && block <= to);
  };
  return { ask, asked };
}

/** The blocks the answered calls covered, each once and in order, from `from` to `to`. */
function expectCoveredOnce(asked: Asked, from: bigint, to: bigint) {
  let next = from;
  for (const call of asked.filter((one) => !one.refused)) {
    expect({ from: call.from }).toEqual({ from: next });
    next = call.to + 1n;
  }
  expect(next).toBe(to + 1n);
}

describe('eventsInSpans', () => {
  it('asks an uncapped node once for the recent blocks', async () => {
    const { ask, asked } = node([90_001n, 95_000n, 100_000n]);
    const span: LogSpan = { blocks: 10_000n };
    const from = firstRecentBlock({ recentLogBlocks: 10_000n }, 100_000n);
    expect(await eventsInSpans(span, from, 100_000n, ask)).toEqual([90_001n, 95_000n, 100_000n]);
    expect(asked).toEqual([{ from: 90_001n, to: 100_000n, refused: false }]);
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

  it('finds every event once over any range, cap and starting span, and learns a width no narrower than half the cap', async () => {
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
      if (asked.some((call) => call.refused)) {
        expect(Number(span.blocks)).toBeLessThanOrEqual(cap);
        expect(2 * Number(span.blocks)).toBeGreaterThanOrEqual(cap);
      } else expect(span.blocks).toBe(first);
    }
  });

  it('throws a timeout, a rate limit or a server error at once, its span as it was', async () => {
    const failures = [
      new TimeoutError({ body: {}, url }),
      new HttpRequestError({ status: 429, url }),
      new HttpRequestError({ status: 503, url }),
      new RpcRequestError({ body: {}, error: { code: 429, message: 'rate limited' }, url }),
      new Error('socket hang up'),
    ];
    for (const failure of failures) {
      const { ask, asked } = node([], { fails: () => failure });
      const span: LogSpan = { blocks: 10_000n };
      await expect(eventsInSpans(span, 0n, 9_999n, ask)).rejects.toBe(failure);
      expect({ failure: failure.message, calls: asked.length, span: span.blocks }).toEqual({
        failure: failure.message,
        calls: 1,
        span: 10_000n,
      });
    }
  });

  it('throws a refusal of a span no wider than one answered in the search: a failing node, not a cap', async () => {
    // 312 blocks a call; the last call (the 17 blocks left) refused.
    const { ask, asked } = node([], { fails: (n) => (n === 33 ? capRefusal(8) : undefined) });
    const span: LogSpan = { blocks: 312n };
    await expect(eventsInSpans(span, 0n, 10_000n, ask)).rejects.toThrow('limited to a 8 block range');
    expect({ calls: asked.length, last: asked.at(-1), span: span.blocks }).toEqual({
      calls: 33,
      last: { from: 9_984n, to: 10_000n, refused: true },
      span: 312n,
    });
  });

  it("splits a span holding more events than a node answers at once (a results cap, -32005), without narrowing the span kept: a burst of events, anyone's, costs a few calls, not a failed search", async () => {
    // Two events a block in 500-504 (anyone can fill a shared escrow's log), a few elsewhere.
    const burst = [500n, 500n, 501n, 501n, 502n, 502n, 503n, 503n, 504n, 504n];
    const events = [7n, ...burst, 6_000n, 9_999n];
    const asked: Asked = [];
    const ask = async (from: bigint, to: bigint) => {
      const found = events.filter((block) => block >= from && block <= to);
      const refused = found.length > 3;
      asked.push({ from, to, refused });
      if (refused) throw resultsCapRefusal(3);
      return found;
    };
    const span: LogSpan = { blocks: 10_000n };
    expect(await eventsInSpans(span, 0n, 9_999n, ask)).toEqual(events);
    expectCoveredOnce(asked, 0n, 9_999n);
    expect(span.blocks).toBe(10_000n);
    expect(asked.length).toBeLessThan(40);
    // One block holding more than the node answers at once: nothing to split, the search throws.
    const dense = async (from: bigint, to: bigint) => {
      if (from <= 500n && to >= 500n) throw resultsCapRefusal(3);
      return [];
    };
    await expect(eventsInSpans({ blocks: 10_000n }, 0n, 9_999n, dense)).rejects.toThrow('more than 3 results');
    // A node refusing every part: a bounded number of calls, then the search throws.
    let calls = 0;
    const refusing = async () => {
      calls++;
      throw resultsCapRefusal(3);
    };
    await expect(eventsInSpans({ blocks: 10_000n }, 0n, 9_999n, refusing)).rejects.toThrow('more than 3 results');
    expect(calls).toBeLessThanOrEqual(100);
    // -32005 without a word of results is a rate limit, not a cap: nothing split.
    const limited = new RpcRequestError({ body: {}, error: { code: -32005, message: 'request rate exceeded' }, url });
    expect([isResultsCap(limited), isResultsCap(capRefusal(1_000))]).toEqual([false, false]);
  });

  it('takes one block as the narrowest span: a node refusing that is failing, and the search throws', async () => {
    const { ask, asked } = node([], { fails: () => capRefusal(0) });
    const span: LogSpan = { blocks: 8n };
    await expect(eventsInSpans(span, 0n, 100n, ask)).rejects.toThrow('limited to a 0 block range');
    expect(asked.map((call) => call.to - call.from + 1n)).toEqual([8n, 4n, 2n, 1n]);
    expect(span.blocks).toBe(8n);
  });

  it('tries twice its width once WIDEN_AFTER_MS passed since it last changed: back to the recent blocks once a node lifts its cap, one refusal a wait while it keeps it', async () => {
    let cap = 1_000;
    const asked: { blocks: bigint; refused: boolean }[] = [];
    const ask = async (from: bigint, to: bigint) => {
      const blocks = to - from + 1n;
      asked.push({ blocks, refused: blocks > cap });
      if (blocks > cap) throw capRefusal(cap);
      return [];
    };
    const span: LogSpan = { blocks: 10_000n, widest: 10_000n };
    const search = (at: number) => eventsInSpans(span, 0n, 9_999n, ask, at);
    await search(0);
    expect(span.blocks).toBe(625n);
    // Within the wait: the width kept, no refusal.
    asked.length = 0;
    await search(WIDEN_AFTER_MS - 1);
    expect(asked.filter((call) => call.refused || call.blocks !== 625n)).toEqual([]);
    // Past it, the node still capping: one refusal at twice the width, then the width kept; the next try waits again.
    asked.length = 0;
    await search(WIDEN_AFTER_MS);
    expect(asked.filter((call) => call.refused).map((call) => call.blocks)).toEqual([1_250n]);
    expect(span.blocks).toBe(625n);
    asked.length = 0;
    await search(2 * WIDEN_AFTER_MS - 1);
    expect(asked.filter((call) => call.refused)).toEqual([]);
    // The cap lifted: each wait doubles the width, up to the recent blocks and no further.
    cap = Infinity;
    const widths: bigint[] = [];
    for (let wait = 2; wait <= 7; wait++) {
      await search(wait * WIDEN_AFTER_MS);
      widths.push(span.blocks);
    }
    expect(widths).toEqual([1_250n, 2_500n, 5_000n, 10_000n, 10_000n, 10_000n]);
  });

  it('waits again after a widening the search could not try (a range no wider than the width kept)', async () => {
    const { ask, asked } = node([], { cap: 1_000 });
    const span: LogSpan = { blocks: 500n, widest: 10_000n, changedAt: 0 };
    await eventsInSpans(span, 0n, 99n, ask, WIDEN_AFTER_MS);
    expect({ asked: asked.length, blocks: span.blocks, changedAt: span.changedAt }).toEqual({
      asked: 1,
      blocks: 500n,
      changedAt: 0,
    });
    await eventsInSpans(span, 0n, 9_999n, ask, WIDEN_AFTER_MS + 1);
    expect(asked[1]).toEqual({ from: 0n, to: 999n, refused: false });
    expect({ blocks: span.blocks, changedAt: span.changedAt }).toEqual({
      blocks: 1_000n,
      changedAt: WIDEN_AFTER_MS + 1,
    });
  });

  it('never widens a span past its widest, nor one with none', async () => {
    const uncapped = node([]);
    const span: LogSpan = { blocks: 6_000n, widest: 10_000n, changedAt: 0 };
    await eventsInSpans(span, 0n, 19_999n, uncapped.ask, WIDEN_AFTER_MS);
    expect(uncapped.asked.map((call) => call.to - call.from + 1n)).toEqual([10_000n, 10_000n]);
    expect(span.blocks).toBe(10_000n);
    const { ask, asked } = node([], { cap: 1_000 });
    const none: LogSpan = { blocks: 500n };
    await eventsInSpans(none, 0n, 9_999n, ask, 100 * WIDEN_AFTER_MS);
    expect(asked.every((call) => call.to - call.from + 1n === 500n)).toBe(true);
    expect(none.blocks).toBe(500n);
  });

  it('asks nothing over an empty range', async () => {
    const { ask, asked } = node([1n]);
    expect(await eventsInSpans({ blocks: 100n }, 10n, 9n, ask)).toEqual([]);
    expect(asked).toEqual([]);
  });
});

describe('isRangeRefusal, on what viem throws for a node’s answers', () => {
  it('takes a JSON-RPC error or HTTP 400 and 413 as a refusal; HTTP 429 and 5xx and JSON-RPC 429 are not', async () => {
    let refusal: RpcRefusal = { code: -32602, message: 'block range too large' };
    const rewriter = await startRpcRewriter(
      workerChain().rpcUrl,
      ({ result }) => result,
      ({ method }) => (method === 'eth_getLogs' ? refusal : undefined),
    );
    try {
      const client = createPublicClient({ transport: http(rewriter.url, { retryCount: 0 }) });
      const cases: [RpcRefusal, boolean][] = [
        [{ code: -32602, message: 'eth_getLogs is limited to a 1000 block range' }, true],
        [{ code: -32005, message: 'query returned more than 10000 results' }, true],
        [{ code: -32600, message: 'Log response size exceeded' }, true],
        [{ httpStatus: 400 }, true],
        [{ httpStatus: 413 }, true],
        [{ code: 429, message: 'Too Many Requests' }, false],
        [{ httpStatus: 429 }, false],
        [{ httpStatus: 503 }, false],
      ];
      for (const [answer, expected] of cases) {
        refusal = answer;
        const error = await client.getLogs({ fromBlock: 0n, toBlock: 1n }).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect({ answer, refused: error !== undefined && isRangeRefusal(error) }).toEqual({
          answer,
          refused: expected,
        });
      }
    } finally {
      await rewriter.close();
    }
  });
});
