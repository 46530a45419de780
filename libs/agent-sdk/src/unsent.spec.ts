import { markingUnsent, neverConnected, sentOnce, wasUnsent } from './unsent';

const failed = (cause: unknown) => new TypeError('fetch failed', { cause });
const refused = () =>
  failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }));
const reset = () => failed(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));

/** What markingUnsent throws for `send`, and whether it is marked unsent. */
async function thrown(send: (http: typeof fetch) => Promise<unknown>, http: typeof fetch) {
  try {
    await markingUnsent(http, send);
  } catch (error) {
    return { error, unsent: wasUnsent(error) };
  }
  throw new Error('it did not throw');
}

describe('neverConnected', () => {
  it('is a connection refused, a name not found, an unreachable host or a connect timeout', () => {
    expect(neverConnected(refused())).toBe(true);
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'ENOTFOUND', syscall: 'getaddrinfo' })))).toBe(
      true,
    );
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'EHOSTUNREACH', syscall: 'connect' })))).toBe(true);
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'UND_ERR_CONNECT_TIMEOUT' })))).toBe(true);
    expect(
      neverConnected(
        failed(new AggregateError([Object.assign(new Error(), { code: 'ECONNREFUSED', syscall: 'connect' })])),
      ),
    ).toBe(true);
  });

  it('is not a failure that may come once the server read the request', () => {
    expect(neverConnected(reset())).toBe(false);
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'ECONNRESET', syscall: 'read' })))).toBe(false);
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'EHOSTUNREACH', syscall: 'read' })))).toBe(false);
    expect(neverConnected(failed(Object.assign(new Error(), { code: 'ECONNREFUSED' })))).toBe(false);
    expect(neverConnected(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(neverConnected(Object.assign(new Error(), { code: 'ECONNREFUSED', syscall: 'connect' }))).toBe(false);
    expect(neverConnected(failed(new AggregateError([])))).toBe(false);
    expect(
      neverConnected(
        failed(
          new AggregateError([
            Object.assign(new Error(), { code: 'ECONNREFUSED', syscall: 'connect' }),
            Object.assign(new Error(), { code: 'ECONNRESET', syscall: 'read' }),
          ]),
        ),
      ),
    ).toBe(false);
  });
});

describe('markingUnsent', () => {
  const answered = () => Promise.resolve(new Response(null, { status: 302 }));

  it('marks a first request that could not connect, and a failure before any request', async () => {
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(refused()),
      ),
    ).toMatchObject({ unsent: true });
    expect(
      await thrown(
        () => Promise.reject(new Error('the signature was not made')),
        () => answered(),
      ),
    ).toMatchObject({ unsent: true });
  });

  it('does not mark a lost answer, nor a later request failing once the first was answered', async () => {
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(reset()),
      ),
    ).toMatchObject({ unsent: false });
    let calls = 0;
    const redirectThenRefused: typeof fetch = () => (calls++ === 0 ? answered() : Promise.reject(refused()));
    expect(
      await thrown(async (http) => {
        await http('http://site/');
        return http('http://elsewhere/');
      }, redirectThenRefused),
    ).toMatchObject({ unsent: false });
  });

  it('passes an answer and a thrown value through as they are', async () => {
    const response = new Response('ok');
    expect(
      await markingUnsent(
        () => Promise.resolve(response),
        (http) => http('http://site/'),
      ),
    ).toBe(response);
    const error = refused();
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(error),
      ),
    ).toEqual({ error, unsent: true });
    expect(await thrown(() => Promise.reject('a string'), answered)).toEqual({ error: 'a string', unsent: false });
  });
});

describe('sentOnce', () => {
  const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
  const globals = globalThis as Record<symbol, unknown>;
  const before = globals[GLOBAL_DISPATCHER];
  afterEach(() => {
    globals[GLOBAL_DISPATCHER] = before;
  });
  class Agent {}
  class RetryAgent {}

  it('is a request naming no dispatcher, through a plain global Agent or none', () => {
    globals[GLOBAL_DISPATCHER] = new Agent();
    expect(sentOnce(undefined)).toBe(true);
    expect(sentOnce({ method: 'GET' })).toBe(true);
    globals[GLOBAL_DISPATCHER] = undefined;
    expect(sentOnce({})).toBe(true);
  });

  it('is not a request naming a dispatcher of its own, nor one through another global dispatcher (it may resend)', () => {
    globals[GLOBAL_DISPATCHER] = new Agent();
    expect(sentOnce({ dispatcher: new Agent() } as RequestInit)).toBe(false);
    globals[GLOBAL_DISPATCHER] = new RetryAgent();
    expect(sentOnce({})).toBe(false);
  });

  it('keeps markingUnsent from marking a refused connection through such a dispatcher', async () => {
    globals[GLOBAL_DISPATCHER] = new RetryAgent();
    expect(
      await thrown(
        (http) => http('http://site/'),
        () => Promise.reject(refused()),
      ),
    ).toMatchObject({ unsent: false });
    // A failure before any request is still unsent, whatever would have sent it.
    expect(
      await thrown(
        () => Promise.reject(new Error('the signature was not made')),
        () => Promise.reject(refused()),
      ),
    ).toMatchObject({ unsent: true });
  });
});
