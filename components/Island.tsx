import { type FunctionComponent, h } from 'preact';

/** JSON that is safe inside a <script> element (no "</script>", no HTML comment openers). */
function toScriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * Renders an island on the server and leaves what the client needs to hydrate it: its name on the wrapper
 * and its props as a JSON data block (not executable, so the strict CSP needs no 'unsafe-inline').
 */
export function Island<P extends object>(props: {
  name: string;
  component: FunctionComponent<P>;
  props: NoInfer<P>;
}) {
  return (
    <>
      <div class="island" data-island={props.name}>
        {h(props.component, props.props)}
      </div>
      <script
        type="application/json"
        data-island-props=""
        // Escaped JSON data, never executed (see toScriptJson).
        dangerouslySetInnerHTML={{ __html: toScriptJson(props.props) }}
      />
    </>
  );
}
