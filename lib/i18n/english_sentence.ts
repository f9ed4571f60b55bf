/** English problem messages that read as the end of a sentence whose subject is the field ("is taken"). */
const PREDICATE = /^(must|is|are|may|was|has|appears|already|belongs|choose|the window)\b/;

/** "is taken" → "Custom alias is taken."; a message that is already a sentence is only capitalised. */
export function toSentence(label: string, message: string): string {
  const text = PREDICATE.test(message) ? `${label} ${message}` : message[0]!.toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
