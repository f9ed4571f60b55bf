import { toDisplayUrl } from '../lib/links/display_url.ts';

/**
 * A URL as people read it (lib/links/display_url.ts: decoded where safe, look-alike hosts in punycode),
 * isolated from the text around it and laid out left to right whatever the page's direction (RFC 3987,
 * 4.1: an IRI is shown as a left-to-right embedding, so "/" keeps its place between right-to-left
 * segments). The exact stored URL is the tooltip. `bare` drops "https://" for tables.
 */
export function DisplayUrl(props: { url: string; bare?: boolean; class?: string }) {
  const shown = toDisplayUrl(props.url);
  return (
    <bdi class={props.class ?? 'url'} dir="ltr" title={props.url}>
      {props.bare ? shown.replace(/^https?:\/\//i, '') : shown}
    </bdi>
  );
}
