import { EventEmitter } from 'node:events';
import { recordWrittenTargets, writtenTarget } from './written-target';

describe('recordWrittenTargets', () => {
  it('keeps the target as the request arrives, before listeners that rewrite it', () => {
    const server = new EventEmitter();
    server.on('request', (request: { url: string }) => (request.url = '/rewritten'));
    recordWrittenTargets(server);
    recordWrittenTargets(server); // a second adapter on the same server adds nothing
    const request = { url: '/as/written' };
    server.emit('request', request);
    expect(request.url).toBe('/rewritten');
    expect(writtenTarget(request)).toBe('/as/written');
    expect(server.listenerCount('request')).toBe(2);
  });

  it('knows nothing of a request its server did not record', () => {
    expect(writtenTarget({ url: '/x' })).toBeUndefined();
    expect(writtenTarget(undefined)).toBeUndefined();
  });
});
