import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { createI18n, type I18n } from '../lib/i18n/translator.ts';

/** The request's language tools; routes/ui/render_page.ts provides them around every UI page. */
export const I18nContext = createContext<I18n>(createI18n());

/** The language tools of the page being rendered (messages, dates and numbers for the editor). */
export function useI18n(): I18n {
  return useContext(I18nContext);
}

/**
 * A glyph that points along the reading direction (→ for "next", ↗ for "opens elsewhere"): mirrored by
 * the stylesheet on right-to-left pages, hidden from screen readers (the text around it says it).
 */
export function DirIcon(props: { glyph: '→' | '←' | '↗' }) {
  return (
    <span class="dir-icon" aria-hidden="true">
      {props.glyph}
    </span>
  );
}
