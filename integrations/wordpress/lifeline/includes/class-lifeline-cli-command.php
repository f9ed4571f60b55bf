<?php
/**
 * `wp lifeline backfill`, `wp lifeline reconcile` and `wp lifeline status` (WP-CLI). Registered only when WP-CLI loads WordPress.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/**
 * Gives the published archive its Lifeline short links.
 */
class Lifeline_CLI_Command {

	/** Transient failures in a row (connection, timeout, 5xx) before the command gives up; the run stays resumable. */
	const MAX_TRIES = 5;
	/** Retry-After waits in a row before the command gives up (a server that never lets us in). */
	const MAX_WAITS = 30;

	/**
	 * Sends every published post to Lifeline so it gets its short link.
	 *
	 * Posts go in post ID order, in signed batches. Resumable: an unfinished
	 * run (killed, failed or stopped) continues after the last batch Lifeline
	 * acknowledged; at most that one batch is sent again.
	 *
	 * ## OPTIONS
	 *
	 * [--dry-run]
	 * : Ask Lifeline what it would do. Nothing changes there, and no run state is kept here.
	 *
	 * [--since=<date>]
	 * : Only posts published on or after this day (YYYY-MM-DD, GMT).
	 *
	 * [--batch-size=<number>]
	 * : Posts per request, 1 to 500. Default 100 for a new run; a resumed run keeps its own unless given.
	 *
	 * [--restart]
	 * : Forget an unfinished run and start a new one from the first post.
	 *
	 * ## EXAMPLES
	 *
	 *     wp lifeline backfill --dry-run
	 *     wp lifeline backfill --since=2024-01-01 --batch-size=200
	 *
	 * @when after_wp_load
	 *
	 * @param array $args       Positional arguments (none).
	 * @param array $assoc_args Flags.
	 */
	public function backfill( $args, $assoc_args ) {
		$dry_run = (bool) \WP_CLI\Utils\get_flag_value( $assoc_args, 'dry-run', false );
		$restart = (bool) \WP_CLI\Utils\get_flag_value( $assoc_args, 'restart', false );
		$since   = isset( $assoc_args['since'] ) ? trim( (string) $assoc_args['since'] ) : null;
		$size    = isset( $assoc_args['batch-size'] ) ? trim( (string) $assoc_args['batch-size'] ) : null;
		if ( null !== $since && '' !== Lifeline_Backfill::check_since( $since ) ) {
			WP_CLI::error( Lifeline_Backfill::check_since( $since ) );
		}
		if ( null !== $size && '' !== Lifeline_Backfill::check_batch_size( $size ) ) {
			WP_CLI::error( Lifeline_Backfill::check_batch_size( $size ) );
		}
		if ( ! Lifeline_Config::can_send() ) {
			WP_CLI::error( 'Lifeline is not configured: set the Lifeline URL and the webhook secret (Settings → Lifeline or wp-config.php).' );
		}

		if ( $dry_run ) {
			// A dry run is a run of its own that is never saved: it reads and writes no state, takes no lock.
			$run = Lifeline_Backfill::new_run( (string) $since, null === $size ? Lifeline_Backfill::DEFAULT_BATCH_SIZE : (int) $size, 'cli', true );
			WP_CLI::log( sprintf( 'Dry run %s: %d published post(s) to ask about.', $run['run_id'], $run['total'] ) );
			$this->drive( $run );
			return;
		}

		if ( ! Lifeline_Backfill::lock() ) {
			WP_CLI::error( 'Another backfill is running (WP-CLI, or WP-Cron from Settings → Lifeline). Stop it first, or wait.' );
		}
		try {
			$state = Lifeline_Backfill::get_state();
			if ( $restart || ! Lifeline_Backfill::is_unfinished( $state ) ) {
				Lifeline_Backfill_Cron::unschedule();
				$run = Lifeline_Backfill::new_run( (string) $since, null === $size ? Lifeline_Backfill::DEFAULT_BATCH_SIZE : (int) $size, 'cli', false );
				$run = Lifeline_Backfill::save_state( $run );
				WP_CLI::log( sprintf( 'Backfill run %s: %d published post(s).', $run['run_id'], $run['total'] ) );
			} else {
				if ( null !== $since && $since !== $state['since'] ) {
					WP_CLI::error(
						sprintf(
							'An unfinished run (%s) was started with --since=%s; resume it without --since, or pass --restart.',
							$state['run_id'],
							'' === $state['since'] ? '(none)' : $state['since']
						)
					);
				}
				// WP-CLI takes over a run from WP-Cron or from an earlier command that died.
				Lifeline_Backfill_Cron::unschedule();
				$run               = $state;
				$run['dry_run']    = false;
				$run['mode']       = 'cli';
				$run['status']     = 'running';
				$run['attempts']   = 0;
				$run['batch_size'] = null === $size ? (int) $state['batch_size'] : (int) $size;
				$run               = Lifeline_Backfill::save_state( $run, true );
				WP_CLI::log(
					sprintf(
						'Resuming run %s after post %d (batch %d): %d of %d post(s) sent.',
						$run['run_id'],
						$run['cursor'],
						$run['batch'],
						$run['sent'],
						$run['total']
					)
				);
			}
			$this->drive( $run );
		} finally {
			Lifeline_Backfill::unlock();
		}
	}

