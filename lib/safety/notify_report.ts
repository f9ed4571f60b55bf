import { signWebhook } from '../auth/webhook_signature.ts';
import type { Logger } from '../shared/logger.ts';
import { createOutgoingFetch, type OutgoingRule } from '../shared/outgoing_request.ts';

/** A report webhook slower than this is given up (it never holds up the reader's answer). */
const NOTIFY_TIMEOUT_MS = 5_000;

/** What REPORT_WEBHOOK_URL receives when a reader reports a link (JSON; `text` makes it a Slack message). */
export interface ReportNotification {
  event: 'link.reported';
  code: string;
  shortUrl: string;
  url: string;
  /** Who made the link: `user:<id>`, `apikey:<id>`, `wordpress:<site>`, `import:bitly`. */
  owner: string;
  reason: string;
  /** Reports of the link that stand (open, or seen and left as they are), this one included. */
  standingReports: number;
  safety: string;
  /** True when this report put the link behind the warning page. */
  softBlocked: boolean;
  /** The moderation queue. */
  queueUrl: string;
  reportedAt: string;
  text: string;
}

/**
 * Posts a notification to REPORT_WEBHOOK_URL (signed like WordPress webhooks, `X-Lifeline-Signature`, when
 * REPORT_WEBHOOK_SECRET is set). Best effort and never awaited by the reader's request: a failure is logged,
 * and the report itself is already stored and shown in the UI (link page, the owner's list, the queue).
 */
export function notifyReport(
  deps: {
    logger: Logger;
    webhook: { url: string; secret: string | undefined } | undefined;
    /** The outgoing-request rule (docs/adr/0058-outgoing-requests-rule.md); default: no private address. */
    outgoing?: OutgoingRule;
  },
  notification: ReportNotification,
): Promise<void> {
  const webhook = deps.webhook;
  if (!webhook) return Promise.resolve();
  const body = JSON.stringify(notification);
  const send = async () => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'Lifeline' };
    if (webhook.secret)
      headers['X-Lifeline-Signature'] = await signWebhook(webhook.secret, body, Date.now() / 1000);
    const res = await createOutgoingFetch(deps.outgoing)(webhook.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
      redirect: 'manual',
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the report webhook answered ${res.status}`);
  };
  return send().catch((err: unknown) =>
    deps.logger.warn({ err, code: notification.code }, 'report notification failed (the report is stored)'),
  );
}
