// AWS Signature Version 4 checked by the fakes' own code (node:crypto), independent of lib/cdn/aws_sigv4.ts.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const CLOCK_SKEW_MS = 15 * 60_000;

const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** A request as the verifier needs it: what arrived on the wire. */
export interface SigV4Input {
  method: string;
  /** Path as received, still percent-encoded. */
  path: string;
  /** Query string without `?` ('' when none). */
  query: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Checks a SigV4 `Authorization` header against the request as received, for the given secrets, service and
 * region. Returns null when it holds, or CloudFront's error code and message.
 */
export function verifySigV4(
  input: SigV4Input,
  secrets: Map<string, string>,
  expected: { region: string; service: string },
  nowMs = Date.now(),
): { code: string; message: string } | null {
  const auth = typeof input.headers.authorization === 'string' ? input.headers.authorization : '';
  if (!auth) return { code: 'MissingAuthenticationToken', message: 'Missing Authentication Token' };
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m)
    return {
      code: 'IncompleteSignature',
      message: 'Authorization header requires Credential, SignedHeaders and Signature.',
    };
  const [, keyId, date, region, service, signedList, signature] = m as unknown as string[];
  const secret = secrets.get(keyId!);
  if (secret === undefined)
    return {
      code: 'InvalidClientTokenId',
      message: 'The security token included in the request is invalid.',
    };
  if (region !== expected.region || service !== expected.service) {
    return {
      code: 'SignatureDoesNotMatch',
      message: `Credential should be scoped to a valid region and service (${expected.region}/${expected.service}).`,
    };
  }
  const amzDate = String(input.headers['x-amz-date'] ?? '');
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!at || amzDate.slice(0, 8) !== date)
    return {
      code: 'IncompleteSignature',
      message: 'X-Amz-Date is missing or does not match the credential scope.',
    };
  const atMs = Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!);
  if (Math.abs(nowMs - atMs) > CLOCK_SKEW_MS) {
    return {
      code: 'SignatureDoesNotMatch',
      message: `Signature expired: ${amzDate} is now earlier or later than the allowed 15 minutes.`,
    };
  }
  const signed = signedList!.split(';');
  if (!signed.includes('host') || !signed.includes('x-amz-date')) {
    return { code: 'SignatureDoesNotMatch', message: 'The host and x-amz-date headers must be signed.' };
  }
  const canonicalHeaders = signed
    .map((name) => {
      const raw = input.headers[name];
      const value = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonicalPath = input.path
    .split('/')
    .map((segment) => rfc3986(decodeURIComponent(segment)))
    .join('/');
  const canonicalQuery = input.query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [name = '', value = ''] = pair.split('=');
      const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
      return `${rfc3986(dec(name))}=${rfc3986(dec(value))}`;
    })
    .sort()
    .join('&');
  const hash = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
  const canonicalRequest = [
    input.method,
    canonicalPath || '/',
    canonicalQuery,
    canonicalHeaders,
    signedList,
    hash(input.body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${hash(canonicalRequest)}`;
  let key: Buffer = createHmac('sha256', `AWS4${secret}`).update(date!).digest();
  for (const part of [region!, service!, 'aws4_request'])
    key = createHmac('sha256', key).update(part).digest();
  const expectedSignature = createHmac('sha256', key).update(stringToSign).digest();
  const given = Buffer.from(signature!, 'hex');
  if (given.length !== expectedSignature.length || !timingSafeEqual(given, expectedSignature)) {
    return {
      code: 'SignatureDoesNotMatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return null;
}
