import { connect, createServer, type Server, type Socket } from 'node:net';
import { startTcpProxy, type TcpProxy } from '../../test/tcp-proxy';

/** Sends `text` on a fresh connection to `port` and resolves with the echo, or the error that ended it. */
function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.once('data', (data) => (resolve(data.toString()), socket.end()));
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed without an answer')));
  });
}

/** A connection that stays open, and a promise of how it ended. */
function openConnection(port: number): Promise<{ socket: Socket; ended: Promise<string> }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, ended }));
    const ended = new Promise<string>((done) => {
      socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
      socket.once('close', () => done('closed'));
    });
  });
}

describe('startTcpProxy', () => {
  let echo: Server;
  let echoPort: number;
  let proxy: TcpProxy;

  beforeAll(async () => {
    echo = createServer((socket) => socket.on('error', () => undefined).pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
    echoPort = (echo.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));
  beforeEach(async () => {
    proxy = await startTcpProxy('127.0.0.1', echoPort);
  });
  afterEach(() => proxy.close());

  it('forwards both ways', async () => {
    expect(await roundTrip(proxy.port, 'hello')).toBe('hello');
  });

  it('resets live connections on cut, resets new ones while cut, and forwards again after restore', async () => {
    const live = await openConnection(proxy.port);
    await proxy.cut();
    expect(await live.ended).toBe('ECONNRESET');
    await expect(roundTrip(proxy.port, 'lost')).rejects.toThrow(/ECONNRESET|closed without an answer/);
    await proxy.restore();
    expect(await roundTrip(proxy.port, 'back')).toBe('back');
  });

  it('resets live connections on refuse, refuses new ones (never connected), and listens again on the same port after restore', async () => {
    const live = await openConnection(proxy.port);
    await proxy.refuse();
    expect(await live.ended).toBe('ECONNRESET');
    await expect(roundTrip(proxy.port, 'lost')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await proxy.restore();
    expect(await roundTrip(proxy.port, 'back')).toBe('back');
  });

  it('lets a tap drop chunks, by direction and connection', async () => {
    await proxy.close();
    const seen: string[] = [];
    proxy = await startTcpProxy('127.0.0.1', echoPort, {
      tap: (chunk, direction, connection) => {
        seen.push(`${connection}:${direction}:${chunk}`);
        return chunk.toString() !== 'drop me';
      },
    });
    expect(await roundTrip(proxy.port, 'keep me')).toBe('keep me');
    const { socket, ended } = await openConnection(proxy.port);
    const answers: string[] = [];
    socket.on('data', (data) => answers.push(data.toString()));
    socket.write('drop me');
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.end();
    await ended;
    expect(answers).toEqual([]);
    expect(seen).toEqual(['1:to-target:keep me', '1:to-client:keep me', '2:to-target:drop me']);
  });

  it('lets a tap reset one connection and leave the others alone', async () => {
    await proxy.close();
    proxy = await startTcpProxy('127.0.0.1', echoPort, {
      tap: (chunk) => (chunk.toString() === 'reset me' ? 'reset' : true),
    });
    const bystander = await openConnection(proxy.port);
    await expect(roundTrip(proxy.port, 'reset me')).rejects.toThrow(/ECONNRESET|closed without an answer/);
    const answer = new Promise((resolve) => bystander.socket.once('data', (data) => resolve(data.toString())));
    bystander.socket.write('still here');
    expect(await answer).toBe('still here');
    bystander.socket.end();
  });

  it('stops listening on close', async () => {
    await proxy.close();
    await expect(roundTrip(proxy.port, 'gone')).rejects.toThrow(/ECONNREFUSED/);
  });
});
