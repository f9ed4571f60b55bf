// The bitlinks we make and change: create (one call, or two where the plan refuses a keyword on the create),
// retarget (edit the destination, or move our keyword onto a new bitlink), archive and discard.
import { type BitlyClient, isPlanRefusal } from './bitly_http.ts';
import {
  BITLY_DISCARDED_TAG,
  BITLY_OWN_TAG,
  type BitlinkBody,
  type CustomBitlinkBody,
  toPath,
  toShortId,
  toVendorLink,
} from './bitly_links.ts';
import { ProviderError, type VendorLink, type VendorLinkSpec } from './short_link_provider.ts';

/**
 * Decides how a code gets its bitlink: one call where the keyword override rides on the create (current v4),
 * else, on plans that refuse it (402), a tagged bitlink then the keyword (createInTwoSteps).
 */
export async function createBitlink(client: BitlyClient, spec: VendorLinkSpec): Promise<VendorLink> {
  try {
    // One call: the keyword override rides on the create (current v4), and force_new_link keeps one
    // bitlink per code even when two codes share a target (so retargeting one never moves the other).
    const body = await client.call<BitlinkBody>('POST', '/bitlinks', {
      long_url: spec.longUrl,
      domain: client.domain,
      group_guid: client.groupGuid,
      keyword: spec.code,
      force_new_link: true,
      tags: [BITLY_OWN_TAG],
      ...(spec.title ? { title: spec.title.slice(0, 500) } : {}),
    });
    return toVendorLink(body);
  } catch (error) {
    if (error instanceof ProviderError && error.kind === 'plan_refused')
      return createInTwoSteps(client, spec);
    throw error;
  }
}

/**
 * A new bitlink for `longUrl` WITHOUT a keyword, tagged as ours from the first byte: POST /v4/bitlinks (not
 * /v4/shorten, which takes no tags), so a bitlink whose answer is lost can still be found by the stray sweep.
 */
async function createUntagged(
  client: BitlyClient,
  longUrl: string,
  title: string | null | undefined,
): Promise<BitlinkBody> {
  return client.call<BitlinkBody>('POST', '/bitlinks', {
    long_url: longUrl,
    domain: client.domain,
    group_guid: client.groupGuid,
    force_new_link: true,
    tags: [BITLY_OWN_TAG],
    ...(title ? { title: title.slice(0, 500) } : {}),
  });
}

/** Two-step create (a tagged bitlink, then the keyword): for plans that refuse `keyword` on POST /v4/bitlinks. */
async function createInTwoSteps(client: BitlyClient, spec: VendorLinkSpec): Promise<VendorLink> {
  const made = await createUntagged(client, spec.longUrl, spec.title);
  const hashId = toShortId(made.id ?? '');
  if (!hashId) throw new ProviderError('unavailable', 'Bitly /v4/bitlinks answered without an id');
  try {
    const custom = await client.call<CustomBitlinkBody>('POST', '/custom_bitlinks', {
      custom_bitlink: `${client.domain}/${spec.code}`,
      bitlink_id: hashId,
    });
    return toVendorLink(custom.bitlink ?? made, custom.custom_bitlink ? [custom.custom_bitlink] : []);
  } catch (error) {
    // The keyword-less bitlink would otherwise linger in the group as a stray link.
    await discardQuietly(client, hashId);
    throw error;
  }
}

/**
 * Decides how a code's bitlink gets a new destination: an edit of its long URL where the plan allows it, else
 * a new bitlink with our keyword moved onto it and the old one discarded.
 */
export async function retargetBitlink(
  client: BitlyClient,
  vendorId: string,
  code: string,
  longUrl: string,
): Promise<VendorLink> {
  try {
    return toVendorLink(
      await client.call<BitlinkBody>('PATCH', `/bitlinks/${toPath(vendorId)}`, { long_url: longUrl }),
    );
  } catch (error) {
    if (!isPlanRefusal(error)) throw error;
  }
  // Plans without destination edits: make a new bitlink for the new target and move our keyword onto it
  // (the classic way to "redirect" a custom back-half), then retire the old bitlink.
  const made = await createUntagged(client, longUrl, null);
  const newId = toShortId(made.id ?? '');
  if (!newId) throw new ProviderError('unavailable', 'Bitly /v4/bitlinks answered without an id');
  const moved = await client.call<CustomBitlinkBody>(
    'PATCH',
    `/custom_bitlinks/${toPath(`${client.domain}/${code}`)}`,
    {
      bitlink_id: newId,
    },
  );
  if (newId !== toShortId(vendorId)) await discardQuietly(client, vendorId);
  return toVendorLink(moved.bitlink ?? made, [`${client.domain}/${code}`]);
}

/** Archives a bitlink, or brings it back (`archived` false). */
export async function setBitlinkArchived(
  client: BitlyClient,
  vendorId: string,
  archived: boolean,
): Promise<VendorLink> {
  return toVendorLink(await client.call<BitlinkBody>('PATCH', `/bitlinks/${toPath(vendorId)}`, { archived }));
}

/** Archives a bitlink we do not want (wrong back-half, replaced) and tags it so nobody mistakes it for ours. */
export async function discardBitlink(client: BitlyClient, vendorId: string): Promise<void> {
  await client.call('PATCH', `/bitlinks/${toPath(vendorId)}`, {
    archived: true,
    tags: [BITLY_DISCARDED_TAG],
  });
}

/** discardBitlink where the caller's outcome does not depend on it: a failure is only logged. */
async function discardQuietly(client: BitlyClient, vendorId: string): Promise<void> {
  try {
    await discardBitlink(client, vendorId);
  } catch (error) {
    client.logger?.warn({ err: error, vendorId }, 'could not archive a discarded bitlink');
  }
}
