/*
 * An agent's Web Bot Auth key directory, served by a real HTTP server on loopback, with the ways
 * a directory can misbehave: down (500), slow (answers after the test is over), huge, not JSON,
 * the wrong type, a redirect. `fetches` counts the requests it got.
 */

import {
  generateEd25519Jwk,
  KEY_DIRECTORY_MEDIA_TYPE,
  webBotAuthKeyDirectory,
  type Ed25519PrivateJwk,
} from '@crawlgate/core';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type DirectoryMode = 'ok' | 'down' | 'slow' | 'huge' | 'not-json' | 'html' | 'redirect' | 'empty';

export interface AgentDirectory {
  /** http://127.0.0.1:<port>: the Signature-Agent origin. */
  origin: string;
  /** The key the directory lists (first), for signing. */
  key: Ed25519PrivateJwk;
  /** Keys listed; replace to rotate. */
  listed: Ed25519PrivateJwk[];
  mode: DirectoryMode;
  /** Served as the directory (mode 'ok') instead of the listed keys, when set. */
  body?: unknown;
  fetches: number;
  /** The User-Agent of each directory request, in order. */
  userAgents: (string | undefined)[];
  close(): Promise<void>;
}

export async function startAgentDirectory(mode: DirectoryMode = 'ok'): Promise<AgentDirectory> {
  const key = await generateEd25519Jwk();
  const hanging = new Set<ServerResponse>();
  const directory: AgentDirectory = {
    origin: '',
    key,
    listed: [key],
    mode,
    fetches: 0,
    userAgents: [],
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    if (request.url !== '/.well-known/http-message-signatures-directory') return void response.writeHead(404).end();
    directory.fetches++;
    directory.userAgents.push(request.headers['user-agent']);
    switch (directory.mode) {
      case 'ok':
        return void response
          .writeHead(200, { 'content-type': KEY_DIRECTORY_MEDIA_TYPE })
          .end(JSON.stringify(directory.body ?? webBotAuthKeyDirectory(directory.listed)));
      case 'empty':
        return void response
          .writeHead(200, { 'content-type': KEY_DIRECTORY_MEDIA_TYPE })
          .end(JSON.stringify({ keys: [] }));
      case 'down':
        return void response.writeHead(500).end();
      case 'slow':
        hanging.add(response);
        response.writeHead(200, { 'content-type': KEY_DIRECTORY_MEDIA_TYPE });
        return void response.write('{"keys":');
      case 'huge':
        // No content-length: the cap must hold while reading, not just on a declared size.
        response.writeHead(200, { 'content-type': KEY_DIRECTORY_MEDIA_TYPE });
        response.write(`{"keys":[${JSON.stringify(webBotAuthKeyDirectory(directory.listed).keys[0])}],"pad":"`);
        return void response.end(`${'x'.repeat(200_000)}"}`);
      case 'not-json':
        return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [');
      case 'html':
        return void response
          .writeHead(200, { 'content-type': 'text/html' })
          .end(JSON.stringify(webBotAuthKeyDirectory(directory.listed)));
      case 'redirect':
        return void response
          .writeHead(302, { location: 'http://127.0.0.1:9/.well-known/http-message-signatures-directory' })
          .end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  directory.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return directory;
}