	/**
	 * Asks Lifeline to check every post against this site's listing now.
	 *
	 * Run it after moving the site to this WordPress, once the import is complete:
	 * Lifeline re-binds each link to the post that claims its code (or has its
	 * GUID, or its permalink path) and lists what it cannot match for certain for
	 * an administrator to review. Sent through the outbox: while Lifeline is
	 * unreachable it stays queued and is retried.
	 *
	 * ## EXAMPLES
	 *
	 *     wp lifeline reconcile
	 *
	 * @when after_wp_load
	 *
	 * @param array $args       Positional arguments (none).
	 * @param array $assoc_args Flags (none).
	 */
	public function reconcile( $args, $assoc_args ) {
		if ( ! Lifeline_Config::can_send() ) {
			WP_CLI::error( 'Lifeline is not configured: set the Lifeline URL and the webhook secret (Settings → Lifeline or wp-config.php).' );
		}
		$before = Lifeline_Outbox::status();
		Lifeline_Site_Events::request_check();
		$after = Lifeline_Outbox::status();
		if ( $after['dead'] > $before['dead'] ) {
			WP_CLI::error( 'Lifeline refused the request; see Settings → Lifeline for its answer.' );
		}
		if ( $after['queued'] > 0 ) {
			WP_CLI::warning( sprintf( 'Queued behind %d other event(s) or waiting for Lifeline (%s); WP-Cron sends it.', $after['queued'] - 1, (string) $after['last_error'] ) );
			return;
		}
		WP_CLI::success( sprintf( 'Lifeline is checking every post of site "%s" (installation %s).', Lifeline_Config::site_id(), Lifeline_Config::installation_id() ) );
	}

	/**
	 * Shows the backfill run state (the `lifeline_backfill` option).
	 *
	 * ## OPTIONS
	 *
	 * [--format=<format>]
	 * : table (default) or json.
	 *
	 * @when after_wp_load
	 *
	 * @param array $args       Positional arguments (none).
	 * @param array $assoc_args Flags.
	 */
	public function status( $args, $assoc_args ) {
		$format = isset( $assoc_args['format'] ) ? (string) $assoc_args['format'] : 'table';
		if ( ! in_array( $format, array( 'table', 'json' ), true ) ) {
			WP_CLI::error( 'format must be table or json' );
		}
		$state = Lifeline_Backfill::get_state();
		if ( 'json' === $format ) {
			$out = null === $state ? null : array_merge( $state, array( 'active' => Lifeline_Backfill::is_locked() ) );
			WP_CLI::line( (string) wp_json_encode( $out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) );
			return;
		}
		if ( null === $state ) {
			WP_CLI::line( 'No backfill has run yet.' );
			return;
		}
		$rows = array(
			'run'         => $state['run_id'],
			'status'      => Lifeline_Backfill_Cron::describe_status( $state, Lifeline_Backfill::is_locked() ),
			'progress'    => sprintf( '%d / %d post(s) sent, %d batch(es), cursor after post %d', $state['sent'], $state['total'], $state['batch'], $state['cursor'] ),
			'outcomes'    => self::summarize( $state ),
			'since'       => '' === $state['since'] ? '(all)' : $state['since'],
			'batch size'  => (string) $state['batch_size'],
			'started'     => (string) $state['started_at'],
			'updated'     => (string) $state['updated_at'],
			'finished'    => (string) ( $state['finished_at'] ?? '' ),
			'last error'  => '' === $state['last_error'] ? '(none)' : $state['last_error'] . ' (' . $state['last_error_at'] . ')',
			'next try'    => (string) ( $state['next_try_at'] ?? '' ),
		);
		foreach ( $rows as $label => $value ) {
			WP_CLI::line( sprintf( '%-11s %s', $label . ':', $value ) );
		}
		foreach ( $state['failures'] as $failure ) {
			WP_CLI::line( sprintf( '%-11s post %d: %s', 'failed:', $failure['postId'], $failure['outcome'] ) );
		}
	}

