import { Logger } from '@nestjs/common';
import { logRedactor, RedactingLogger } from './redacting-logger';

describe('logRedactor', () => {
  it('blanks each configured URL holding a secret, and leaves a local node’s URL readable', () => {
    const redact = logRedactor([
      'https://base-mainnet.g.example.com/v2/SECRETRPCKEY0123',
      'postgresql://crawlgate:db-pass%21word@db.internal:5432/crawlgate',
      'http://127.0.0.1:8545',
      undefined,
    ]);
    expect(redact('URL: https://base-mainnet.g.example.com/v2/SECRETRPCKEY0123')).toBe('URL: [redacted]');
    expect(redact('postgresql://crawlgate:db-pass%21word@db.internal:5432/crawlgate')).toBe('[redacted]');
    expect(redact('Chain: local at http://127.0.0.1:8545')).toBe('Chain: local at http://127.0.0.1:8545');
    expect(
      logRedactor(['https://rpc.example?apikey=SECRETRPCKEY0123'])('URL: https://rpc.example?apikey=SECRETRPCKEY0123'),
    ).toBe('URL: [redacted]');
  });
});

describe('RedactingLogger', () => {
  it('redacts every line and stack it writes, through Nest’s Logger too', () => {
    const written: string[] = [];
    const write = process.stdout.write;
    const writeError = process.stderr.write;
    const capture = (chunk: unknown) => (written.push(String(chunk)), true);
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    const url = 'https://rpc.example/v2/SECRETRPCKEY0123';
    try {
      Logger.overrideLogger(new RedactingLogger(logRedactor([url]), ['log', 'warn', 'error']));
      const logger = new Logger('Payments');
      logger.warn(`Broadcast failed: HTTP request failed.\nStatus: 502\nURL: ${url}`);
      const error = new Error(`HTTP request failed. URL: ${url}`);
      logger.error(error.message, error.stack);
      logger.log({ url });
    } finally {
      Logger.overrideLogger(false);
      process.stdout.write = write;
      process.stderr.write = writeError;
    }
    const all = written.join('');
    expect(all).toContain('URL: [redacted]');
    expect(all).toContain('Status: 502');
    expect(all).not.toContain('SECRETRPCKEY');
  });
});
