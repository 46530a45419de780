export { PublisherClient, type PublisherClientOptions, type RotateSecretOptions, type UpdateMeOptions } from './client';
export { ApiError, TimeoutError, payoutProofMessageOf, type ApiErrorInit } from './errors';
export type { FetchLike } from './http';
export * from './verify';
export type * from './types';
