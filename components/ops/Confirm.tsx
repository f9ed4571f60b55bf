// A destructive action behind a second click, without JavaScript.
import type { ComponentChildren } from 'preact';

/** A destructive action behind a second click, without JavaScript: the button appears once opened. */
export function Confirm(props: { label: string; confirm: string; children: ComponentChildren }) {
  return (
    <details class="confirm">
      <summary class="btn btn-danger-ghost btn-sm">{props.label}</summary>
      <div class="confirm-body">
        <p class="small">{props.confirm}</p>
        {props.children}
      </div>
    </details>
  );
}
