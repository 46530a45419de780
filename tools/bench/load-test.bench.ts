import { signAccessToken, type GateOffer, type PaidGate, TRANSFER_WITH_AUTHORIZATION_TYPES, USDC_ABI, randomHex32 } from '@crawlgate/core';
import { DEV_ROLES } from '@crawlgate/devchain';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { benchPublisher, benchSite, startBenchApi, type InProcessBenchApi } from './bench-api';
import { format } from './measure';

/** Per second: gates stay under 200/min per site token across SITES tokens, checks under 100/min. */
const RATES = { gate: 30, tokenCheck: 20, payment: 5 };
const SITES = 20;

interface Outcome {
  ms: number;
  status: number;
}

/**
 * A fixed-rate mix for LOAD_SECONDS (default 60): gate creations, access-token checks and full
 * payments (gate → EIP-3009 signature → verify, settled on chain), fired on schedule whatever the
 * answers (open loop). Fails on any 5xx, and on any payment lost or doubled between the API's
 * answers and the chain's Transfer events.
 */
export async function loadTest(): Promise<string> {
  const seconds = Number(process.env.LOAD_SECONDS ?? 60);
  const api = await startBenchApi();
  try {
    const publisher = await benchPublisher(api);
    const sites: Awaited<ReturnType<typeof benchSite>>[] = [];
    for (let i = 0; i < SITES; i++) sites.push(await benchSite(api, publisher, `load-${i}.example.com`));
    const agents: PrivateKeyAccount[] = [];
    for (let i = 0; i < 8; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      await api.call('POST', '/v1/dev/faucet', { address: account.address, amount_usd: '50' });
      agents.push(account);
    }

    const outcomes: Record<keyof typeof RATES, Outcome[]> = { gate: [], tokenCheck: [], payment: [] };
    const paidTxHashes: string[] = [];
    const timed = async (kind: keyof typeof RATES, work: () => Promise<number>) => {
      const started = performance.now();
      const status = await work().catch(() => 599); // a failed request counts as a 5xx
      outcomes[kind].push({ ms: performance.now() - started, status });
    };
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(api.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

    let n = 0;
    const operations: Record<keyof typeof RATES, () => Promise<number>> = {
      gate: async () => (await post('/v1/gates', { url: `/load/${n++}` }, { 'x-site-token': sites[n % SITES].token })).status,
      tokenCheck: async () => {
        const site = sites[n++ % SITES];
        const now = Math.floor(Date.now() / 1000);
        const token = signAccessToken({ gate_id: site.id, site_id: site.id, url: '/a', kid: site.kid, iat: now, exp: now + 600 }, site.secret);
        return (await post('/v1/access-tokens/verify', { token, url: '/a' }, { 'x-site-token': site.token })).status;
      },
      payment: async () => {
        const index = n++;
        const gate = (await (await post('/v1/gates', { url: `/paid/${index}` }, { 'x-site-token': sites[index % SITES].token })).json()) as GateOffer;
        const payment = await signPayment(api, agents[index % agents.length], gate);
        const response = await post(`/v1/gates/${gate.id}/verify`, { payment });
        if (response.status === 200) paidTxHashes.push(((await response.json()) as PaidGate).tx_hash);
        return response.status;
      },
    };

    const inflight: Promise<void>[] = [];
    const timers = (Object.keys(RATES) as (keyof typeof RATES)[]).map((kind) =>
      setInterval(() => inflight.push(timed(kind, operations[kind])), 1000 / RATES[kind]),
    );
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    timers.forEach(clearInterval);
    await Promise.all(inflight);

    const transfers = await api.chain.publicClient.getContractEvents({ address: api.chain.usdc, abi: USDC_ABI, eventName: 'Transfer', args: { to: DEV_ROLES.publisher.address }, fromBlock: 0n });
    const onChain = new Set(transfers.map((log) => log.transactionHash.toLowerCase()));
    const answered = new Set(paidTxHashes.map((hash) => hash.toLowerCase()));
    const lost = [...onChain].filter((hash) => !answered.has(hash)).length;
    const doubled = paidTxHashes.length - answered.size + [...answered].filter((hash) => !onChain.has(hash)).length;
    const serverErrors = Object.values(outcomes).flat().filter((o) => o.status >= 500).length;

    const rows = (Object.keys(outcomes) as (keyof typeof RATES)[]).map((kind) => {
      const list = outcomes[kind];
      const sorted = list.map((o) => o.ms).sort((a, b) => a - b);
      const statuses = Object.entries(list.reduce<Record<number, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {}));
      return `| ${kind} | ${RATES[kind]}/s | ${list.length} | ${format(sorted[Math.floor(sorted.length / 2)] ?? 0, 1)} | ${format(sorted[Math.floor(sorted.length * 0.99)] ?? 0, 1)} | ${statuses.map(([s, c]) => `${s}×${c}`).join(' ')} |`;
    });
    const report = [
      `### Load test: ${seconds} s at a fixed rate (PostgreSQL, local chain)`,
      '',
      '| operation | rate | requests | p50 ms | p99 ms | statuses |',
      '|---|---:|---:|---:|---:|---|',
      ...rows,
      '',
      `5xx: **${serverErrors}**. Payments answered 200: ${paidTxHashes.length}; transfers on chain: ${onChain.size}; lost: **${lost}**; doubled: **${doubled}**.`,
    ].join('\n');
    if (serverErrors > 0 || lost > 0 || doubled > 0) throw new Error(`load test failed:\n${report}`);
    return report;
  } finally {
    await api.close();
  }
}

async function signPayment(api: InProcessBenchApi, account: PrivateKeyAccount, gate: GateOffer) {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = { from: account.address, to: gate.pay_to as `0x${string}`, value: BigInt(gate.amount), validAfter: now - 600n, validBefore: now + 300n, nonce: randomHex32() };
  const signature = await account.signTypedData({
    domain: { name: api.chain.usdcName, version: api.chain.usdcVersion, chainId: api.chain.chainId, verifyingContract: api.chain.usdc },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: authorization,
  });
  const payload = { signature, authorization: { ...authorization, value: authorization.value.toString(), validAfter: authorization.validAfter.toString(), validBefore: authorization.validBefore.toString() } };
  return { x402Version: 1, scheme: 'exact', network: gate.accepts[0].network, payload };
}

