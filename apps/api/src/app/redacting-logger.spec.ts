import { Logger } from '@nestjs/common';
import { logRedactor, RedactingLogger } from './redacting-logger';

describe('logRedactor', () => {
  const redact = logRedactor({
    rpcUrl: 'https://base-mainnet.g.example.com/v2/SECRETRPCKEY0123',
    others: [
      'postgresql://crawlgate:db-pass%21word@db.internal:5432/crawlgate_production',
      'redis://127.0.0.1:6379',
      undefined,
    ],
  });

  it('blanks the RPC URL’s key and the database password, whole or alone, as written or decoded', () => {
    expect(redact('URL: https://base-mainnet.g.example.com/v2/SECRETRPCKEY0123')).toBe('URL: [redacted]');
    expect(redact('GET /v2/SECRETRPCKEY0123 failed')).toBe('GET [redacted] failed');
    expect(redact('postgresql://crawlgate:db-pass%21word@db.internal:5432/crawlgate_production')).toBe('[redacted]');
    expect(redact('password=db-pass!word')).toBe('password=[redacted]');
    const query = logRedactor({ rpcUrl: 'https://rpc.example?key=abc123456' });
    expect(query('URL: https://rpc.example?key=abc123456')).toBe('URL: [redacted]');
    expect(query('GET /?key=abc123456 failed')).toBe('GET [redacted] failed');
  });

  it('leaves what is no secret readable: a local node, a Redis without password, user and database names', () => {
    expect(redact('redis at redis://127.0.0.1:6379')).toBe('redis at redis://127.0.0.1:6379');
    expect(redact('user "crawlgate" on database "crawlgate_production"')).toBe(
      'user "crawlgate" on database "crawlgate_production"',
    );
    expect(logRedactor({ rpcUrl: 'http://127.0.0.1:8545' })('Chain: local at http://127.0.0.1:8545')).toBe(
      'Chain: local at http://127.0.0.1:8545',
    );
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
      Logger.overrideLogger(new RedactingLogger(logRedactor({ rpcUrl: url }), ['log', 'warn', 'error']));
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
