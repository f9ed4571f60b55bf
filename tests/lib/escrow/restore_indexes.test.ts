import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { longestFirst } from '../../../lib/escrow/restore_indexes.ts';

// The order a restore starts its index builds in: the one that takes longest first, or two cores sit with one
// build left at the end (at ten million links the URL's trigram index is about eight minutes of one core).
describe('index build order', () => {
  const index = (name: string, definition: string) => ({ name, definition });
  const indexes = [
    index(
      'links_code_lower_trgm_idx',
      'CREATE INDEX links_code_lower_trgm_idx ON public.links USING gin (lower(code) gin_trgm_ops)',
    ),
    index(
      'links_created_idx',
      'CREATE INDEX links_created_idx ON public.links USING btree (created_at DESC)',
    ),
    index(
      'links_search_text_trgm_idx',
      'CREATE INDEX links_search_text_trgm_idx ON public.links USING gin (search_text gin_trgm_ops)',
    ),
    index(
      'links_url_trgm_idx',
      'CREATE INDEX links_url_trgm_idx ON public.links USING gin (target_url gin_trgm_ops)',
    ),
  ];

  test('trigram builds first, the widest column first among them', () => {
    const widths = new Map([
      ['code', 8],
      ['created_at', 8],
      ['search_text', 83],
      ['target_url', 131],
      // A column whose name is part of another's must not lend it its width.
      ['url', 400],
    ]);
    assert.deepEqual(
      longestFirst(indexes, widths).map((i) => i.name),
      ['links_url_trgm_idx', 'links_search_text_trgm_idx', 'links_code_lower_trgm_idx', 'links_created_idx'],
    );
  });

  test('without statistics, trigram builds still come first', () => {
    assert.deepEqual(
      longestFirst(indexes)
        .map((i) => i.name)
        .slice(-1),
      ['links_created_idx'],
    );
  });
});
