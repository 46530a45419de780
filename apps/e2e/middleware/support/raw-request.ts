/* A raw HTTP request to a site on loopback: the path is sent byte for byte (fetch would resolve dot segments first). */

import { request as httpRequest } from 'node:http';
import type { SiteServer } from './site-servers';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function rawRequest(
  server: SiteServer,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}
