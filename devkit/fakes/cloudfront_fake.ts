// A real HTTP server reproducing CloudFront's CreateInvalidation
// (`POST /2020-05-31/distribution/{DistributionId}/invalidation`), for tests. Sources (looked up for this fake):
//   - Request: an XML `InvalidationBatch` (namespace http://cloudfront.amazonaws.com/doc/2020-05-31/) with
//     `Paths/Quantity`, `Paths/Items/Path` and `CallerReference`. A repeated CallerReference with the same paths
//     returns the invalidation already made; with other paths it is an `InvalidationBatchAlreadyExists` error
//     [spec: API_CreateInvalidation, CallerReference; the 409 status is [infer]].
//   - Answer: 201 with a `Location` header and an `Invalidation` document (`Id`, `Status` InProgress,
//     `CreateTime`, `InvalidationBatch`) [spec: API_CreateInvalidation, API_Invalidation].
//   - Errors [spec: API_CreateInvalidation "Errors"]: AccessDenied 403, BatchTooLarge 413, InconsistentQuantities
//     400, InvalidArgument 400, MissingBody 400, NoSuchDistribution 404, TooManyInvalidationsInProgress 400, in the
//     REST-XML envelope `<ErrorResponse><Error><Type>Sender</Type><Code/><Message/></Error><RequestId/>`
//     [obs: laurilehmijoki/s3_website #26 shows TooManyInvalidationsInProgress with "Processing your request will
//     cause you to exceed the maximum number of in-progress invalidations."]. `Throttling` "Rate exceeded" comes as
//     400 [obs: spacecatninja/craft-imager-x #19, aws/aws-sdk-js #3983 (after 6-7 quick calls)], and
//     `ServiceUnavailable` 503 "CloudFront encountered an internal error. Please try again." [obs: aws-cdk #15891].
//   - Limits: "invalidation requests for up to 3,000 files per distribution in progress at one time"; "If you're
//     using the * wildcard, you can have requests for up to 15 invalidation paths in progress at one time", the
//     two counted independently [docs: AmazonCloudFront/latest/DeveloperGuide/InvalidationLimits.html]. "The
//     maximum length of a path is 4,000 characters. You can't use a wildcard within the path; only at the end of
//     the path"; paths are case sensitive [docs: invalidation-specifying-objects]. Items starting with `#` are
//     cache tags on distributions with CacheTagConfig [docs: invalidation-specifying-tags].
//   - Authentication: AWS Signature Version 4, service `cloudfront`, region `us-east-1`. This fake VERIFIES the
//     signature for real with its known secret, by its own implementation (aws_sigv4_verifier.ts, independent of
//     lib/cdn/aws_sigv4.ts): an unknown key is 403 InvalidClientTokenId, a wrong signature or scope 403
//     SignatureDoesNotMatch, an x-amz-date more than 15 minutes off 403 SignatureDoesNotMatch "Signature expired",
//     no Authorization 403 MissingAuthenticationToken [infer from AWS's common errors for REST-XML services].
// Scripted failures (Throttling, 5xx, slowness, drops, hangs) come from ScriptedHttpServer.
import { verifySigV4 } from './aws_sigv4_verifier.ts';
import {
  type FakeAnswer,
  type FakeRequest,
  type ScriptedFailure,
  ScriptedFake,
} from './scripted_http_server.ts';

export { type SigV4Input, verifySigV4 } from './aws_sigv4_verifier.ts';

const NAMESPACE = 'http://cloudfront.amazonaws.com/doc/2020-05-31/';
const MAX_FILE_PATHS_IN_PROGRESS = 3000;
const MAX_WILDCARDS_IN_PROGRESS = 15;
const MAX_PATH_LENGTH = 4000;

export interface FakeInvalidation {
  id: string;
  distributionId: string;
  callerReference: string;
  paths: string[];
  createTime: string;
  /** InProgress until completeAfterMs have passed (or complete() is called). */
  status: 'InProgress' | 'Completed';
  completesAt: number;
}

