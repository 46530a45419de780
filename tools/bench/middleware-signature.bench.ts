import { createWebBotAuthSigner } from '@crawlgate/core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrawlgate, type Crawlgate } from '../../libs/middleware/src/crawlgate';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../../libs/middleware/testing/fake-api';
import { startAgentDirectory } from '../../libs/middleware/testing/agent-directory';
import type { BenchResult } from './goals';
import { format } from './measure';
import { alternate, pairedTable, PAIRS } from './paired';

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const HOST = 'bench.example.com';
const PATH = '/article/42';
/** Requests per round: each signed one needs its own nonce, so they are signed before the round. */
const PER_ROUND = 3000;

/**
 * What verifying a Web Bot Auth signature costs the gate per request: createCrawlgate().handle()
 * for a signed request (browser User-Agent, Ed25519 signature over @authority, @method, @path and
 * Signature-Agent, fresh nonce, key directory cached after its first fetch from a loopback server;
 * the policy allows the verified agent) against the same request unsigned (a person), both
 * passing. Beside it, a Googlebot verified by its address (its operator's IP ranges, served once
 * from loopback, then cached) against the same person. In process, the site's terms from an
 * in-memory API (no network per request); alternating rounds like the other benchmarks.
 */
export async function signedRequestBench(): Promise<BenchResult> {
  const directory = await startAgentDirectory();
  const ranges = createServer((_, response) =>
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ prefixes: [{ ipv4Prefix: '66.249.64.0/19' }, { ipv4Prefix: '127.0.0.0/8' }] })),
  );
  await new Promise<void>((resolve) => ranges.listen(0, '127.0.0.1', resolve));
  const api = fakeApi();
  const gate: Crawlgate = createCrawlgate({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: 'st_bench',
    secret: 'cgsec_' + 'k'.repeat(43),
    fetch: api.fetch,
    policy: { bots: { 'unknown-automation': 'allow' } },
    // The signed requests are for HOST, not the in-memory API's domain: an alias of the site.
    webBotAuth: { allowLoopbackDirectories: true, hosts: [HOST] },
    crawlerIps: {
      sources: { Googlebot: `http://127.0.0.1:${(ranges.address() as AddressInfo).port}/googlebot.json` },
    },
    logger: { warn: () => undefined },
  });
  const signer = createWebBotAuthSigner({
    key: directory.key,
    signatureAgent: directory.origin,
    allowLoopbackAgent: true,
  });
  const url = `https://${HOST}${PATH}`;
  const signedPool = async () =>
    Promise.all(
      Array.from({ length: PER_ROUND }, async () => ({
        host: HOST,
        'user-agent': BROWSER,
        ...(await signer.sign({ method: 'GET', url, headers: new Headers() })),
      })),
    );
  const unsigned = Array.from({ length: PER_ROUND }, () => ({ host: HOST, 'user-agent': BROWSER }));
  const googlebot = Array.from({ length: PER_ROUND }, () => ({ host: HOST, 'user-agent': GOOGLEBOT }));

  /** Requests handled per second, one after another, from `ip`; every answer must be a pass. */
  async function rate(requests: Record<string, string>[], ip = '127.0.0.1'): Promise<number> {
    const started = process.hrtime.bigint();
    for (const headers of requests) {
      const decision = await gate.handle({ method: 'GET', url: PATH, headers, ip });
      if (decision.kind !== 'pass') throw new Error(`bench request not passed: ${JSON.stringify(decision)}`);
    }
    return requests.length / (Number(process.hrtime.bigint() - started) / 1e9);
  }

  try {
    await rate(unsigned);
    await rate(await signedPool()); // warm-up: JIT, and the key directory fetched once
    await rate(googlebot, '66.249.66.1'); // and the IP ranges fetched once
    const paired = await alternate(async () => {
      const pool = await signedPool();
      return { baseline: await rate(unsigned), ours: await rate(pool) };
    });
    const byAddress = await alternate(async () => ({
      baseline: await rate(unsigned, '66.249.66.1'),
      ours: await rate(googlebot, '66.249.66.1'),
    }));
    const micros = (perSecond: number[]) =>
      1e6 / [...perSecond].sort((a, b) => a - b)[Math.floor(perSecond.length / 2)];
    const [signedUs, unsignedUs] = [micros(paired.ours), micros(paired.baseline)];
    const [googlebotUs, personUs] = [micros(byAddress.ours), micros(byAddress.baseline)];
    const report = [
      pairedTable(
        'Middleware: a signed request (Web Bot Auth verified) ÷ the same request unsigned (in-process)',
        'req/s',
        [
          {
            figure: 'handle(): signed, verified, allowed agent',
            baselineName: 'handle(): unsigned person, same request',
            paired,
          },
          {
            figure: 'handle(): Googlebot verified by its address (IP ranges cached), allowed',
            baselineName: 'handle(): unsigned person, same request',
            paired: byAddress,
          },
        ],
      ),
      '',
      `Verification cost: ${format(signedUs, 1)} µs per signed request against ${format(unsignedUs, 1)} µs unsigned (medians), ` +
        `${format(signedUs - unsignedUs, 1)} µs for parsing, the signature base, Ed25519 (WebCrypto) and the replay memory; the key directory is cached. ` +
        `${PAIRS} pairs of ${PER_ROUND} sequential requests, unsigned then signed (signed ahead of each round, each with its own nonce); one thread, unpinned.`,
      `IP verification: ${format(googlebotUs, 1)} µs per Googlebot request verified by its address against ${format(personUs, 1)} µs for a person (medians), ` +
        `${format(googlebotUs - personUs, 1)} µs for reading the address and searching the operator's ranges (and classifying a crawler rather than a person). ` +
        `${PAIRS} pairs of ${PER_ROUND} sequential requests, person then Googlebot.`,
    ].join('\n');
    return { report, goals: [] }; // issue 15 asks for the cost printed beside an unsigned request's, no ratio
  } finally {
    await gate.close();
    await directory.close();
    await new Promise((resolve) => ranges.close(resolve));
  }
}
