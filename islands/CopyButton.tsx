import { useEffect, useState } from 'preact/hooks';

/**
 * Copies `text` to the clipboard. Hidden until hydrated: without JavaScript it could not work. The labels
 * come from the server in the editor's language (islands carry no catalogue).
 */
export default function CopyButton(props: { text: string; label?: string; copiedLabel?: string }) {
  const [ready, setReady] = useState(false);
  const [copied, setCopied] = useState(false);
  useEffect(() => setReady(true), []);

  async function copy() {
    try {
      await navigator.clipboard.writeText(props.text);
    } catch {
      // Older browsers, or clipboard permission refused: copy through a selected field instead.
      const field = document.createElement('textarea');
      field.value = props.text;
      document.body.append(field);
      field.select();
      document.execCommand('copy');
      field.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }

  return (
    <button
      type="button"
      class={`btn btn-secondary btn-sm copy-button${copied ? ' is-copied' : ''}`}
      hidden={!ready}
      onClick={copy}
      aria-label={`${props.label ?? 'Copy'}: ${props.text}`}
      data-copy-text={props.text}
    >
      <span aria-live="polite">{copied ? (props.copiedLabel ?? 'Copied ✓') : (props.label ?? 'Copy')}</span>
    </button>
  );
}