export interface CloudFrontFakeOptions {
  distributionId?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** How long an invalidation stays InProgress (default 60 s; tests call completeAll()). */
  completeAfterMs?: number;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function unescapeXml(value: string): string {
  return value
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** CloudFront's REST-XML error document. */
export function cloudFrontError(status: number, code: string, message: string, type = 'Sender'): FakeAnswer {
  return {
    status,
    body:
      `<?xml version="1.0"?>\n<ErrorResponse xmlns="${NAMESPACE}"><Error><Type>${type}</Type><Code>${code}</Code>` +
      `<Message>${escapeXml(message)}</Message></Error><RequestId>${crypto.randomUUID()}</RequestId></ErrorResponse>`,
    headers: { 'Content-Type': 'text/xml' },
  };
}

export class CloudFrontFake extends ScriptedFake {
  readonly distributionId: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  completeAfterMs: number;
  /** Invalidations accepted, in order (one per distinct CallerReference). */
  readonly invalidations: FakeInvalidation[] = [];
  private readonly secrets: Map<string, string>;

  constructor(options: CloudFrontFakeOptions = {}) {
    super();
    this.distributionId = options.distributionId ?? 'EDFDVBD6EXAMPLE';
    this.accessKeyId = options.accessKeyId ?? 'AKIAFAKECLOUDFRONT01';
    this.secretAccessKey = options.secretAccessKey ?? `fake/${crypto.randomUUID()}`;
    this.completeAfterMs = options.completeAfterMs ?? 60_000;
    this.secrets = new Map([[this.accessKeyId, this.secretAccessKey]]);
  }

  /** The base to give the purger (requests go to `<url>/2020-05-31/...`). */
  get apiBaseUrl(): string {
    return this.server.url;
  }

  protected clearRecords(): void {
    this.invalidations.length = 0;
  }

  /** Marks every invalidation Completed (its paths no longer count against the in-progress limits). */
  completeAll(): void {
    for (const inv of this.invalidations) inv.status = 'Completed';
  }

  /** Every path or tag item accepted, in order. */
  invalidatedPaths(): string[] {
    return this.invalidations.flatMap((i) => i.paths);
  }

  failNext(failure: ScriptedFailure): void {
    this.server.failNext(failure);
  }

  /** The next `times` calls get `Throttling: Rate exceeded` (400). */
  throttleNext(times = 1): void {
    this.server.failNext({ times, answer: cloudFrontError(400, 'Throttling', 'Rate exceeded') });
  }

  /** The next `times` calls get `ServiceUnavailable` (503). */
  unavailableNext(times = 1): void {
    this.server.failNext({
      times,
      answer: cloudFrontError(
        503,
        'ServiceUnavailable',
        'CloudFront encountered an internal error. Please try again.',
        'Receiver',
      ),
    });
  }

  private inProgress(distributionId: string): { files: number; wildcards: number } {
    const now = Date.now();
    let files = 0;
    let wildcards = 0;
    for (const inv of this.invalidations) {
      if (inv.status === 'InProgress' && now >= inv.completesAt) inv.status = 'Completed';
      if (inv.distributionId !== distributionId || inv.status !== 'InProgress') continue;
      for (const p of inv.paths) {
        if (p.endsWith('*')) wildcards++;
        else files++;
      }
    }
    return { files, wildcards };
  }

  protected override authorize(request: FakeRequest): FakeAnswer | null {
    const problem = verifySigV4(
      {
        method: request.method,
        path: request.path,
        query: request.query.toString(),
        headers: request.headers,
        body: request.rawBody,
      },
      this.secrets,
      { region: 'us-east-1', service: 'cloudfront' },
    );
    if (!problem) return null;
    return cloudFrontError(problem.code === 'IncompleteSignature' ? 400 : 403, problem.code, problem.message);
  }

  protected answer(request: FakeRequest): FakeAnswer {
    const m = /^\/2020-05-31\/distribution\/([^/]+)\/invalidation$/.exec(request.path);
    if (!m || request.method !== 'POST')
      return cloudFrontError(404, 'NoSuchResource', 'The specified resource does not exist.');
    const distributionId = decodeURIComponent(m[1]!);
    if (distributionId !== this.distributionId) {
      return cloudFrontError(404, 'NoSuchDistribution', 'The specified distribution does not exist.');
    }
    const xml = request.rawBody.trim();
    if (!xml)
      return cloudFrontError(
        400,
        'MissingBody',
        'This operation requires a body. Ensure that the body is present and the Content-Type header is set.',
      );
    const root = /<InvalidationBatch(?:\s+xmlns="([^"]*)")?\s*>([\s\S]*)<\/InvalidationBatch>\s*$/.exec(
      xml.replace(/^<\?xml[^>]*\?>\s*/, ''),
    );
    if (!root || root[1] !== NAMESPACE)
      return cloudFrontError(
        400,
        'MalformedInput',
        'Unexpected or missing InvalidationBatch element or namespace.',
      );
    const inner = root[2]!;
    const callerReference = /<CallerReference>([^<]*)<\/CallerReference>/.exec(inner)?.[1];
    if (!callerReference) return cloudFrontError(400, 'InvalidArgument', 'CallerReference is required.');
    const quantityText =
      /<Paths>\s*<Quantity>(\d+)<\/Quantity>/.exec(inner)?.[1] ??
      /<Quantity>(\d+)<\/Quantity>/.exec(inner)?.[1];
    if (quantityText === undefined)
      return cloudFrontError(400, 'InvalidArgument', 'Paths/Quantity is required.');
    const paths = [...inner.matchAll(/<Path>([^<]*)<\/Path>/g)].map((p) => unescapeXml(p[1]!));
    if (Number(quantityText) !== paths.length) {
      return cloudFrontError(
        400,
        'InconsistentQuantities',
        "The value of Quantity and the size of Items don't match.",
      );
    }
    if (paths.length === 0)
      return cloudFrontError(400, 'InvalidArgument', 'Your request contains no invalidation paths.');
    if (paths.length > MAX_FILE_PATHS_IN_PROGRESS)
      return cloudFrontError(413, 'BatchTooLarge', 'Invalidation batch specified is too large.');
    for (const p of paths) {
      if (!(p.startsWith('/') || p.startsWith('#')) || p.length > MAX_PATH_LENGTH || /\s/.test(p)) {
        return cloudFrontError(
          400,
          'InvalidArgument',
          `Your request contains one or more invalid invalidation paths: ${p.slice(0, 200)}`,
        );
      }
    }
    const reference = unescapeXml(callerReference);
    const earlier = this.invalidations.find(
      (i) => i.distributionId === distributionId && i.callerReference === reference,
    );
    if (earlier) {
      if (JSON.stringify(earlier.paths) !== JSON.stringify(paths)) {
        return cloudFrontError(
          409,
          'InvalidationBatchAlreadyExists',
          'A different batch was already submitted under this CallerReference.',
        );
      }
      return this.created(earlier);
    }
    const { files, wildcards } = this.inProgress(distributionId);
    const newWildcards = paths.filter((p) => p.endsWith('*')).length;
    if (
      files + paths.length - newWildcards > MAX_FILE_PATHS_IN_PROGRESS ||
      wildcards + newWildcards > MAX_WILDCARDS_IN_PROGRESS
    ) {
      return cloudFrontError(
        400,
        'TooManyInvalidationsInProgress',
        'Processing your request will cause you to exceed the maximum number of in-progress invalidations.',
      );
    }
    const invalidation: FakeInvalidation = {
      id: `I${crypto.randomUUID().replace(/-/g, '').slice(0, 13).toUpperCase()}`,
      distributionId,
      callerReference: reference,
      paths,
      createTime: new Date().toISOString(),
      status: 'InProgress',
      completesAt: Date.now() + this.completeAfterMs,
    };
    this.invalidations.push(invalidation);
    return this.created(invalidation);
  }

  private created(inv: FakeInvalidation): FakeAnswer {
    const items = inv.paths.map((p) => `<Path>${escapeXml(p)}</Path>`).join('');
    return {
      status: 201,
      headers: {
        'Content-Type': 'text/xml',
        Location: `https://cloudfront.amazonaws.com/2020-05-31/distribution/${inv.distributionId}/invalidation/${inv.id}`,
      },
      body:
        `<?xml version="1.0"?>\n<Invalidation xmlns="${NAMESPACE}"><Id>${inv.id}</Id><Status>${inv.status}</Status>` +
        `<CreateTime>${inv.createTime}</CreateTime><InvalidationBatch><Paths><Quantity>${inv.paths.length}</Quantity>` +
        `<Items>${items}</Items></Paths><CallerReference>${escapeXml(inv.callerReference)}</CallerReference>` +
        `</InvalidationBatch></Invalidation>`,
    };
  }
}

/** Starts a CloudFront invalidation fake on a free port. */
export async function startCloudFrontFake(options: CloudFrontFakeOptions = {}): Promise<CloudFrontFake> {
  return new CloudFrontFake(options).start();
}
