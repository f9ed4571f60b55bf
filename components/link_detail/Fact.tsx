// One labelled fact in a card's list.
import type { ComponentChildren } from 'preact';

export function Fact(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}
