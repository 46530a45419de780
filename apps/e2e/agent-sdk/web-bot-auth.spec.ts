/*
 * The agent signing its requests (Web Bot Auth), seen by real HTTP servers on loopback: every hop
 * carries a signature made for that hop's URL (checked here with RFC 9421's base and the public
 * key), a price header is signed, and no signature is ever sent twice or to another origin.
 */

import {
  base64Decode,
  importEd25519PublicKey,
  jwkThumbprint,
  KEY_DIRECTORY_MEDIA_TYPE,
  parseSfDictionary,
  signatureBase,
  verifyEd25519,
  type SfInnerList,
} from '@crawlgate/core';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  createAgent,
  generateWebBotAuthKey,
  webBotAuthDirectory,
  webBotAuthDirectoryResponse,
  type Ed25519PrivateJwk,
} from '../../../libs/agent-sdk/src';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

const servers: { close(): void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** A site that records requests; `answer` picks the status and headers. */
async function site(
  answer: (url: string) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 }),
) {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    seen.push({ method: request.method!, url: request.url!, headers: request.headers });
    const { status, headers } = answer(request.url!);
    response.writeHead(status, headers).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function signingAgent(key: Ed25519PrivateJwk) {
  return createAgent({
    account: privateKeyToAccount(generatePrivateKey()),
    maxPriceUsd: '0.01',
    budgetUsd: '0.1',
    webBotAuth: { key, signatureAgent: 'https://agent.example' },
  });
}

/** Whether `seen` carries a valid signature by `key` for the request it is (authority = `authority`). */
async function verifies(seen: Seen, authority: string, key: Ed25519PrivateJwk): Promise<boolean> {
  const header = (name: string) => {
    const value = seen.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const params = parseSfDictionary(header('signature-input')!)!.get('sig1') as SfInnerList;
  const [path, query = ''] = seen.url.split('?');
  const base = signatureBase({ method: seen.method, authority, path, query: query && `?${query}`, header }, params);
  const signature = base64Decode(/^sig1=:(.+):$/.exec(header('signature')!)![1])!;
  return base !== null && verifyEd25519(await importEd25519PublicKey(key), base, signature);
}

describe('@crawlgate/agent with webBotAuth', () => {
  it('signs each request for its own URL, with a fresh nonce, naming its key directory origin', async () => {
    const key = await generateWebBotAuthKey();
    const target = await site();
    const agent = await signingAgent(key);
    await agent.fetch(`${target.origin}/a?x=1`);
    await agent.fetch(`${target.origin}/a?x=1`);
    const [one, two] = target.seen;
    expect(one.headers['signature-agent']).toBe('sig1="https://agent.example"');
    expect(one.headers['signature-input']).toContain(`keyid="${jwkThumbprint(key)}"`);
    expect(one.headers['signature-input']).toContain('tag="web-bot-auth"');
    expect(one.headers['signature-input']).not.toBe(two.headers['signature-input']);
    expect(await verifies(one, new URL(target.origin).host, key)).toBe(true);
    // The same headers do not verify for another site.
    expect(await verifies(one, 'other.example', key)).toBe(false);
  });

  it('signs a price header the request carries', async () => {
    const key = await generateWebBotAuthKey();
    const target = await site();
    await (await signingAgent(key)).fetch(`${target.origin}/p`, { headers: { 'crawler-max-price': 'USD 0.01' } });
    expect(target.seen[0].headers['signature-input']).toContain('"crawler-max-price"');
    expect(await verifies(target.seen[0], new URL(target.origin).host, key)).toBe(true);
  });

  it('never sends a signature made for one origin to another: a redirect gets its own, and a caller’s own signature headers stay behind', async () => {
    const key = await generateWebBotAuthKey();
    const elsewhere = await site();
    const first = await site((url) =>
      url === '/start' ? { status: 302, headers: { location: `${elsewhere.origin}/landed` } } : { status: 200 },
    );
    const agent = await signingAgent(key);
    await agent.fetch(`${first.origin}/start`);
    const [hop1] = first.seen;
    const [hop2] = elsewhere.seen;
    expect(hop2.headers.signature).not.toBe(hop1.headers.signature);
    expect(await verifies(hop2, new URL(elsewhere.origin).host, key)).toBe(true);
    expect(await verifies(hop1, new URL(elsewhere.origin).host, key)).toBe(false);

    // Without signing, a caller's own signature headers are not forwarded across origins either.
    const plain = createAgent({
      account: privateKeyToAccount(generatePrivateKey()),
      maxPriceUsd: '0.01',
      budgetUsd: '0.1',
    });
    await plain.fetch(`${first.origin}/start`, {
      headers: { signature: 'sig1=:AAAA:', 'signature-input': 'sig1=()', 'signature-agent': '"https://x.example"' },
    });
    expect(first.seen[1].headers.signature).toBe('sig1=:AAAA:');
    expect(elsewhere.seen[1].headers.signature).toBeUndefined();
    expect(elsewhere.seen[1].headers['signature-input']).toBeUndefined();
    expect(elsewhere.seen[1].headers['signature-agent']).toBeUndefined();
  });

  it('signs no request over plain http off loopback, where anyone between could take the signature to the https site', async () => {
    const key = await generateWebBotAuthKey();
    // https://victim.example redirects to its http twin; both reach the loopback site (the agent's transport).
    const target = await site((url) =>
      url === '/secure' ? { status: 301, headers: { location: 'http://victim.example/members?x=1' } } : { status: 200 },
    );
    const throughLoopback: typeof fetch = (input, init) =>
      fetch(
        `${target.origin}${new URL(input instanceof Request ? input.url : String(input)).pathname}${new URL(input instanceof Request ? input.url : String(input)).search}`,
        init,
      );
    const agent = (payOverHttp?: boolean) =>
      createAgent({
        account: privateKeyToAccount(generatePrivateKey()),
        maxPriceUsd: '0.01',
        budgetUsd: '0.1',
        fetch: throughLoopback,
        payOverHttp,
        webBotAuth: { key, signatureAgent: 'https://agent.example' },
      });
    await agent().fetch('https://victim.example/secure');
    const [secure, plain] = target.seen;
    expect(await verifies(secure, 'victim.example', key)).toBe(true);
    expect(plain.url).toBe('/members?x=1');
    expect([plain.headers.signature, plain.headers['signature-input'], plain.headers['signature-agent']]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // A network the caller trusts (payOverHttp), and loopback itself, are signed over http.
    await agent(true).fetch('http://victim.example/members');
    expect(await verifies(target.seen[2], 'victim.example', key)).toBe(true);
    await (await signingAgent(key)).fetch(`${target.origin}/local`);
    expect(await verifies(target.seen[3], new URL(target.origin).host, key)).toBe(true);
  });

  it('refuses a key or an agent origin it cannot sign with', async () => {
    const key = await generateWebBotAuthKey();
    const account = privateKeyToAccount(generatePrivateKey());
    expect(() =>
      createAgent({
        account,
        maxPriceUsd: '0.01',
        budgetUsd: '1',
        webBotAuth: { key, signatureAgent: 'http://agent.example' },
      }),
    ).toThrow(/https origin/);
    expect(() =>
      createAgent({
        account,
        maxPriceUsd: '0.01',
        budgetUsd: '1',
        webBotAuth: { key: { ...key, d: 'x' }, signatureAgent: 'https://agent.example' },
      }),
    ).toThrow(/private JWK/);
  });
});

describe('webBotAuthDirectory', () => {
  it('builds the JWKS an operator serves or prints: public keys only, kid = thumbprint', async () => {
    const key = await generateWebBotAuthKey();
    const next = await generateWebBotAuthKey();
    const directory = webBotAuthDirectory([key, next]);
    expect(directory.keys.map((k) => k.kid)).toEqual([jwkThumbprint(key), jwkThumbprint(next)]);
    expect(JSON.stringify(directory)).not.toContain(key.d);
    const response = webBotAuthDirectoryResponse(key);
    expect(response.headers.get('content-type')).toBe(KEY_DIRECTORY_MEDIA_TYPE);
    expect(await response.json()).toEqual(webBotAuthDirectory(key));
  });
});
