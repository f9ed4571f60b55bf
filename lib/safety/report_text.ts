// The Slack-ready `text` of a report notification (REPORT_WEBHOOK_URL). Every interpolated value may come from
// a reader (the reason) or an integrator (the target URL), so each is escaped by Slack's rules before it goes
// in: `&`, `<` and `>` become `&amp;`, `&lt;` and `&gt;` (Slack reads `<!channel>`, `<@U…>` and
// `<https://x|label>` only from raw angle brackets, and nothing else needs escaping), and line breaks become
// spaces, so a reason cannot start a line that looks like a message of its own. The raw reason travels only in
// the notification's JSON `reason` field, which no chat tool renders as markup.

const SLACK_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** `value` as one line of Slack text that shows as typed: markup characters escaped, line breaks as spaces. */
export function toSlackText(value: string): string {
  return value.replace(/[\r\n\u0085\u2028\u2029\v\f]+/g, ' ').replace(/[&<>]/g, (ch) => SLACK_ESCAPES[ch]!);
}

/** The one-line message a moderation channel shows for a reader's report. */
export function toReportText(report: {
  shortUrl: string;
  url: string;
  reason: string;
  standingReports: number;
  softBlocked: boolean;
  queueUrl: string;
}): string {
  const s = toSlackText;
  return (
    `A reader reported ${s(report.shortUrl)} (${s(report.url)}): "${s(report.reason)}". ` +
    `${report.standingReports} report(s) standing${report.softBlocked ? '; the link now shows the warning page' : ''}. ` +
    `Review: ${s(report.queueUrl)}`
  );
}
