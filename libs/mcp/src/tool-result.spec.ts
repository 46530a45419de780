import { readConfig } from './config';
import { ToolError } from './refusals';
import { createWalletSession } from './session';
import { answer } from './tool-result';

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

function session() {
  const logs: string[] = [];
  return {
    logs,
    session: createWalletSession(
      readConfig({ CRAWLGATE_WALLET_KEY: KEY, CRAWLGATE_MAX_PRICE_USD: '0.01', CRAWLGATE_BUDGET_USD: '1' }),
      { log: (line) => logs.push(line) },
    ),
  };
}

describe('answer', () => {
  it('returns success as structured content and the same JSON as text', async () => {
    const { session: s } = session();
    expect(await answer(s, 'spending', undefined, async () => ({ spent_usd: '0' }))).toEqual({
      content: [{ type: 'text', text: '{"spent_usd":"0"}' }],
      structuredContent: { spent_usd: '0' },
    });
  });

  it('returns a refusal as an error result with its code, and logs it', async () => {
    const { session: s, logs } = session();
    const result = await answer(s, 'quote_price', 'https://a.example/x', async () => {
      throw new ToolError('no_price', 'No price found');
    });
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ error: { code: 'no_price', message: 'No price found', url: 'https://a.example/x' } }),
        },
      ],
      isError: true,
    });
    expect(logs).toEqual(['crawlgate-mcp: quote_price https://a.example/x refused: no_price: No price found']);
  });

  it('blanks the wallet key out of results and logs, whatever put it there', async () => {
    const { session: s, logs } = session();
    const failed = await answer(s, 'fetch_page', 'https://a.example/x', async () => {
      throw new Error(`signing with ${KEY} failed`);
    });
    const succeeded = await answer(s, 'fetch_page', undefined, async () => ({
      text: `page quoting ${KEY.slice(2).toUpperCase()}`,
    }));
    for (const text of [JSON.stringify(failed), JSON.stringify(succeeded), ...logs])
      expect(text.toLowerCase()).not.toContain(KEY.slice(2));
    expect(failed).toMatchObject({
      isError: true,
      content: [
        { text: expect.stringContaining('"code":"internal_error","message":"signing with [redacted] failed"') },
      ],
    });
    expect(succeeded).toMatchObject({ structuredContent: { text: 'page quoting [redacted]' } });
  });
});
