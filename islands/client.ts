// The browser entry of the islands (bundled by lib/ui/islands_bundle.ts): hydrates each server-rendered
// island with the props serialised beside it, and tells the server the reader's time zone.
import { type FunctionComponent, h, hydrate } from 'preact';
import CopyButton from './CopyButton.tsx';
import LiveField from './LiveField.tsx';
import SelectPage from './SelectPage.tsx';

const ISLANDS: Record<string, FunctionComponent<never>> = { CopyButton, LiveField, SelectPage };

/** Times are rendered on the server; this cookie lets it render them in the reader's zone. */
function rememberTimeZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone || document.cookie.includes(`lifeline_tz=${encodeURIComponent(zone)}`)) return;
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is not in every browser editors use
  document.cookie = `lifeline_tz=${encodeURIComponent(zone)}; Path=/ui; Max-Age=31536000; SameSite=Lax${secure}`;
}

rememberTimeZone();
for (const root of document.querySelectorAll<HTMLElement>('[data-island]')) {
  const component = ISLANDS[root.dataset.island ?? ''];
  const data = root.nextElementSibling;
  if (!component || !data?.matches('script[data-island-props]')) continue;
  hydrate(h(component, JSON.parse(data.textContent || '{}') as never), root);
}
