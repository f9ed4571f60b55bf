-- Up Migration
-- Search by title and by the readable (percent-decoded) URL, Arabic included (docs/UI.md, "Search").
-- `links.search_text` holds the link's title and its decoded target URL, folded for search; a trigram index
-- serves substring search on it. The folding lives here, in SQL, so the stored text and the folded query can
-- never disagree: the list query folds what the editor typed with the same function
-- (lib/stores/link_list_store.ts). A trigger (not a generated column) keeps it: a generated column would
-- re-run the decoding on every UPDATE of any column (click flushes, re-scans), the trigger only when the
-- title or the target changes.

-- Percent-escapes that spell valid UTF-8 are decoded; anything else (%zz, a lone %, truncated or overlong
-- sequences, surrogates, NUL) is kept exactly as written.
CREATE FUNCTION lifeline_decode_escape_run(run text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  bytes bytea := decode(replace(run, '%', ''), 'hex');
  n int := length(bytes);
  i int := 0;
  span_start int := 0;
  seq int;
  b int;
  k int;
  ok boolean;
  result text := '';
BEGIN
  WHILE i < n LOOP
    b := get_byte(bytes, i);
    seq := CASE WHEN b BETWEEN 1 AND 127 THEN 1
                WHEN b BETWEEN 194 AND 223 THEN 2
                WHEN b BETWEEN 224 AND 239 THEN 3
                WHEN b BETWEEN 240 AND 244 THEN 4
                ELSE 0 END;
    ok := seq > 0 AND i + seq <= n;
    k := 1;
    WHILE ok AND k < seq LOOP
      ok := get_byte(bytes, i + k) BETWEEN 128 AND 191;
      k := k + 1;
    END LOOP;
    IF ok AND seq >= 3 THEN
      -- No overlong forms, no UTF-16 surrogates, nothing above U+10FFFF.
      k := get_byte(bytes, i + 1);
      ok := NOT ((b = 224 AND k < 160) OR (b = 237 AND k > 159) OR (b = 240 AND k < 144) OR (b = 244 AND k > 143));
    END IF;
    IF ok THEN
      i := i + seq;
    ELSE
      result := result || convert_from(substring(bytes FROM span_start + 1 FOR i - span_start), 'UTF8')
                       || substring(run FROM 3 * i + 1 FOR 3);
      i := i + 1;
      span_start := i;
    END IF;
  END LOOP;
  RETURN result || convert_from(substring(bytes FROM span_start + 1 FOR n - span_start), 'UTF8');
END $$;

CREATE FUNCTION lifeline_percent_decode(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  part text[];
  result text := '';
BEGIN
  IF strpos(value, '%') = 0 THEN
    RETURN value;
  END IF;
  FOR part IN SELECT regexp_matches(value, '((?:%[0-9A-Fa-f]{2})+)|(%|[^%]+)', 'g') LOOP
    result := result || CASE WHEN part[1] IS NULL THEN part[2] ELSE lifeline_decode_escape_run(part[1]) END;
  END LOOP;
  RETURN result;
END $$;

-- Folding for search: compatibility forms (NFKD: Arabic presentation forms, full-width Latin, ligatures),
-- lower case, then without combining marks (Latin accents, Arabic harakat and the hamza/madda that NFKD
-- splits off alef, waw and yeh, Hebrew points), tatweel and invisible format characters; alef wasla → alef,
-- alef maksura and Persian yeh → yeh, keheh → kaf, teh marbuta → heh; and punctuation, symbols, spaces and
-- controls (Latin and Arabic: "-", "/", ":", "«»", "،", "؟"…) made one space, trimmed — so "الحرب في" finds
-- the slug "الحرب-في" and "الرئيس لن نتراجع" finds «الرئيس: "لن نتراجع"».
CREATE FUNCTION lifeline_search_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN btrim(regexp_replace(
  translate(
    normalize(
      regexp_replace(
        lower(normalize(value, NFKD)),
        '[\u00ad\u0300-\u036f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u061c\u0640\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]',
        '', 'g'),
      NFC),
    U&'\0671\0649\06CC\06A9\0629', U&'\0627\064A\064A\0643\0647'),
  '[\s\u0001-\u002f\u003a-\u0040\u005b-\u0060\u007b-\u00bf\u00d7\u00f7\u060c\u061b\u061e\u061f\u066a-\u066d\u06d4\u2010-\u2027\u2030-\u205e\u3000-\u303f]+',
  ' ', 'g'));

-- What search looks in: the folded title, a line break (which folding removes from any query, so no match
-- spans the two), then the target's path, query and fragment decoded and folded — only when the target has
-- escapes or non-ASCII letters: a plain ASCII URL is already found by the case-insensitive search on
-- target_url, and leaving it out keeps this index small (every trigram is an index entry on insert).
CREATE FUNCTION lifeline_search_text(title text, target_url text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(lifeline_search_fold(title), '') || E'\n' ||
  CASE WHEN strpos(target_url, '%') > 0 OR octet_length(target_url) <> length(target_url)
    THEN coalesce(lifeline_search_fold(lifeline_percent_decode(
           regexp_replace(target_url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*', ''))), '')
    ELSE '' END;

-- A LIKE pattern for "contains the folded query", wildcards in the query taken literally; NULL (matching
-- nothing) when folding leaves nothing, so a query of only diacritics does not match every link.
CREATE FUNCTION lifeline_search_pattern(query text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN '%' || replace(replace(replace(nullif(lifeline_search_fold(query), ''), '\', '\\'), '%', '\%'), '_', '\_') || '%';

-- Filled for existing links by adding it as a stored generated column (one table rewrite that rebuilds the
-- indexes in bulk), then made a plain column kept by the trigger below. Measured on a copy of 100,000 links (3 in
-- 5 with an Arabic title and slug) with the code and URL trigram indexes, load average ~10: 12 s for the rewrite
-- plus 4.6 s for the new index, against 55 s for an UPDATE of every row (each new row version goes into every
-- trigram index one entry at a time). Either way the migration holds the table's ACCESS EXCLUSIVE lock until it
-- commits (ADD COLUMN takes it), so shorter is better; redirects keep being answered from the in-process cache
-- and the serving store meanwhile (docs/OPERATIONS.md).
ALTER TABLE links ADD COLUMN search_text text GENERATED ALWAYS AS (lifeline_search_text(title, target_url)) STORED;
ALTER TABLE links ALTER COLUMN search_text DROP EXPRESSION;

CREATE FUNCTION links_set_search_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_text := lifeline_search_text(NEW.title, NEW.target_url);
  RETURN NEW;
END $$;

CREATE TRIGGER links_search_text BEFORE INSERT OR UPDATE OF title, target_url ON links
  FOR EACH ROW EXECUTE FUNCTION links_set_search_text();

-- fastupdate off, like the other trigram indexes (0006: pending-list flushes stalled batch updates).
CREATE INDEX links_search_text_trgm_idx ON links USING gin (search_text gin_trgm_ops) WITH (fastupdate = off);

-- Down Migration
DROP INDEX IF EXISTS links_search_text_trgm_idx;
DROP TRIGGER IF EXISTS links_search_text ON links;
DROP FUNCTION IF EXISTS links_set_search_text();
ALTER TABLE links DROP COLUMN IF EXISTS search_text;
DROP FUNCTION IF EXISTS lifeline_search_pattern(text);
DROP FUNCTION IF EXISTS lifeline_search_text(text, text);
DROP FUNCTION IF EXISTS lifeline_search_fold(text);
DROP FUNCTION IF EXISTS lifeline_percent_decode(text);
DROP FUNCTION IF EXISTS lifeline_decode_escape_run(text);
