import { z } from 'zod';
import { syncAfterChange } from '../propagation/sync_after_change.ts';
import type { LinkResolver } from '../redirect/link_resolver.ts';
import { getClientNetwork } from '../shared/client_ip.ts';
import type { Config } from '../shared/config.ts';
import { hmacSha256Hex, randomToken } from '../shared/crypto.ts';
import { NotFoundError } from '../shared/errors.ts';
import { shortUrlOfKey } from '../shared/link_key.ts';
import type { Logger } from '../shared/logger.ts';
import type { SafetyVerdict } from '../stores/link_rows.ts';
import { getLinkByCode } from '../stores/link_store.ts';
import { countReportsByCode, insertReport } from '../stores/report_store.ts';
import { insertSettingIfAbsent } from '../stores/settings_store.ts';
import type { Sql } from '../stores/sql.ts';
import { recordWebhookEvent } from '../stores/webhook_outbox_store.ts';
import type { WorkflowGateway } from '../temporal/workflow_gateway.ts';
import { applyScanResult, READER_REPORTS_WARN_THRESHOLD, withReaderReports } from './apply_scan_result.ts';
import { notifyReport } from './notify_report.ts';
import { toReportText } from './report_text.ts';
import type { SafetyScanner } from './safety_scanner.ts';
import { toScanResult } from './scan_result.ts';

/** The settings row holding the key that turns client IPs into reporter hashes (generated on first use). */
export const REPORTER_HASH_KEY_SETTING = 'reporter_hash_key';
/** Longest reason a reader may give. */
export const REPORT_REASON_MAX_LENGTH = 500;
/** Concurrent edits are retried this many times before the report is left to the next re-scan. */
const CONFLICT_ATTEMPTS = 3;

/** POST /{code}/report body (JSON or form). */
export const reportInputSchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(REPORT_REASON_MAX_LENGTH, `must be at most ${REPORT_REASON_MAX_LENGTH} characters`),
});

export interface ReportDeps {
  sql: Sql;
  resolver: LinkResolver;
  workflows: WorkflowGateway;
  logger: Logger;
  /** Tells trusted hosts (SAFETY_TRUSTED_HOSTS) apart: readers never soft-block them. */
  safety?: Pick<SafetyScanner, 'isTrusted'>;
  /** Where notifications point, and REPORT_WEBHOOK_URL. */
  config?: Pick<Config, 'shortBaseUrl' | 'appBaseUrl' | 'reportWebhook' | 'outgoing'>;
}

export interface ReportOutcome {
  /** False when this reporter had already reported the link (nothing new stored). */
  counted: boolean;
  /** Distinct reporters of the link whose reports stand (open or ignored). */
  reporters: number;
  safety: SafetyVerdict;
}

const hashKeys = new WeakMap<Sql, Promise<string>>();

/**
 * A reporter's identity: HMAC-SHA256 of the code and the client's network (its IPv4 address, or its IPv6 /64:
 * one subscriber is handed a whole /64, so addresses inside it are one reader) under a per-deployment secret
 * kept in settings, so the raw IP is never stored and the hash cannot be reversed by enumerating addresses,
 * nor correlated across links.
 */
export async function reporterHash(sql: Sql, code: string, clientIp: string): Promise<string> {
  let key = hashKeys.get(sql);
  if (!key) {
    key = insertSettingIfAbsent(sql, REPORTER_HASH_KEY_SETTING, randomToken(43));
    key.catch(() => hashKeys.delete(sql));
    hashKeys.set(sql, key);
  }
  return hmacSha256Hex(await key, `${code}\n${getClientNetwork(clientIp)}`);
}

/**
 * Stores a reader's report (one per reporter per link) for the moderation queue. Once
 * READER_REPORTS_WARN_THRESHOLD distinct readers stand behind reports of a link whose verdict is better than
 * `warn`, the link is soft-blocked to `warn` through the same path a scan takes (audited, version-guarded), its
 * caches are refreshed and its sync workflow told (vendors follow); a re-scan keeps that floor until a moderator
 * dismisses the reports. A link to one of the newsroom's trusted hosts is never soft-blocked by readers. A new
 * report is announced to REPORT_WEBHOOK_URL when configured (in the background).
 */
