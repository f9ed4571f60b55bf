// What the list's bulk bar and the bulk confirmation page share (components/LinksPage.tsx, BulkChangePages.tsx).
import type { BulkAction } from '../lib/links/bulk_change.ts';

export const BULK_UI_ACTIONS: BulkAction[] = ['tag_add', 'tag_remove', 'expire', 'block', 'delete'];
/** The filter fields a "select all matching" selection carries from the list to the run. */
export const BULK_FILTER_KEYS = ['q', 'status', 'safety', 'origin', 'tag', 'site'] as const;
/** A filter's form field on the bulk forms (apart from the action's own fields: `tag` is both). */
export const bulkFilterField = (key: (typeof BULK_FILTER_KEYS)[number]) => `filter-${key}`;
