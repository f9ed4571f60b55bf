// A real HTTP server reproducing the GA4 Measurement Protocol (VENDORS.md §3), for tests:
//   - `POST /mp/collect?measurement_id=…&api_secret=…` always answers 204 with an empty body — for malformed
//     payloads and wrong secrets too, as the real one does [obs: AzuraCast #6033, br33f #16, aawnu/php-ga4 #18];
//   - `POST /debug/mp/collect` answers 200 `{"validationMessages": [{fieldPath, description, validationCode}]}`,
//     `[]` when valid [spec: developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events;
//     obs: ga-dev-tools #567], codes from the documented set VALUE_INVALID, VALUE_REQUIRED, NAME_INVALID,
//     NAME_RESERVED, VALUE_OUT_OF_BOUNDS, EXCEEDED_MAX_ENTITIES, NAME_DUPLICATED. It does not check that the
//     measurement id or secret are right, like the real one [spec: same page].
//   - Rules checked (VENDORS.md §3.1 from the sending-events reference): ≤ 25 events per request, ≤ 25 params per
//     event, ≤ 25 user properties; event and param names ≤ 40 characters, a letter first, then letters, digits, _;
//     param values ≤ 100 characters; user property names ≤ 24, values ≤ 36; reserved event names (MP reference
//     list, plus `video_*`) and reserved prefixes `_`, `firebase_`, `ga_`, `google_` (and `gtag.` for params);
//     `client_id` required for web streams; `timestamp_micros` (request or event level) ≤ 72 h old and not in the
//     future; body < 130 kB; consent values GRANTED | DENIED.
//   - The description texts follow the documented example ("Event at index: [0] has invalid name [_badEventName].
//     Names must start with an alphabetic character.") where one exists; the others, and which fieldPath each
//     rule reports, are [infer]. NAME_DUPLICATED cannot arise from parsed JSON and is not produced.
// Every request is recorded with its parsed body and the validation messages the payload earns, so a test can
// check that everything the forwarder sent to /mp/collect was valid.
import {
  type FakeAnswer,
  type FakeRequest,
  type ScriptedFailure,
  ScriptedFake,
} from './scripted_http_server.ts';

export type ValidationCode =
  | 'VALUE_INVALID'
  | 'VALUE_REQUIRED'
  | 'NAME_INVALID'
  | 'NAME_RESERVED'
  | 'VALUE_OUT_OF_BOUNDS'
  | 'EXCEEDED_MAX_ENTITIES'
  | 'NAME_DUPLICATED';

export interface ValidationMessage {
  fieldPath: string;
  description: string;
  validationCode: ValidationCode;
}

export interface CollectedRequest {
  endpoint: 'collect' | 'debug';
  measurementId: string | null;
  apiSecret: string | null;
  raw: string;
  /** The parsed body, or undefined when it was not JSON. */
  body: unknown;
  /** What the validation server says about this payload (computed for /mp/collect too). */
  validationMessages: ValidationMessage[];
}

const RESERVED_EVENT_NAMES = new Set([
  'ad_activeview',
  'ad_click',
  'ad_exposure',
  'ad_impression',
  'ad_query',
  'ad_reward',
  'adunit_exposure',
  'app_background',
  'app_clear_data',
  'app_exception',
  'app_install',
  'app_remove',
  'app_store_refund',
  'app_store_subscription_cancel',
  'app_store_subscription_convert',
  'app_store_subscription_renew',
  'app_update',
  'app_upgrade',
  'click',
  'dynamic_link_app_open',
  'dynamic_link_app_update',
  'dynamic_link_first_open',
  'error',
  'file_download',
  'firebase_campaign',
  'firebase_in_app_message_action',
  'firebase_in_app_message_dismiss',
  'firebase_in_app_message_impression',
  'first_open',
  'first_visit',
  'form_start',
  'form_submit',
  'in_app_purchase',
  'notification_dismiss',
  'notification_foreground',
  'notification_open',
  'notification_receive',
  'os_update',
  'page_view',
  'screen_view',
  'scroll',
  'session_start',
  'session_start_with_rollout',
  'user_engagement',
  'view_complete',
  'view_search_results',
]);
const RESERVED_PREFIXES = ['_', 'firebase_', 'ga_', 'google_'];
const RESERVED_PARAM_NAMES = new Set(['gclid', 'session_number']);
const RESERVED_USER_PROPERTIES = new Set([
  'first_open_time',
  'first_visit_time',
  'last_deep_link_referrer',
  'user_id',
  'first_open_after_install',
]);
const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const MAX_AGE_MICROS = 72 * 3_600_000 * 1000;
const MAX_BODY_BYTES = 130 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The validation server's verdict on one request (query parameters and raw body) at `nowMs`: [] when valid.
 * Independent of lib/analytics, so the forwarder's own guard is checked against it, not against itself.
 */
