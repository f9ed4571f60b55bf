// The routing rules editor on a link's page (ADR 0080), without JavaScript: one form holds every rule as a row
// (`rules.{i}.kind`, `rules.{i}.values`, `rules.{i}.target`) plus one blank row for a new rule; the buttons
// that move or remove a row submit the whole form with `op` naming the row, and every submit saves the result.
// The API's schema then judges the list, so the UI and the API accept exactly the same rules.

import type { FieldError } from '../shared/errors.ts';
import type { RoutingRule } from '../stores/link_rows.ts';
import { type FormValues, parseTags } from './link_form.ts';

/** One row of the editor as typed (values as one comma-separated text). */
export interface RuleRow {
  kind: string;
  values: string;
  target: string;
}

/** The most rows a submitted form is read for (more than a link may have, so the schema names the excess). */
const ROWS_READ = 12;

/** The rows of the stored rules, for the form. */
export function toRuleRows(rules: readonly RoutingRule[] | null | undefined, separator: string): RuleRow[] {
  return (rules ?? []).map((r) => ({ kind: r.kind, values: r.values.join(separator), target: r.target }));
}

/**
 * The rows after the button pressed: `up:{i}`, `down:{i}` or `remove:{i}` (indices of the rows as shown, the
 * blank new row last); `save` or anything else leaves them as they are.
 */
export function applyRuleOp(form: FormValues, op: string | undefined): RuleRow[] {
  // Indices name rows as shown, so read them with their blanks in place, then drop the blanks.
  const shown: (RuleRow | null)[] = [];
  for (let i = 0; i < ROWS_READ; i++) {
    const values = form[`rules.${i}.values`]?.trim() ?? '';
    const target = form[`rules.${i}.target`]?.trim() ?? '';
    shown.push(
      values === '' && target === '' ? null : { kind: form[`rules.${i}.kind`] ?? 'language', values, target },
    );
  }
  const m = /^(up|down|remove):(\d{1,2})$/.exec(op ?? '');
  if (m) {
    const at = Number(m[2]);
    if (m[1] === 'remove' && at < shown.length) shown[at] = null;
    else if (m[1] === 'up' && at > 0 && at < shown.length)
      [shown[at - 1], shown[at]] = [shown[at]!, shown[at - 1]!];
    else if (m[1] === 'down' && at + 1 < shown.length)
      [shown[at], shown[at + 1]] = [shown[at + 1]!, shown[at]!];
  }
  return shown.filter((r): r is RuleRow => r !== null);
}

/** The rows as the API's `rules` (an empty list removes every rule). */
export function toRulesInput(rows: readonly RuleRow[]): { kind: string; values: string[]; target: string }[] {
  return rows.map((r) => ({ kind: r.kind, values: parseTags(r.values), target: r.target }));
}

/** Field errors keyed by the row field they belong to (`rules.1.values.0` → `rules.1.values`); first wins. */
export function toRuleFieldMap(errors: readonly FieldError[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const e of errors) {
    const m = /^rules\.(\d+)\.(kind|values|target)/.exec(e.path);
    map[m ? `rules.${m[1]}.${m[2]}` : e.path === 'rules' ? 'rules' : 'form'] ??= e.message;
  }
  return map;
}
