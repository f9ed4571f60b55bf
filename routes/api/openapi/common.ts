import { z } from 'zod';
import { problemSchema } from '../../../lib/links/create_links_batch.ts';
import { type ApiResponse, named, type Parameter } from './describe_route.ts';

/** Parameters and answers many operations share. */

export const Problem = named('Problem', problemSchema);

export const codeParam: Parameter = { name: 'code', in: 'path', required: true, schema: z.string() };
/** With codeParam: the short domain of a link made on another than the default (ADR 0078). */
export const domainParam: Parameter = {
  name: 'domain',
  in: 'query',
  description: 'the link’s short domain (one of SHORT_DOMAINS); absent: the default',
  schema: z.string().max(253),
};
export const idempotencyKey: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  description: 'Replays the first response for the same key and body (24 h); a different body is a 422.',
  schema: z.string().min(1).max(255),
};
export const ifMatch: Parameter = {
  name: 'If-Match',
  in: 'header',
  description: 'The ETag of the version you edited; 412 if the link changed since.',
  schema: z.string(),
};
export const signatureHeader: Parameter = {
  name: 'X-Lifeline-Signature',
  in: 'header',
  required: true,
  schema: z.string(),
};

export const problem = (description: string): ApiResponse => ({ description, schema: Problem });
export const retryLater = (description: string): ApiResponse => ({
  description,
  schema: Problem,
  headers: ['Retry-After'],
});
/** The answers of an API-key route to a caller without a key, or without the scope. */
export const auth = { 401: problem('no valid API key'), 403: problem('the key lacks the scope') };
export const temporalUnavailable = retryLater('Temporal unavailable');