export async function reportLink(
  deps: ReportDeps,
  input: { code: string; clientIp: string; reason: string },
): Promise<ReportOutcome> {
  let link = await getLinkByCode(deps.sql, input.code);
  if (!link || link.status === 'pending' || link.deletedAt) throw new NotFoundError(`No link ${input.code}.`);
  const report = {
    code: link.code,
    reporterHash: await reporterHash(deps.sql, link.code, input.clientIp),
    reason: input.reason,
  };
  const counted = await deps.sql.begin(async (tx) => {
    const counted = await insertReport(tx, report);
    if (counted) await recordWebhookEvent(tx, 'report.opened', { code: report.code, reason: report.reason });
    return counted;
  });
  const counts = (await countReportsByCode(deps.sql, [link.code])).get(link.code) ?? {
    standing: 0,
    confirmed: 0,
  };
  const trusted = deps.safety?.isTrusted?.(link.targetUrl) ?? false;
  let outcome: ReportOutcome = { counted, reporters: counts.standing, safety: link.safety };

  if (counts.standing >= READER_REPORTS_WARN_THRESHOLD && !trusted) {
    for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
      if (link.safety === 'warn' || link.safety === 'blocked') break;
      // No scan ran: an incomplete result can only make the verdict worse, never clear anything.
      const result = withReaderReports(toScanResult(link.targetUrl, [], false), counts, { trusted });
      const change = await applyScanResult(deps.sql, link, result, {
        actor: 'system:reader-reports',
        reason: `reported by ${counts.standing} readers`,
        now: new Date(),
      });
      if (change === 'conflict') {
        link = await getLinkByCode(deps.sql, input.code);
        if (!link) throw new NotFoundError(`No link ${input.code}.`);
        continue;
      }
      if (change) {
        deps.logger.warn(
          {
            code: link.code,
            before: change.before.safety,
            after: change.after.safety,
            reporters: counts.standing,
          },
          'link soft-blocked after reader reports',
        );
        // The verdict is committed: a cache that cannot be refreshed now is repaired by the sync workflow.
        await deps.resolver.refresh(link.code).catch((err: unknown) => {
          deps.logger.error({ err, code: link?.code }, 'cache refresh after reader reports failed');
        });
        await syncAfterChange(deps, link.code, `safety ${change.before.safety} → warn after reader reports`);
        outcome = { counted, reporters: counts.standing, safety: change.after.safety };
      }
      break;
    }
  } else if (counts.standing >= READER_REPORTS_WARN_THRESHOLD && link.safety !== 'warn') {
    deps.logger.info(
      { code: link.code, reporters: counts.standing },
      'reader reports reached the soft-block threshold on a trusted host: queued for moderation only',
    );
  }

  if (counted && deps.config?.reportWebhook) {
    const softBlocked = outcome.safety === 'warn' && link.safety !== 'warn';
    const shortUrl = shortUrlOfKey(deps.config, link.code);
    void notifyReport(
      { logger: deps.logger, webhook: deps.config.reportWebhook, outgoing: deps.config.outgoing },
      {
        event: 'link.reported',
        code: link.code,
        shortUrl,
        url: link.targetUrl,
        owner: link.owner,
        reason: input.reason,
        standingReports: counts.standing,
        safety: outcome.safety,
        softBlocked,
        queueUrl: `${deps.config.appBaseUrl}/ui/reports`,
        reportedAt: new Date().toISOString(),
        text: toReportText({
          shortUrl,
          url: link.targetUrl,
          reason: input.reason,
          standingReports: counts.standing,
          softBlocked,
          queueUrl: `${deps.config.appBaseUrl}/ui/reports`,
        }),
      },
    );
  }
  return outcome;
}
