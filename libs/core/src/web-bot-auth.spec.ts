import { base64Decode } from './base64url';
import { generateEd25519Jwk, importEd25519PublicKey, jwkThumbprint, verifyEd25519 } from './ed25519-jwk';
import { signatureBase } from './http-message-signature';
import { parseSfDictionary, type SfInnerList } from './structured-fields';
import { createWebBotAuthSigner, signatureAgentOrigin, webBotAuthKeyDirectory } from './web-bot-auth';

describe('createWebBotAuthSigner', () => {
  it('signs @authority, @method, @path and its Signature-Agent member, with created, expires, keyid, nonce and tag', async () => {
    const key = await generateEd25519Jwk();
    const signer = createWebBotAuthSigner({
      key,
      signatureAgent: 'https://agent.example',
      lifetimeSeconds: 30,
      now: () => 1_700_000_000_500,
    });
    const headers = new Headers({ 'user-agent': 'test' });
    const signed = await signer.sign({ method: 'GET', url: 'https://site.example:8443/post/1?x=1', headers });
    expect(signed['signature-agent']).toBe('sig1="https://agent.example"');
    const params = parseSfDictionary(signed['signature-input'])!.get('sig1') as SfInnerList;
    expect(signed['signature-input']).toMatch(
      /^sig1=\("@authority" "@method" "@path" "signature-agent";key="sig1"\);created=1700000000;expires=1700000030;keyid="[\w-]{43}";nonce="[A-Za-z0-9+/=]{44}";tag="web-bot-auth"$/,
    );
    expect(params.params.get('keyid')).toEqual({ type: 'string', value: jwkThumbprint(key) });
    const all: Record<string, string> = { 'signature-agent': signed['signature-agent'] };
    const base = signatureBase(
      { method: 'GET', authority: 'site.example:8443', path: '/post/1', query: '?x=1', header: (name) => all[name] },
      params,
    )!;
    const signature = base64Decode(/^sig1=:(.*):$/.exec(signed.signature)![1])!;
    expect(await verifyEd25519(await importEd25519PublicKey(key), base, signature)).toBe(true);
  });

  it('covers the price headers the request carries, and a fresh nonce each time', async () => {
    const signer = createWebBotAuthSigner({
      key: await generateEd25519Jwk(),
      signatureAgent: 'https://agent.example/',
    });
    const headers = new Headers({ 'crawler-max-price': 'USD 0.01', 'crawler-exact-price': 'USD 0.01' });
    const one = await signer.sign({ method: 'GET', url: 'https://site.example/', headers });
    const two = await signer.sign({ method: 'GET', url: 'https://site.example/', headers });
    expect(one['signature-input']).toContain('"signature-agent";key="sig1" "crawler-max-price" "crawler-exact-price")');
    expect(one['signature-input']).not.toBe(two['signature-input']);
  });

  it('refuses keys, agents and lifetimes it cannot use', async () => {
    const key = await generateEd25519Jwk();
    const { d: _d, ...publicOnly } = key;
    expect(() =>
      createWebBotAuthSigner({ key: publicOnly as typeof key, signatureAgent: 'https://a.example' }),
    ).toThrow(/private JWK/);
    expect(() => createWebBotAuthSigner({ key, signatureAgent: 'http://a.example' })).toThrow(/https origin/);
    expect(() => createWebBotAuthSigner({ key, signatureAgent: 'https://a.example', lifetimeSeconds: 0 })).toThrow(
      RangeError,
    );
    expect(() => createWebBotAuthSigner({ key, signatureAgent: 'https://a.example', lifetimeSeconds: 86_401 })).toThrow(
      RangeError,
    );
  });
});

describe('webBotAuthKeyDirectory', () => {
  it('lists public keys with kid = thumbprint, never the private part', async () => {
    const key = await generateEd25519Jwk();
    const directory = webBotAuthKeyDirectory([key]);
    expect(directory).toEqual({
      keys: [{ kty: 'OKP', crv: 'Ed25519', x: key.x, kid: jwkThumbprint(key), use: 'sig' }],
    });
    expect(JSON.stringify(directory)).not.toContain(key.d);
  });
});

describe('signatureAgentOrigin', () => {
  it.each([
    ['https://chatgpt.com', 'https://chatgpt.com'],
    ['https://chatgpt.com/', 'https://chatgpt.com'],
    ['https://agent.example:8443', 'https://agent.example:8443'],
  ])('reads %s', (value, origin) => {
    expect(signatureAgentOrigin(value)).toBe(origin);
  });

  it.each([
    'http://chatgpt.com',
    'https://chatgpt.com/keys',
    'https://chatgpt.com?x',
    'https://u:p@chatgpt.com',
    'https://CHATGPT.com',
    'https://chatgpt.com#x',
    'chatgpt.com',
    ' https://chatgpt.com',
    'ftp://a.example',
    'http://127.0.0.1:80',
  ])('refuses %s', (value) => {
    expect(signatureAgentOrigin(value)).toBeNull();
  });

  it('admits http on loopback only when asked', () => {
    expect(signatureAgentOrigin('http://127.0.0.1:4000', true)).toBe('http://127.0.0.1:4000');
    expect(signatureAgentOrigin('http://localhost:4000', true)).toBe('http://localhost:4000');
    expect(signatureAgentOrigin('http://10.0.0.1:4000', true)).toBeNull();
    expect(signatureAgentOrigin('http://127.0.0.1:4000')).toBeNull();
  });
});