	/** Sends batches until the run finishes, is stopped, or cannot go on; saves the state after every answer. */
	private function drive( array $run ): void {
		$progress = \WP_CLI\Utils\make_progress_bar( $run['dry_run'] ? 'Asking Lifeline' : 'Backfilling', max( 1, (int) $run['total'] ) );
		if ( $run['sent'] > 0 ) {
			$progress->tick( (int) $run['sent'] );
		}
		$waits = 0;
		while ( 'finished' !== $run['status'] ) {
			if ( ! $run['dry_run'] ) {
				$saved = Lifeline_Backfill::get_state();
				if ( ! $saved || $saved['run_id'] !== $run['run_id'] || 'running' !== $saved['status'] ) {
					$progress->finish();
					WP_CLI::warning( sprintf( 'Run %s was stopped from Settings → Lifeline after %d of %d post(s); run the command again to resume.', $run['run_id'], $run['sent'], $run['total'] ) );
					return;
				}
			}
			$step = Lifeline_Backfill::step( $run );
			if ( 'sent' === $step['result'] ) {
				$run   = Lifeline_Backfill::save_state( $run );
				$waits = 0;
				$progress->tick( count( $step['batch']['posts'] ) );
				continue;
			}
			if ( 'wait' === $step['result'] && ++$waits <= self::MAX_WAITS ) {
				$run['next_try_at'] = gmdate( 'Y-m-d\TH:i:s\Z', time() + $step['seconds'] );
				$run                = Lifeline_Backfill::save_state( $run );
				WP_CLI::warning( sprintf( 'Lifeline is busy (%s); sending batch %d again in %d s.', $step['error'], $step['batch']['number'], $step['seconds'] ) );
				sleep( $step['seconds'] );
				continue;
			}
			if ( 'retry' === $step['result'] && $run['attempts'] < self::MAX_TRIES ) {
				$delay              = self::retry_delay( (int) $run['attempts'] );
				$run['next_try_at'] = gmdate( 'Y-m-d\TH:i:s\Z', time() + $delay );
				$run                = Lifeline_Backfill::save_state( $run );
				WP_CLI::warning( sprintf( '%s; trying batch %d again in %d s.', $step['error'], $step['batch']['number'], $delay ) );
				sleep( $delay );
				continue;
			}
			$run['status'] = 'failed';
			Lifeline_Backfill::save_state( $run );
			$progress->finish();
			WP_CLI::error(
				sprintf(
					'Batch %d was not accepted: %s. %s',
					$step['batch']['number'],
					$step['error'],
					$run['dry_run'] ? 'Nothing was changed.' : sprintf( 'Run %s stopped after %d of %d post(s); run the command again to resume.', $run['run_id'], $run['sent'], $run['total'] )
				)
			);
		}
		$progress->finish();
		if ( $run['dry_run'] && ! empty( $run['bitly'] ) ) {
			WP_CLI::log( self::bitly_budget( $run ) );
		}
		WP_CLI::success(
			$run['dry_run']
				? sprintf( 'Dry run finished: asked about %d post(s) in %d batch(es); %s. Nothing was changed.', $run['sent'], $run['batch'], self::summarize( $run ) )
				: sprintf( 'Backfill finished: sent %d post(s) in %d batch(es); %s.', $run['sent'], $run['batch'], self::summarize( $run ) )
		);
	}

	/** "Bitly: a real run would create 4210 link(s); this month's limit 5000, 1200 used, 3800 left (from Bitly)." */
	private static function bitly_budget( array $run ): string {
		$bitly = $run['bitly'];
		if ( ! empty( $bitly['archiveLinksInHouse'] ) ) {
			return 'Bitly: a real run would create no link there (ARCHIVE_LINKS_IN_HOUSE: archive links stay in-house only).';
		}
		$line = sprintf( 'Bitly: a real run would create %d link(s)', (int) ( $run['bitly_creates'] ?? 0 ) );
		if ( ! isset( $bitly['monthlyLimit'] ) ) {
			return $line . '; the monthly limit is unknown (set BITLY_MONTHLY_CREATE_LIMIT on Lifeline).';
		}
		if ( isset( $bitly['remaining'], $bitly['usedThisMonth'] ) ) {
			$line .= sprintf( "; this month's limit %d, %d used, %d left", (int) $bitly['monthlyLimit'], (int) $bitly['usedThisMonth'], (int) $bitly['remaining'] );
		} else {
			$line .= sprintf( "; this month's limit %d", (int) $bitly['monthlyLimit'] );
		}
		$line .= 'bitly' === ( $bitly['limitSource'] ?? '' ) ? ' (from Bitly).' : ' (BITLY_MONTHLY_CREATE_LIMIT).';
		if ( isset( $bitly['remaining'] ) && (int) ( $run['bitly_creates'] ?? 0 ) > (int) $bitly['remaining'] ) {
			$line .= ' More than is left this month: creates over the limit wait for the next month.';
		}
		return $line;
	}

	/** "minted 250, kept 0, adopted 10, failed 0"; a dry run says "would mint 250, would keep 0, …". */
	private static function summarize( array $run ): string {
		$format = empty( $run['dry_run'] )
			? 'minted %d, kept %d, adopted %d, failed %d'
			: 'would mint %d, would keep %d, would adopt %d, failed %d';
		return sprintf( $format, $run['minted'], $run['kept'], $run['adopted'], $run['failed'] );
	}

	/** Seconds before the next try after `$attempts` transient failures: 2, 4, 8, 16… (filter `lifeline_backfill_retry_delay`). */
	private static function retry_delay( int $attempts ): int {
		$delay = (int) min( 2 ** max( 1, $attempts ), 300 );
		return max( 0, (int) apply_filters( 'lifeline_backfill_retry_delay', $delay, $attempts, 'cli' ) );
	}
}
