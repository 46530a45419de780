import { base64Decode } from './base64url';
import { importEd25519PrivateKey, importEd25519PublicKey, signEd25519, verifyEd25519 } from './ed25519-jwk';
import { componentValue, signatureBase, type SignedRequestView } from './http-message-signature';
import { parseSfDictionary, sf, type SfInnerList } from './structured-fields';

/** RFC 9421 B.1.4 test-key-ed25519 and the B.2 request. */
const RFC_KEY = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
  d: 'n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU',
} as const;
const B2_HEADERS: Record<string, string> = {
  host: 'example.com',
  date: 'Tue, 20 Apr 2021 02:07:55 GMT',
  'content-type': 'application/json',
  'content-length': '18',
};
const B2: SignedRequestView = {
  method: 'POST',
  authority: 'example.com',
  path: '/foo',
  query: '?param=Value&Pet=dog',
  header: (name) => B2_HEADERS[name],
};
const B26_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"';
const B26_SIGNATURE = 'wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==';
const B26_BASE = [
  '"date": Tue, 20 Apr 2021 02:07:55 GMT',
  '"@method": POST',
  '"@path": /foo',
  '"@authority": example.com',
  '"content-type": application/json',
  '"content-length": 18',
  '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
].join('\n');

const paramsOf = (input: string, label: string) => parseSfDictionary(input)!.get(label) as SfInnerList;

describe('signatureBase', () => {
  it('builds RFC 9421 B.2.6 byte for byte, and its signature verifies (and signs the same, Ed25519 being deterministic)', async () => {
    const base = signatureBase(B2, paramsOf(B26_INPUT, 'sig-b26'));
    expect(base).toBe(B26_BASE);
    const signature = base64Decode(B26_SIGNATURE)!;
    expect(await verifyEd25519(await importEd25519PublicKey(RFC_KEY), base!, signature)).toBe(true);
    expect(await signEd25519(await importEd25519PrivateKey(RFC_KEY), base!)).toEqual(signature);
    // One changed component, and it no longer verifies.
    const moved = signatureBase({ ...B2, path: '/bar' }, paramsOf(B26_INPUT, 'sig-b26'))!;
    expect(await verifyEd25519(await importEd25519PublicKey(RFC_KEY), moved, signature)).toBe(false);
  });

  it('serializes a dictionary member named by key, and the whole field otherwise', () => {
    const headers: Record<string, string> = {
      'signature-agent': ' sig1="https://a.example";type=directory,  sig2="https://b.example" ',
    };
    const view = { ...B2, header: (name: string) => headers[name] };
    const params = paramsOf('s=("signature-agent";key="sig2" "signature-agent");created=1', 's');
    expect(signatureBase(view, params)).toBe(
      [
        '"signature-agent";key="sig2": "https://b.example"',
        '"signature-agent": sig1="https://a.example";type=directory,  sig2="https://b.example"',
        '"@signature-params": ("signature-agent";key="sig2" "signature-agent");created=1',
      ].join('\n'),
    );
  });

  it('reads @query as "?" when there is none, @path as "/" when empty, @authority in lower case without a default port', () => {
    const view = { ...B2, authority: 'Example.COM:443', path: '', query: '' };
    expect(componentValue(view, sf.string('@query'))).toBe('?');
    expect(componentValue(view, sf.string('@path'))).toBe('/');
    expect(componentValue(view, sf.string('@authority'))).toBe('example.com');
    expect(componentValue({ ...view, authority: '127.0.0.1:8080' }, sf.string('@authority'))).toBe('127.0.0.1:8080');
  });

  it.each([
    ['a missing header', 's=("x-absent");created=1'],
    ['a repeated component', 's=("@method" "@method");created=1'],
    ['an unsupported derived component', 's=("@target-uri");created=1'],
    ['an unknown derived component', 's=("@whatever");created=1'],
    ['an unsupported parameter', 's=("date";sf);created=1'],
    ['a key of a member that is absent', 's=("date";key="nope");created=1'],
    ['a derived component with a key', 's=("@method";key="a");created=1'],
    ['an upper-case field name', 's=("Date");created=1'],
    ['a component that is not a string', 's=(date);created=1'],
  ])('cannot be built with %s', (_what, input) => {
    expect(signatureBase(B2, paramsOf(input, 's'))).toBeNull();
  });

  it('refuses a value carrying a line break, which could forge the lines after it', () => {
    const view = {
      ...B2,
      header: (name: string) => (name === 'x-evil' ? 'a\n"@authority": other.example' : undefined),
    };
    expect(signatureBase(view, paramsOf('s=("x-evil");created=1', 's'))).toBeNull();
  });
});