export function validateMeasurement(
  query: URLSearchParams,
  raw: string,
  nowMs = Date.now(),
): ValidationMessage[] {
  const out: ValidationMessage[] = [];
  const add = (fieldPath: string, validationCode: ValidationCode, description: string) =>
    out.push({ fieldPath, description, validationCode });
  if (!query.get('api_secret')) {
    add('api_secret', 'VALUE_REQUIRED', 'Unable to find non-empty parameter [api_secret] value in request.');
  }
  if (!query.get('measurement_id') && !query.get('firebase_app_id')) {
    add(
      'measurement_id',
      'VALUE_REQUIRED',
      'Unable to find non-empty parameter [measurement_id] value in request.',
    );
  }
  if (Buffer.byteLength(raw) >= MAX_BODY_BYTES)
    add('', 'VALUE_OUT_OF_BOUNDS', 'Measurement payload is larger than 130kB.');
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    add('', 'VALUE_INVALID', 'Unable to parse Measurement Protocol JSON payload.');
    return out;
  }
  if (!isObject(body)) {
    add('', 'VALUE_INVALID', 'Measurement payload must be a JSON object.');
    return out;
  }
  const checkTimestamp = (value: unknown, fieldPath: string) => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      add(fieldPath, 'VALUE_INVALID', `Measurement ${fieldPath} must be an integer number of microseconds.`);
    } else if (value > nowMs * 1000 + 60_000_000 || nowMs * 1000 - value > MAX_AGE_MICROS) {
      add(
        fieldPath,
        'VALUE_INVALID',
        `Measurement ${fieldPath} [${value}] is in the future or more than 72 hours in the past.`,
      );
    }
  };
  if (query.get('measurement_id') && (typeof body.client_id !== 'string' || body.client_id === '')) {
    add('client_id', 'VALUE_REQUIRED', 'Measurement requires a client_id.');
  }
  checkTimestamp(body.timestamp_micros, 'timestamp_micros');
  if (body.consent !== undefined) {
    if (!isObject(body.consent)) add('consent', 'VALUE_INVALID', 'consent must be an object.');
    else {
      for (const [key, value] of Object.entries(body.consent)) {
        if (
          (key === 'ad_user_data' || key === 'ad_personalization') &&
          value !== 'GRANTED' &&
          value !== 'DENIED'
        ) {
          add(
            `consent.${key}`,
            'VALUE_INVALID',
            `Consent value [${String(value)}] must be GRANTED or DENIED.`,
          );
        }
      }
    }
  }
  if (body.user_properties !== undefined) {
    if (!isObject(body.user_properties))
      add('user_properties', 'VALUE_INVALID', 'user_properties must be an object.');
    else {
      const names = Object.keys(body.user_properties);
      if (names.length > 25)
        add('user_properties', 'EXCEEDED_MAX_ENTITIES', 'Measurement has more than 25 user properties.');
      for (const name of names) {
        if (name.length > 24 || !NAME.test(name)) {
          add(
            'user_properties',
            'NAME_INVALID',
            `User property [${name}] has an invalid name. Names must start with an alphabetic character and be at most 24 characters.`,
          );
        } else if (RESERVED_USER_PROPERTIES.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
          add('user_properties', 'NAME_RESERVED', `User property [${name}] has a reserved name.`);
        }
        const value = (body.user_properties[name] as { value?: unknown } | undefined)?.value;
        if (typeof value === 'string' && value.length > 36) {
          add(
            'user_properties',
            'VALUE_OUT_OF_BOUNDS',
            `User property [${name}] has a value longer than 36 characters.`,
          );
        }
      }
    }
  }
  const events = body.events;
  if (!Array.isArray(events) || events.length === 0) {
    add('events', 'VALUE_REQUIRED', 'Measurement requires at least one event.');
    return out;
  }
  if (events.length > 25)
    add(
      'events',
      'EXCEEDED_MAX_ENTITIES',
      `Measurement has [${events.length}] events; at most 25 are allowed.`,
    );
  events.forEach((event, i) => {
    if (!isObject(event) || typeof event.name !== 'string' || event.name === '') {
      add('events', 'VALUE_REQUIRED', `Event at index: [${i}] has no name.`);
      return;
    }
    const name = event.name;
    if (!/^[A-Za-z]/.test(name)) {
      add(
        'events',
        'NAME_INVALID',
        `Event at index: [${i}] has invalid name [${name}]. Names must start with an alphabetic character.`,
      );
    } else if (!NAME.test(name)) {
      add(
        'events',
        'NAME_INVALID',
        `Event at index: [${i}] has invalid name [${name}]. Only alphanumeric characters and underscores are allowed.`,
      );
    } else if (name.length > 40) {
      add(
        'events',
        'NAME_INVALID',
        `Event at index: [${i}] has invalid name [${name}]. Names must be at most 40 characters.`,
      );
    } else if (
      RESERVED_EVENT_NAMES.has(name) ||
      name.startsWith('video_') ||
      RESERVED_PREFIXES.some((p) => name.startsWith(p))
    ) {
      add('events', 'NAME_RESERVED', `Event at index: [${i}] has name [${name}] which is reserved.`);
    }
    checkTimestamp(event.timestamp_micros, `events[${i}].timestamp_micros`);
    if (event.params === undefined) return;
    if (!isObject(event.params)) {
      add('events.params', 'VALUE_INVALID', `Event at index: [${i}] has params that are not an object.`);
      return;
    }
    const params = Object.entries(event.params);
    if (params.length > 25)
      add('events.params', 'EXCEEDED_MAX_ENTITIES', `Event at index: [${i}] has more than 25 params.`);
    for (const [param, value] of params) {
      if (param.length > 40 || !NAME.test(param)) {
        add(
          'events.params',
          'NAME_INVALID',
          `Event at index: [${i}] has invalid param [${param}]. Names must start with an alphabetic character, hold only alphanumerics and underscores, and be at most 40 characters.`,
        );
      } else if (
        RESERVED_PARAM_NAMES.has(param) ||
        [...RESERVED_PREFIXES, 'gtag.'].some((p) => param.startsWith(p))
      ) {
        add(
          'events.params',
          'NAME_RESERVED',
          `Event at index: [${i}] has param [${param}] which is reserved.`,
        );
      }
      if (param === 'items') continue;
      if (typeof value === 'string') {
        if (value.length > 100) {
          add(
            'events.params',
            'VALUE_OUT_OF_BOUNDS',
            `Event at index: [${i}] has param [${param}] with a value longer than 100 characters.`,
          );
        }
      } else if (typeof value !== 'number' && typeof value !== 'boolean') {
        add(
          'events.params',
          'VALUE_INVALID',
          `Event at index: [${i}] has param [${param}] with a value that is not a string or number.`,
        );
      }
    }
  });
  return out;
}

