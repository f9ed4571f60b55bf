/** Deployment rules for where links may point. */
export interface TargetPolicy {
  /** Lower-case hosts; a target must be one of them or a subdomain. Empty: any host. */
  allowedHosts: readonly string[];
  /** The short host itself: a link to it would loop. */
  shortHost: string;
}

/** Builds the policy from configuration. */
export function createTargetPolicy(config: {
  allowedTargetHosts: string[];
  shortBaseUrl: string;
}): TargetPolicy {
  return {
    allowedHosts: config.allowedTargetHosts,
    shortHost: new URL(config.shortBaseUrl).host.toLowerCase(),
  };
}

/** Why the (already syntactically valid) URL is not allowed here, or null. */
export function targetPolicyProblem(value: string, policy: TargetPolicy): string | null {
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
