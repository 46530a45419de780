import { Logger } from '@nestjs/common';
import { RedactingLogger, REDACTED, secretPartsOf } from './redacting-logger';

describe('secretPartsOf', () => {
  it('takes the RPC URL’s path and query and any URL’s password, never a host or a user name', () => {
    expect(
      secretPartsOf({
        rpcUrl: 'https://base-mainnet.g.example.com/v2/SECRETRPCKEY0123',
        others: [
          'postgresql://crawlgate:db-pass%21word@db.internal:5432/crawlgate',
          'redis://127.0.0.1:6379',
          undefined,
        ],
      }),
    ).toEqual(['/v2/SECRETRPCKEY0123', 'db-pass%21word', 'db-pass!word']);
    expect(secretPartsOf({ rpcUrl: 'http://127.0.0.1:8545' })).toEqual([]);
    expect(secretPartsOf({ rpcUrl: 'https://rpc.example/?apikey=SECRET9' })).toEqual(['/?apikey=SECRET9']);
    expect(secretPartsOf({ rpcUrl: 'not a url', others: ['postgres://u:pw@h/db'] })).toEqual([]); // "pw": too short to hide
  });
});

describe('RedactingLogger', () => {
  it('hides the parts in every line and stack it writes, through Nest’s Logger too', () => {
    const written: string[] = [];
    const write = process.stdout.write;
    const writeError = process.stderr.write;
    const capture = (chunk: unknown) => (written.push(String(chunk)), true);
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    const url = 'https://rpc.example/v2/SECRETRPCKEY0123';
    try {
      Logger.overrideLogger(new RedactingLogger(secretPartsOf({ rpcUrl: url }), ['log', 'warn', 'error']));
      const logger = new Logger('Payments');
      logger.warn(`Broadcast failed: HTTP request failed.\nStatus: 502\nURL: ${url}`);
      const error = new Error(`HTTP request failed. URL: ${url}`);
      logger.error(error.message, error.stack);
    } finally {
      Logger.overrideLogger(false);
      process.stdout.write = write;
      process.stderr.write = writeError;
    }
    const all = written.join('');
    expect(all).toContain(`URL: https://rpc.example${REDACTED}`);
    expect(all).toContain('Status: 502');
    expect(all).not.toContain('SECRETRPCKEY');
  });
});
