<?php
/**
 * Backfill in the background (the settings page's "Backfill the archive"): a single WP-Cron event sends a few
 * batches and schedules the next one, so a 100,000-post archive never meets a PHP time limit. Before it sends
 * anything, each tick schedules a fallback tick, so a tick that dies (time limit, fatal error) is picked up
 * again; the run's cursor makes the resend harmless.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Drives a backfill run from WP-Cron. */
final class Lifeline_Backfill_Cron {

	const HOOK = 'lifeline_backfill_tick';
	/** A tick stops starting batches after this many seconds (filter `lifeline_backfill_tick_seconds`). */
	const TICK_SECONDS = 15;
	/** …or after this many batches (filter `lifeline_backfill_batches_per_tick`). */
	const BATCHES_PER_TICK = 50;
	/** When a tick dies without scheduling the next, the fallback runs this much later. */
	const FALLBACK_SECONDS = 120;

	public static function init(): void {
		add_action( self::HOOK, array( __CLASS__, 'tick' ) );
	}

	/**
	 * Starts a run, or resumes the unfinished one (a new one with `$restart`). Returns the notice to show.
	 */
	public static function start( bool $restart ): string {
		if ( ! Lifeline_Config::can_send() ) {
			return __( 'Set the Lifeline URL and the webhook secret first.', 'lifeline' );
		}
		$state = Lifeline_Backfill::get_state();
		if ( Lifeline_Backfill::is_locked() ) {
			return $state && 'cli' === $state['mode']
				? __( 'A backfill is running from WP-CLI. Stop it first, or let it finish.', 'lifeline' )
				: __( 'The backfill is already running.', 'lifeline' );
		}
		if ( $restart || ! Lifeline_Backfill::is_unfinished( $state ) ) {
			$size  = (int) apply_filters( 'lifeline_backfill_batch_size', Lifeline_Backfill::DEFAULT_BATCH_SIZE );
			$size  = max( 1, min( Lifeline_Backfill::MAX_BATCH_SIZE, $size ) );
			$run   = Lifeline_Backfill::save_state( Lifeline_Backfill::new_run( '', $size, 'cron', false ), true );
			/* translators: %d: number of published posts */
			$notice = sprintf( __( 'Backfill started: %d published post(s) will be sent in the background.', 'lifeline' ), $run['total'] );
		} else {
			$run                = $state;
			$run['mode']        = 'cron';
			$run['status']      = 'running';
			$run['attempts']    = 0;
			$run['next_try_at'] = null;
			$run                = Lifeline_Backfill::save_state( $run, true );
			/* translators: 1: posts sent, 2: posts in the run */
			$notice = sprintf( __( 'Backfill resumed at %1$d of %2$d post(s).', 'lifeline' ), $run['sent'], $run['total'] );
		}
		self::schedule( time() );
		// Start now rather than on the next visit, unless the site runs WP-Cron from the system cron only.
		if ( ! ( defined( 'DISABLE_WP_CRON' ) && DISABLE_WP_CRON ) ) {
			spawn_cron();
		}
		return $notice;
	}

	/** Stops the run after the batch in flight (WP-Cron or WP-CLI); the next start resumes it. */
	public static function stop(): string {
		$state = Lifeline_Backfill::get_state();
		self::unschedule();
		if ( ! $state || 'running' !== $state['status'] ) {
			return __( 'No backfill is running.', 'lifeline' );
		}
		$state['status'] = 'stopped';
		Lifeline_Backfill::save_state( $state, true );
		/* translators: 1: posts sent, 2: posts in the run */
		return sprintf( __( 'Backfill stopped at %1$d of %2$d post(s). Start it again to resume.', 'lifeline' ), $state['sent'], $state['total'] );
	}

	/** One WP-Cron tick: a few batches, then the next tick (now, after Retry-After, or after a back-off). */
	public static function tick(): void {
		$state = Lifeline_Backfill::get_state();
		if ( ! $state || 'running' !== $state['status'] || 'cron' !== $state['mode'] ) {
			return;
		}
		if ( ! Lifeline_Backfill::lock() ) {
			self::schedule( time() + 30 );
			return;
		}
		try {
			self::schedule( time() + self::FALLBACK_SECONDS );
			$deadline = microtime( true ) + (float) apply_filters( 'lifeline_backfill_tick_seconds', self::TICK_SECONDS );
			$budget   = max( 1, (int) apply_filters( 'lifeline_backfill_batches_per_tick', self::BATCHES_PER_TICK ) );
			$run      = Lifeline_Backfill::get_state();
			while ( $run && 'running' === $run['status'] && 'cron' === $run['mode'] ) {
				$run['dry_run'] = false;
				$step           = Lifeline_Backfill::step( $run );
				if ( 'sent' === $step['result'] ) {
					$run = Lifeline_Backfill::save_state( $run );
					if ( 'running' !== $run['status'] ) {
						break;
					}
					if ( --$budget <= 0 || microtime( true ) >= $deadline ) {
						self::schedule( time() );
						return;
					}
					continue;
				}
				if ( 'wait' === $step['result'] || 'retry' === $step['result'] ) {
					$delay              = 'wait' === $step['result'] ? (int) $step['seconds'] : self::retry_delay( (int) $run['attempts'] );
					$run['next_try_at'] = gmdate( 'Y-m-d\TH:i:s\Z', time() + $delay );
					$run                = Lifeline_Backfill::save_state( $run );
					if ( 'running' === $run['status'] ) {
						// WP-Cron counts whole seconds: round up, or a tick could come back before Retry-After is over.
						self::schedule( (int) ceil( microtime( true ) ) + $delay );
						return;
					}
					break;
				}
				// Retrying cannot help (wrong secret, refused body…): the page shows the error; "Backfill" resumes.
				$run['status'] = 'failed';
				Lifeline_Backfill::save_state( $run );
				break;
			}
			self::unschedule();
		} finally {
			Lifeline_Backfill::unlock();
		}
	}

	/** Seconds before the next try after `$attempts` transient failures: 30 s doubling to 15 min (filter `lifeline_backfill_retry_delay`). */
	public static function retry_delay( int $attempts ): int {
		$delay = (int) min( 30 * ( 2 ** min( max( 0, $attempts - 1 ), 10 ) ), 15 * MINUTE_IN_SECONDS );
		return max( 0, (int) apply_filters( 'lifeline_backfill_retry_delay', $delay, $attempts, 'cron' ) );
	}

	/** One pending tick at `$at` (the hook is cleared first: WP-Cron refuses a duplicate single event within 10 minutes). */
	public static function schedule( int $at ): void {
		wp_clear_scheduled_hook( self::HOOK );
		wp_schedule_single_event( $at, self::HOOK );
	}

	public static function unschedule(): void {
		wp_clear_scheduled_hook( self::HOOK );
	}

	/** Plugin deactivation: no tick is left behind (the run state stays; starting again resumes it). */
	public static function deactivate(): void {
		self::unschedule();
	}

	/** "running (WP-Cron)", "interrupted (WP-CLI process gone)", "stopped", "failed", "finished". */
	public static function describe_status( array $state, bool $locked ): string {
		if ( 'running' !== $state['status'] ) {
			return $state['status'];
		}
		if ( 'cli' === $state['mode'] ) {
			return $locked ? 'running (WP-CLI)' : 'interrupted (the WP-CLI process is gone; run it again to resume)';
		}
		return 'running (WP-Cron)';
	}
}
