import { z } from 'zod';
import { type ApiOperation, HEADER_DOCS, type NamedSchema } from './describe_route.ts';

/** A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) schema object. */
function toSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json;
}

/**
 * The named schemas the operations use, each as a request body accepts it or as a response answers it. A name
 * given to two schemas, or used both ways, is refused: the document would describe one of them wrongly.
 */
function collectComponents(
  operations: ApiOperation[],
  answers: NamedSchema[],
): Record<string, Record<string, unknown>> {
  const seen = new Map<string, { named: NamedSchema; io: 'input' | 'output' }>();
  const use = (named: NamedSchema, io: 'input' | 'output', where: string) => {
    const known = seen.get(named.name);
    if (!known) seen.set(named.name, { named, io });
    else if (known.named.schema !== named.schema || known.io !== io)
      throw new Error(
        `OpenAPI: ${where} gives the name ${named.name} to another schema, or uses it both ways.`,
      );
  };
  for (const op of operations) {
    if (op.body) use(op.body, 'input', op.operationId);
    for (const r of Object.values(op.responses)) if (r.schema) use(r.schema, 'output', op.operationId);
  }
  for (const named of answers) use(named, 'output', 'a named answer');
  return Object.fromEntries([...seen].map(([name, { named, io }]) => [name, toSchema(named.schema, io)]));
}

function toOperation(op: ApiOperation): Record<string, unknown> {
  const parameters = [
    ...(op.parameters ?? []).map((p) => ({
      name: p.name,
      in: p.in,
      required: p.in === 'path' ? true : (p.required ?? false),
      ...(p.description ? { description: p.description } : {}),
      schema: toSchema(p.schema, 'input'),
    })),
    ...Object.entries(op.query?.shape ?? {}).map(([name, field]) => ({
      name,
      in: 'query',
      required: !(field as z.ZodType).safeParse(undefined).success,
      schema: toSchema(field as z.ZodType, 'input'),
    })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(op.responses)) {
    const type = r.schema?.name === 'Problem' ? 'application/problem+json' : 'application/json';
    responses[status] = {
      description: r.description,
      ...(r.csv
        ? {
            content: {
              'text/csv': {
                schema: { type: 'string', description: 'UTF-8 with a byte-order mark; CRLF line ends' },
              },
            },
          }
        : {}),
      ...(r.media
        ? {
            content: Object.fromEntries(
              r.media.map((m) => [m, { schema: { type: 'string', contentMediaType: m } }]),
            ),
          }
        : {}),
      ...(r.schema
        ? { content: { [type]: { schema: { $ref: `#/components/schemas/${r.schema.name}` } } } }
        : {}),
      ...(r.headers ? { headers: Object.fromEntries(r.headers.map((h) => [h, HEADER_DOCS[h]])) } : {}),
    };
  }
  return {
    operationId: op.operationId,
    summary: op.summary,
    security: op.scope ? [{ apiKey: [op.scope] }] : [],
    ...(op.scope ? { 'x-required-scope': op.scope } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${op.body.name}` } } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the given operations and the zod schemas they name (never written by hand).
 * `answers` are named for clients though no operation answers them whole (the items of a list).
 */
export function buildOpenApiDocument(
  operations: ApiOperation[],
  serverUrl: string,
  answers: NamedSchema[] = [],
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    paths[op.path]![op.method] = toOperation(op);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lifeline API',
      version: '1.0.0',
      description:
        'Branded short links a newsroom owns. Errors are RFC 9457 problem details. Authenticate with ' +
        '`Authorization: Bearer <api key>`; scopes are links:read, links:write, moderation (reports, blocklist) and admin (admin implies all).',
    },
    servers: [{ url: `${serverUrl}/api/v1` }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'an API key (ll_...)' } },
      schemas: collectComponents(operations, answers),
    },
  };
}
