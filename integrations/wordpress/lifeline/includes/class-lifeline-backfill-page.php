<?php
/**
 * The "Archive backfill" section of Settings → Lifeline: the run's progress (sent / total, outcomes, last
 * error) and the "Backfill the archive" and "Stop" buttons (administrators only, with a nonce).
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Shows and controls the background backfill. */
final class Lifeline_Backfill_Page {

	public static function init(): void {
		add_action( 'admin_post_lifeline_backfill_start', array( __CLASS__, 'handle_start' ) );
		add_action( 'admin_post_lifeline_backfill_stop', array( __CLASS__, 'handle_stop' ) );
	}

	public static function render_section(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$state  = Lifeline_Backfill::get_state();
		$locked = Lifeline_Backfill::is_locked();
		echo '<h2>' . esc_html__( 'Archive backfill', 'lifeline' ) . '</h2>';
		echo '<p>' . esc_html__( 'Gives every post published before this plugin its short link: the published archive is sent to Lifeline in batches, in the background (WP-Cron). A stopped or failed run resumes where it left off.', 'lifeline' ) . '</p>';
		echo '<div id="lifeline-backfill">';
		if ( null === $state ) {
			echo '<p class="lifeline-backfill-status">' . esc_html__( 'No backfill has run yet.', 'lifeline' ) . '</p>';
		} else {
			printf(
				'<p class="lifeline-backfill-status"><strong>%s</strong> <span class="lifeline-backfill-progress">%s</span></p>',
				esc_html( self::status_label( $state, $locked ) ),
				esc_html(
					sprintf(
						/* translators: 1: posts sent, 2: posts in the run, 3: batches */
						__( '%1$d / %2$d posts sent in %3$d batch(es).', 'lifeline' ),
						$state['sent'],
						$state['total'],
						$state['batch']
					)
				)
			);
			echo '<p>' . esc_html(
				sprintf(
					/* translators: 1: minted, 2: kept, 3: adopted, 4: failed */
					__( 'Minted %1$d, kept %2$d, adopted %3$d, failed %4$d.', 'lifeline' ),
					$state['minted'],
					$state['kept'],
					$state['adopted'],
					$state['failed']
				)
			) . '</p>';
			echo '<p>' . esc_html(
				sprintf(
					/* translators: 1: run id, 2: start time, 3: last activity */
					__( 'Run %1$s, started %2$s, last activity %3$s (UTC).', 'lifeline' ),
					$state['run_id'],
					$state['started_at'],
					$state['updated_at']
				)
			);
			if ( ! empty( $state['next_try_at'] ) && 'running' === $state['status'] ) {
				/* translators: %s: time */
				echo ' ' . esc_html( sprintf( __( 'Next try at %s.', 'lifeline' ), $state['next_try_at'] ) );
			}
			echo '</p>';
			if ( '' !== $state['last_error'] ) {
				printf(
					'<p class="lifeline-backfill-error">%s %s</p>',
					esc_html__( 'Last error:', 'lifeline' ),
					esc_html( $state['last_error'] . ' (' . $state['last_error_at'] . ')' )
				);
			}
		}
		$unfinished = Lifeline_Backfill::is_unfinished( $state );
		$running    = $state && 'running' === $state['status'] && ( 'cron' === $state['mode'] || $locked );
		if ( ! $running ) {
			echo '<form id="lifeline-backfill-start" method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '" style="display:inline-block;margin-right:1em">';
			echo '<input type="hidden" name="action" value="lifeline_backfill_start" />';
			wp_nonce_field( 'lifeline_backfill_start' );
			if ( $unfinished ) {
				echo '<label style="margin-right:1em"><input type="checkbox" name="restart" value="1" /> ' . esc_html__( 'Start over from the first post', 'lifeline' ) . '</label>';
			}
			submit_button( $unfinished ? __( 'Resume the backfill', 'lifeline' ) : __( 'Backfill the archive', 'lifeline' ), 'primary', 'submit', false );
			echo '</form>';
		} else {
			echo '<form id="lifeline-backfill-stop" method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '" style="display:inline-block">';
			echo '<input type="hidden" name="action" value="lifeline_backfill_stop" />';
			wp_nonce_field( 'lifeline_backfill_stop' );
			submit_button( __( 'Stop', 'lifeline' ), 'secondary', 'submit', false );
			echo ' <span class="description">' . esc_html__( 'Reload the page to see progress.', 'lifeline' ) . '</span>';
			echo '</form>';
		}
		echo '</div>';
	}

	/**
	 * The run's status for people, translated (Lifeline_Backfill_Cron::describe_status() is the untranslated
	 * form `wp lifeline status` prints for scripts).
	 */
	public static function status_label( array $state, bool $locked ): string {
		if ( 'running' === $state['status'] && 'cli' === $state['mode'] ) {
			return $locked ? __( 'Running (WP-CLI):', 'lifeline' ) : __( 'Interrupted (the WP-CLI process is gone; run it again to resume):', 'lifeline' );
		}
		$labels = array(
			'running'  => __( 'Running (WP-Cron):', 'lifeline' ),
			'stopped'  => __( 'Stopped:', 'lifeline' ),
			'failed'   => __( 'Failed:', 'lifeline' ),
			'finished' => __( 'Finished:', 'lifeline' ),
		);
		return $labels[ $state['status'] ] ?? ucfirst( (string) $state['status'] ) . ':';
	}

	public static function handle_start(): void {
		self::guard( 'lifeline_backfill_start' );
		self::back( Lifeline_Backfill_Cron::start( ! empty( $_POST['restart'] ) ) );
	}

	public static function handle_stop(): void {
		self::guard( 'lifeline_backfill_stop' );
		self::back( Lifeline_Backfill_Cron::stop() );
	}

	/** Administrators only, with a valid nonce (CSRF). */
	private static function guard( string $action ): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to do that.', 'lifeline' ), 403 );
		}
		check_admin_referer( $action );
	}

	/** Back to the settings page, with the notice Lifeline_Settings shows there. */
	private static function back( string $message ): void {
		set_transient( 'lifeline_notice_' . get_current_user_id(), $message, MINUTE_IN_SECONDS );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . Lifeline_Settings::PAGE ) );
		exit;
	}
}
