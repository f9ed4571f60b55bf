import { useEffect, useRef, useState } from 'preact/hooks';

export interface LiveFieldProps {
  /** Which server rule checks the value: GET /ui/api/check?field=<check>&value=... */
  check: 'url' | 'alias';
  name: string;
  label: string;
  value: string;
  /** The server's verdict after a submit; shown until the value changes. */
  error?: string;
  hint?: string;
  required?: boolean;
  placeholder?: string;
  /** Shown before the input, e.g. the short domain before an alias. */
  prefix?: string;
  /** "(optional)" in the editor's language (islands carry no catalogue). */
  optionalLabel?: string;
}

const DEBOUNCE_MS = 350;

/** A text field validated as you type by the same rules the server applies on submit. */
export default function LiveField(props: LiveFieldProps) {
  // Controlled by state, so re-renders (a new message) never reset what the editor typed.
  const [value, setValue] = useState(props.value);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(
    props.error ? { ok: false, text: props.error } : null,
  );
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const inflight = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  function onInput(event: Event) {
    const raw = (event.target as HTMLInputElement).value;
    setValue(raw);
    const value = raw.trim();
    clearTimeout(timer.current);
    inflight.current?.abort();
    if (value === '') {
      setMessage(null);
      return;
    }
    timer.current = setTimeout(async () => {
      const controller = new AbortController();
      inflight.current = controller;
      try {
        const res = await fetch(`/ui/api/check?field=${props.check}&value=${encodeURIComponent(value)}`, {
          headers: { Accept: 'application/json' },
          signal: controller.signal,
        });
        if (!res.ok) return;
        const body = (await res.json()) as { ok: boolean; message: string };
        setMessage({ ok: body.ok, text: body.message });
      } catch {
        // Offline or aborted by a newer keystroke: the server checks again on submit anyway.
      }
    }, DEBOUNCE_MS);
  }

  const id = `field-${props.name}`;
  const describedBy = [props.hint ? `${id}-hint` : '', `${id}-message`].filter(Boolean).join(' ');
  return (
    <div class={`field${message && !message.ok ? ' has-error' : ''}`}>
      <label for={id}>
        {props.label}
        {!props.required && <span class="optional"> {props.optionalLabel ?? '(optional)'}</span>}
      </label>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <div class={props.prefix ? 'input-group' : undefined} dir="ltr">
        {props.prefix && (
          <span class="input-prefix" aria-hidden="true">
            {props.prefix}
          </span>
        )}
        <input
          id={id}
          name={props.name}
          // The union is fine at runtime; preact's input typings want one literal per element.
          type={(props.check === 'url' ? 'url' : 'text') as 'text'}
          inputMode={props.check === 'url' ? 'url' : undefined}
          value={value}
          required={props.required}
          placeholder={props.placeholder}
          autoComplete="off"
          autoCapitalize="off"
          spellcheck={false}
          aria-invalid={message && !message.ok ? 'true' : undefined}
          aria-describedby={describedBy}
          onInput={onInput}
        />
      </div>
      <p
        class={`field-message${message ? (message.ok ? ' is-ok' : ' is-error') : ''}`}
        id={`${id}-message`}
        aria-live="polite"
      >
        {message ? `${message.ok ? '✓' : '✗'} ${message.text}` : ''}
      </p>
    </div>
  );
}
