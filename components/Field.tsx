import type { ComponentChildren } from 'preact';
import { CSRF_FIELD } from '../lib/auth/sessions.ts';
import { useI18n } from './I18n.tsx';

interface FieldBase {
  name: string;
  label: string;
  error?: string | undefined;
  hint?: ComponentChildren;
  required?: boolean;
  /** Shown but not editable (and not submitted by the browser). */
  disabled?: boolean | undefined;
  /** Overrides the generated id (for two forms with the same field on one page). */
  id?: string;
}

function Frame(props: FieldBase & { id: string; children: ComponentChildren }) {
  const { t } = useI18n();
  return (
    <div class={`field${props.error ? ' has-error' : ''}`}>
      <label for={props.id}>
        {props.label}
        {!props.required && <span class="optional"> {t('form.optional')}</span>}
      </label>
      {props.hint && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.children}
      {props.error && (
        <p class="field-message is-error" id={`${props.id}-message`}>
          ✗ {props.error}
        </p>
      )}
    </div>
  );
}

const describedBy = (p: FieldBase, id: string) =>
  [p.hint ? `${id}-hint` : '', p.error ? `${id}-message` : ''].filter(Boolean).join(' ') || undefined;

/** A labelled input with its hint and error next to it. */
export function TextField(
  props: FieldBase & {
    value?: string | undefined;
    type?: 'text' | 'email' | 'password' | 'url' | 'search' | 'datetime-local';
    autoComplete?: string;
    placeholder?: string;
    maxLength?: number;
    minLength?: number;
    /** `auto` for free text that may be in any language (titles, reasons); `ltr` for URLs and codes. */
    dir?: 'auto' | 'ltr';
  },
) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <Frame {...props} id={id}>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        dir={props.dir}
        value={props.value ?? ''}
        required={props.required && !props.disabled}
        disabled={props.disabled}
        autoComplete={props.autoComplete}
        placeholder={props.placeholder}
        maxLength={props.maxLength}
        minLength={props.minLength}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(props, id)}
      />
    </Frame>
  );
}

/** A labelled select. */
export function SelectField(
  props: FieldBase & { value?: string | undefined; options: { value: string; label: string }[] },
) {
  const id = props.id ?? `field-${props.name}`;
  return (
    <Frame {...props} id={id}>
      <select
        id={id}
        name={props.name}
        required={props.required && !props.disabled}
        disabled={props.disabled}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={describedBy(props, id)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value} selected={o.value === (props.value ?? '')}>
            {o.label}
          </option>
        ))}
      </select>
    </Frame>
  );
}

/** The CSRF token every form carries. */
export function CsrfField(props: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.token} />;
}

/** A summary of a form's errors at its top, linking to each field (for keyboard and screen-reader users). */
export function ErrorSummary(props: { errors: Record<string, string>; labels?: Record<string, string> }) {
  const { t } = useI18n();
  const entries = Object.entries(props.errors);
  if (entries.length === 0) return null;
  return (
    <div class="notice notice-bad" role="alert" tabIndex={-1}>
      <p class="notice-title">{t('form.fixThese', { count: entries.length })}</p>
      <ul>
        {entries.map(([field, message]) => (
          <li key={field}>
            <a href={`#field-${field}`}>{message}</a>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A message at the top of a page. */
export function Notice(props: {
  tone: 'good' | 'warn' | 'bad' | 'info';
  title?: string;
  children?: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${props.tone}`} role={props.tone === 'bad' ? 'alert' : 'status'}>
      {props.title && <p class="notice-title">{props.title}</p>}
      {props.children}
    </div>
  );
}
