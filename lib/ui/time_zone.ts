/** The UI's time zone when the browser has not told us one (no JavaScript yet, or an unknown zone). */
export const DEFAULT_TIME_ZONE = 'UTC';

/** `zone` when the runtime knows it as an IANA time zone, else UTC. */
export function toTimeZone(zone: string | undefined): string {
  if (!zone || zone.length > 64) return DEFAULT_TIME_ZONE;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return DEFAULT_TIME_ZONE;
  }
}

/** Wall-clock fields of `date` in `zone`. */
function wallClock(date: Date, zone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return {
    y: get('year'),
    mo: get('month'),
    d: get('day'),
    h: get('hour'),
    mi: get('minute'),
    s: get('second'),
  };
}

/** Offset of `zone` from UTC at `date`, in milliseconds. */
function offsetMs(date: Date, zone: string): number {
  const w = wallClock(date, zone);
  return Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s) - Math.floor(date.getTime() / 1000) * 1000;
}

/**
 * Reads an `<input type="datetime-local">` value ("2026-03-01T09:30") as a time in `zone`; null when
 * it is not such a value. Around DST changes the offset is re-checked once, as browsers do.
 */
export function fromLocalInput(value: string, zone: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(asUtc)) return null;
  let guess = asUtc - offsetMs(new Date(asUtc), zone);
  guess = asUtc - offsetMs(new Date(guess), zone);
  return new Date(guess);
}

/** A date as an `<input type="datetime-local">` value in `zone`. */
export function toLocalInput(date: Date, zone: string): string {
  const w = wallClock(date, zone);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${w.y}-${p(w.mo)}-${p(w.d)}T${p(w.h)}:${p(w.mi)}`;
}

/** A date for people: "21 Nov 2026, 09:34" in `zone`. */
export function formatDateTime(date: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: zone }).format(
    date,
  );
}

/** A short zone label for form hints: "Europe/Paris (UTC+01:00)". */
export function describeTimeZone(zone: string, at = new Date()): string {
  const minutes = Math.round(offsetMs(at, zone) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const p = (n: number) => String(n).padStart(2, '0');
  return zone === 'UTC' ? 'UTC' : `${zone} (UTC${sign}${p(Math.floor(abs / 60))}:${p(abs % 60)})`;
}

/** The date part for people: "21 Nov 2026" in `zone`. */
export function formatDate(date: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: zone }).format(date);
}

/** The time part for people: "09:34" in `zone`. */
export function formatTime(date: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeStyle: 'short', timeZone: zone }).format(date);
}
