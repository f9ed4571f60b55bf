// The link page's stats over any dates: the form's two days (the editor's calendar days, in their time zone)
// as the window [start of `from`, end of `to`) the stats read, or the problem with them.
import { fieldProblem } from '../shared/field_problems.ts';
import { fromLocalInput, toLocalInput } from './time_zone.ts';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "2026-03-01" → the same day's parts, or null when it is not a real calendar day. */
function calendarDay(value: string): [number, number, number] | null {
  const m = DAY.exec(value.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(Date.UTC(y, mo - 1, d));
  if (at.getUTCFullYear() !== y || at.getUTCMonth() !== mo - 1 || at.getUTCDate() !== d) return null;
  return [y, mo, d];
}

const iso = (y: number, mo: number, d: number) => {
  const at = new Date(Date.UTC(y, mo - 1, d));
  return at.toISOString().slice(0, 10);
};

/** The window of two form days in `zone`, at most `maxDays` long; or which field is wrong and why. */
export function parseStatsWindow(
  from: string,
  to: string,
  zone: string,
  maxDays: number,
): { range: { from: Date; to: Date } } | { field: 'from' | 'to'; problem: string } {
  const start = calendarDay(from);
  if (!start) return { field: 'from', problem: fieldProblem('calendarDay') };
  const end = calendarDay(to);
  if (!end) return { field: 'to', problem: fieldProblem('calendarDay') };
  const fromAt = fromLocalInput(`${iso(...start)}T00:00`, zone);
  // The end day is included: the window runs to the start of the day after it.
  const toAt = fromLocalInput(`${iso(end[0], end[1], end[2] + 1)}T00:00`, zone);
  if (!fromAt || !toAt) return { field: 'from', problem: fieldProblem('calendarDay') };
  if (fromAt.getTime() >= toAt.getTime()) return { field: 'from', problem: fieldProblem('notAfterTo') };
  // An hour of slack: a window across a daylight-saving change is an hour longer or shorter.
  if (toAt.getTime() - fromAt.getTime() > maxDays * 86_400_000 + 3_600_000)
    return { field: 'from', problem: fieldProblem('spanDays', { max: maxDays }) };
  return { range: { from: fromAt, to: toAt } };
}

/** The form's two days for the last `days` days up to today, in `zone` (what the page shows by default). */
export function defaultStatsWindow(
  days: number,
  zone: string,
  now = new Date(),
): { from: string; to: string } {
  return {
    from: toLocalInput(new Date(now.getTime() - days * 86_400_000), zone).slice(0, 10),
    to: toLocalInput(now, zone).slice(0, 10),
  };
}
