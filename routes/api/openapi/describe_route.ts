import type { z } from 'zod';
import type { ApiKeyScope } from '../../../lib/auth/api_keys.ts';

/**
 * A zod schema under the name it has in the document's components.schemas. Operations refer to the same object,
 * so a name stands for one schema; a request body is described as the schema accepts it, a response as it answers.
 */
export interface NamedSchema {
  readonly name: string;
  readonly schema: z.ZodType;
}

/** Names a zod schema for the document; declare it once and share the object between operations. */
export function named(name: string, schema: z.ZodType): NamedSchema {
  return { name, schema };
}

/** Response headers the API documents, by name (an operation lists the ones it sends). */
export const HEADER_DOCS = {
  Location: { description: 'where the new resource lives', schema: { type: 'string' } },
  ETag: { description: 'the link version, for If-Match', schema: { type: 'string' } },
  'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } },
  'Content-Disposition': {
    description: 'attachment; filename="…" (…csv, …-qr.svg, .png or .pdf)',
    schema: { type: 'string' },
  },
  'Lifeline-Sync': {
    description:
      'accepted: caches and vendors are being updated; deferred: Temporal was unreachable, the change is ' +
      'saved in Postgres and reconciliation repairs replicas; queued (batches): the new links were queued ' +
      'for the sync queue with them, and its drainer syncs them in batches after this response',
    schema: { type: 'string', enum: ['accepted', 'deferred', 'queued'] },
  },
} satisfies Record<string, { description: string; schema: object }>;
export type ResponseHeader = keyof typeof HEADER_DOCS;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: z.ZodType;
}

export interface ApiResponse {
  description: string;
  schema?: NamedSchema;
  /** A CSV download (text/csv, UTF-8 with a BOM) instead of JSON. */
  csv?: boolean;
  /** A file in one of these media types (an image, a PDF) instead of JSON. */
  media?: string[];
  headers?: ResponseHeader[];
}

/** One documented operation; tests check each is a route of the app and answers as documented. */
export interface ApiOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path under /api/v1, e.g. /links/{code}. */
  path: string;
  operationId: string;
  summary: string;
  /** The API-key scope required; null for routes authenticated otherwise (or public). */
  scope: ApiKeyScope | null;
  parameters?: Parameter[];
  /** The query the handler validates: each field is a query parameter, required unless it may be left out. */
  query?: z.ZodObject;
  body?: NamedSchema;
  responses: Record<number, ApiResponse>;
}

/**
 * Describes one operation beside its handler. It registers nothing: routes/api/openapi.ts assembles the
 * document from every group's operations, and tests/routes/api/openapi.test.ts holds them to the app's routes.
 */
export function describeRoute(operation: ApiOperation): ApiOperation {
  return operation;
}