export class Ga4Fake extends ScriptedFake {
  /** Every request to either endpoint, in order, with its verdict. */
  readonly collected: CollectedRequest[] = [];

  /** The endpoint base to give the forwarder (it appends /mp/collect). */
  get endpoint(): string {
    return this.server.url;
  }

  protected clearRecords(): void {
    this.collected.length = 0;
  }

  /** Scripted trouble in front of the endpoints (503, drops, hangs): the real one is 2xx-only once reached. */
  failNext(failure: ScriptedFailure): void {
    this.server.failNext(failure);
  }

  /** Events received at /mp/collect, across requests, in order. */
  collectedEvents(): { name: string; params: Record<string, unknown>; timestamp_micros?: number }[] {
    return this.collected
      .filter((c) => c.endpoint === 'collect')
      .flatMap((c) => ((c.body as { events?: unknown[] } | undefined)?.events ?? []) as never[]);
  }

  protected answer(request: FakeRequest): FakeAnswer {
    const endpoint =
      request.path === '/mp/collect' ? 'collect' : request.path === '/debug/mp/collect' ? 'debug' : null;
    if (!endpoint || request.method !== 'POST') return { status: 404, body: 'Not Found' };
    let body: unknown;
    try {
      body = JSON.parse(request.rawBody);
    } catch {}
    const validationMessages = validateMeasurement(request.query, request.rawBody);
    this.collected.push({
      endpoint,
      measurementId: request.query.get('measurement_id'),
      apiSecret: request.query.get('api_secret'),
      raw: request.rawBody,
      body,
      validationMessages,
    });
    if (endpoint === 'collect') return { status: 204 };
    return {
      status: 200,
      body: JSON.stringify({ validationMessages }),
      headers: { 'Content-Type': 'application/json' },
    };
  }
}

/** Starts a GA4 Measurement Protocol fake on a free port. */
export async function startGa4Fake(): Promise<Ga4Fake> {
  return new Ga4Fake().start();
}
