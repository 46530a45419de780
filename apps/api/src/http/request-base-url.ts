import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/config';

/** The API's own base URL: PUBLIC_BASE_URL when set, else (only on `local`: config requires it elsewhere) what the request was addressed to. */
export function requestBaseUrl(config: AppConfig, request: FastifyRequest): string {
  return config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
}
