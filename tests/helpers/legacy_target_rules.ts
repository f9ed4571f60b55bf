// The target rules Lifeline applied before the one canonical target rule (lib/links/link.ts's targetUrlProblem and
// the renaming layer lib/targets replaced, targetPolicyProblem), kept here only so the canonical rule can be shown to be at
// least as strict as them and cheaper (tests/lib/targets/canonical_url.test.ts). Never used by the product.

/** The old policy: lower-cased hosts of ALLOWED_TARGET_HOSTS and the short host with its port. */
export interface LegacyTargetPolicy {
  allowedHosts: readonly string[];
  shortHost: string;
}

export function createLegacyTargetPolicy(config: {
  allowedTargetHosts: readonly string[];
  shortBaseUrl: string;
}): LegacyTargetPolicy {
  return {
    allowedHosts: config.allowedTargetHosts,
    shortHost: new URL(config.shortBaseUrl).host.toLowerCase(),
  };
}

const utf8 = new TextEncoder();

/** The old syntactic check of a target. */
export function legacyTargetUrlProblem(value: string): string | null {
  if (utf8.encode(value).length > 2048) return 'must be at most 2048 bytes';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the old rule, verbatim
  if (/[\u0000-\u0020\u007f-\u009f\u2028\u2029]/.test(value))
    return 'must not contain spaces or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (!/^https?:\/\/[^/?#\\]/i.test(value)) return 'must be an absolute http(s) URL with a host';
  if (url.hostname === '') return 'must have a host';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  return null;
}

/** The old host policy (no canonical form: a trailing dot slipped past the short-domain check). */
export function legacyTargetPolicyProblem(value: string, policy: LegacyTargetPolicy): string | null {
  const url = new URL(value);
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (url.host.toLowerCase() === policy.shortHost) return 'must not point at the short domain itself';
  if (
    policy.allowedHosts.length > 0 &&
    !policy.allowedHosts.some((allowed) => host === allowed || host.endsWith(`.${allowed}`))
  ) {
    return `host ${host} is not in ALLOWED_TARGET_HOSTS`;
  }
  return null;
}
