// The dedupe key across titles and UTM values: a title and per-link UTM values count as options only when
// set, so every link made before either existed keeps its key (and "same url, same options" still finds it).
// Expected keys are computed here from the literal canonical JSON, independently of the code under test.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { getDedupeKey } from '../../../lib/links/dedupe_key.ts';

const sha = (json: string) => createHash('sha256').update(json, 'utf8').digest('hex');
const BASE = '"https://news.example/a",null,null,null,["a","b"],null,null';

describe('getDedupeKey', () => {
  const input = { url: 'https://news.example/a', tags: ['b', 'a', 'b'] };

  test('a link without title or UTM has the key it had before either existed', async () => {
    assert.equal(await getDedupeKey(input), sha(`[${BASE}]`));
    assert.equal(await getDedupeKey({ ...input, utm: {} }), sha(`[${BASE}]`), 'an empty utm is no option');
  });

  test('a title alone, UTM alone, and both: appended in that order, each only when set', async () => {
    assert.equal(await getDedupeKey({ ...input, title: 'عنوان' }), sha(`[${BASE},"عنوان"]`));
    assert.equal(
      await getDedupeKey({ ...input, utm: { campaign: 'x', medium: 'email' } }),
      sha(`[${BASE},["utm","x",null,"email"]]`),
    );
    assert.equal(
      await getDedupeKey({ ...input, title: 'عنوان', utm: { source: 'newsletter' } }),
      sha(`[${BASE},"عنوان",["utm",null,"newsletter",null]]`),
    );
  });

  test('a title and a campaign with the same text are different options', async () => {
    const titled = await getDedupeKey({ ...input, title: 'x' });
    const campaigned = await getDedupeKey({ ...input, utm: { campaign: 'x' } });
    assert.notEqual(titled, campaigned);
  });

  test('aliased creations have no key', async () => {
    assert.equal(await getDedupeKey({ ...input, alias: 'my-alias', title: 't' }), null);
  });
});
