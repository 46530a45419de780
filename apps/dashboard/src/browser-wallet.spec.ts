import { signWithBrowserWallet, utf8Hex, type Eip1193Provider } from './browser-wallet';

describe('utf8Hex', () => {
  it('is the UTF-8 bytes in 0x hex', () => {
    expect(utf8Hex('Crawlgate 0x1a')).toBe('0x437261776c676174652030783161');
    expect(utf8Hex('é')).toBe('0xc3a9');
    expect(utf8Hex('')).toBe('0x');
  });
});

describe('signWithBrowserWallet', () => {
  const address = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

  it('connects, then asks personal_sign for the text as hex by the address', async () => {
    const asked: { method: string; params?: unknown[] }[] = [];
    const wallet: Eip1193Provider = {
      request: (args) => {
        asked.push(args);
        return Promise.resolve(args.method === 'eth_requestAccounts' ? [address] : `0x${'ab'.repeat(65)}`);
      },
    };
    expect(await signWithBrowserWallet(wallet, address, 'hi')).toBe(`0x${'ab'.repeat(65)}`);
    expect(asked).toEqual([
      { method: 'eth_requestAccounts' },
      { method: 'personal_sign', params: ['0x6869', address] },
    ]);
  });

  it('fails when the wallet refuses or answers no signature', async () => {
    const refusing: Eip1193Provider = {
      request: (args) =>
        args.method === 'eth_requestAccounts' ? Promise.resolve([address]) : Promise.reject(new Error('User rejected')),
    };
    await expect(signWithBrowserWallet(refusing, address, 'hi')).rejects.toThrow('User rejected');
    for (const answer of [null, 42, 'not hex', '0xabc']) {
      const odd: Eip1193Provider = { request: () => Promise.resolve(answer) };
      await expect(signWithBrowserWallet(odd, address, 'hi')).rejects.toThrow('The wallet gave no signature');
    }
  });
});
