/** Reasons a reader can pick when reporting a link (stored as the report's reason). */
export const REPORT_REASONS = [
  'Phishing or a scam',
  'Malware or an unwanted download',
  'Not what the link claims to be',
  'Other',
] as const;

/** The small "report this link" form on the warn interstitial and the preview page (POST /{code}/report). */
export function ReportForm(props: { code: string }) {
  return (
    <form class="report-form" method="post" action={`/${props.code}/report`}>
      <details>
        <summary>Report this link</summary>
        <label for="report-reason">What is wrong with it?</label>
        <select id="report-reason" name="reason">
          {REPORT_REASONS.map((reason) => (
            <option value={reason}>{reason}</option>
          ))}
        </select>
        <button type="submit" class="button button-secondary">
          Send report
        </button>
      </details>
    </form>
  );
}
