import { useEffect, useState } from 'preact/hooks';

/**
 * Ticks or clears every link of the page for the bulk bar (its boxes belong to the form `formId`). Hidden until
 * hydrated: without JavaScript each box is ticked by hand, and the form works the same.
 */
export default function SelectPage(props: { formId: string; label: string }) {
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  const boxes = () =>
    document.querySelectorAll<HTMLInputElement>(`input[type=checkbox][name=code][form="${props.formId}"]`);
  return (
    <input
      type="checkbox"
      class="select-page"
      hidden={!ready}
      aria-label={props.label}
      onChange={(event) => {
        const on = (event.currentTarget as HTMLInputElement).checked;
        for (const box of boxes()) box.checked = on;
      }}
    />
  );
}
