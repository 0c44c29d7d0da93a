import type { IncomingMessage, ServerResponse } from 'node:http';

/** A platform response: Express's is a ServerResponse, Fastify's reply carries one as `raw`. */
export type AnyResponse = ServerResponse | { raw: ServerResponse };
export const rawOf = (res: AnyResponse): ServerResponse => ('raw' in res ? res.raw : res);
export type AnyRequest = IncomingMessage & { originalUrl?: string; ip?: string };
