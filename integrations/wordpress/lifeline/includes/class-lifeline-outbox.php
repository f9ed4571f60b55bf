<?php
/**
 * The outbox: every event is written to a table first, then delivered; failed deliveries stay queued and are
 * retried from WP-Cron with backoff, so nothing is lost while Lifeline is down. Core WordPress retries
 * nothing on its own.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Durable, ordered delivery of post events. */
final class Lifeline_Outbox {

	const DB_VERSION        = '1';
	const DB_VERSION_OPTION = 'lifeline_db_version';
	const CRON_HOOK         = 'lifeline_flush_outbox';
	const CRON_SCHEDULE     = 'lifeline_outbox_interval';
	/** Rows delivered per flush. */
	const BATCH = 50;

	public static function init(): void {
		add_action( 'plugins_loaded', array( __CLASS__, 'maybe_install' ) );
		add_filter( 'cron_schedules', array( __CLASS__, 'add_schedule' ) );
		add_action( self::CRON_HOOK, array( __CLASS__, 'flush' ) );
		add_action( 'init', array( __CLASS__, 'ensure_scheduled' ) );
	}

	public static function table(): string {
		global $wpdb;
		return $wpdb->prefix . 'lifeline_outbox';
	}

	/** Creates or upgrades the table (dbDelta is idempotent); runs on activation and after upgrades. */
	public static function maybe_install(): void {
		if ( get_option( self::DB_VERSION_OPTION ) === self::DB_VERSION ) {
			return;
		}
		global $wpdb;
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$table   = self::table();
		$charset = $wpdb->get_charset_collate();
		dbDelta(
			"CREATE TABLE {$table} (
				id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
				delivery_id varchar(64) NOT NULL,
				post_id bigint(20) unsigned NOT NULL,
				event varchar(32) NOT NULL,
				payload longtext NOT NULL,
				attempts int(10) unsigned NOT NULL DEFAULT 0,
				next_attempt_at datetime NOT NULL,
				last_error text NULL,
				dead tinyint(1) NOT NULL DEFAULT 0,
				created_at datetime NOT NULL,
				PRIMARY KEY  (id),
				UNIQUE KEY delivery_id (delivery_id),
				KEY due (dead, next_attempt_at)
			) {$charset};"
		);
		update_option( self::DB_VERSION_OPTION, self::DB_VERSION, false );
	}

	public static function activate(): void {
		self::maybe_install();
		self::ensure_scheduled();
	}

	public static function deactivate(): void {
		wp_clear_scheduled_hook( self::CRON_HOOK );
	}

	/** How often WP-Cron flushes the outbox (filter `lifeline_flush_interval`, seconds). */
	public static function add_schedule( array $schedules ): array {
		$schedules[ self::CRON_SCHEDULE ] = array(
			'interval' => max( 1, (int) apply_filters( 'lifeline_flush_interval', 60 ) ),
			'display'  => __( 'Lifeline outbox', 'lifeline' ),
		);
		return $schedules;
	}

	public static function ensure_scheduled(): void {
		if ( ! wp_next_scheduled( self::CRON_HOOK ) ) {
			wp_schedule_event( time(), self::CRON_SCHEDULE, self::CRON_HOOK );
		}
	}

	/**
	 * Queues an event and, when nothing older is waiting, delivers it right away (the common case: the editor
	 * sees the link within seconds). When older events are queued, it waits its turn so Lifeline sees a post's
	 * events in the order they happened.
	 */
	public static function enqueue( array $payload ): void {
		global $wpdb;
		self::maybe_install();
		$now = gmdate( 'Y-m-d H:i:s' );
		$wpdb->insert(
			self::table(),
			array(
				'delivery_id'     => $payload['id'],
				'post_id'         => isset( $payload['postId'] ) ? (int) $payload['postId'] : 0, // 0: a site event.
				'event'           => $payload['event'],
				'payload'         => wp_json_encode( $payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ),
				'attempts'        => 0,
				'next_attempt_at' => $now,
				'created_at'      => $now,
			),
			array( '%s', '%d', '%s', '%s', '%d', '%s', '%s' )
		);
		$id    = (int) $wpdb->insert_id;
		$table = self::table();
		$older = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$table} WHERE dead = 0 AND id < %d", $id ) );
		if ( 0 === $older ) {
			self::flush();
		}
	}

	/**
	 * Delivers due events, oldest first. Stops at the first one Lifeline cannot take (it is down, or rate
	 * limits us): the rest wait for the next run. One flush at a time (a MySQL named lock).
	 */
	public static function flush(): void {
		global $wpdb;
		if ( ! Lifeline_Config::can_send() || ! self::lock() ) {
			return;
		}
		try {
			$table = self::table();
			$rows  = $wpdb->get_results(
				$wpdb->prepare(
					"SELECT * FROM {$table} WHERE dead = 0 AND next_attempt_at <= %s ORDER BY id LIMIT %d",
					gmdate( 'Y-m-d H:i:s' ),
					self::BATCH
				)
			);
			foreach ( $rows as $row ) {
				$payload = json_decode( $row->payload, true );
				$result  = is_array( $payload ) ? Lifeline_Client::send_event( $payload ) : array(
					'ok'          => false,
					'retry'       => false,
					'error'       => 'unreadable payload',
					'retry_after' => 0,
				);
				if ( $result['ok'] ) {
					$wpdb->delete( $table, array( 'id' => $row->id ), array( '%d' ) );
					do_action( 'lifeline_event_delivered', $payload, $result );
					continue;
				}
				$attempts = (int) $row->attempts + 1;
				if ( ! $result['retry'] ) {
					// Lifeline rejected the payload itself: retrying cannot help. Kept, visible on the settings page.
					$wpdb->update(
						$table,
						array( 'attempts' => $attempts, 'dead' => 1, 'last_error' => $result['error'] ),
						array( 'id' => $row->id ),
						array( '%d', '%d', '%s' ),
						array( '%d' )
					);
					continue;
				}
				$delay = self::retry_delay( $attempts, (int) $result['retry_after'], $row );
				$wpdb->update(
					$table,
					array(
						'attempts'        => $attempts,
						'next_attempt_at' => gmdate( 'Y-m-d H:i:s', time() + $delay ),
						'last_error'      => $result['error'],
					),
					array( 'id' => $row->id ),
					array( '%d', '%s', '%s' ),
					array( '%d' )
				);
				break;
			}
		} finally {
			self::unlock();
		}
	}

	/** Seconds before the next try: 30 s doubling to an hour, or Lifeline's Retry-After (filter `lifeline_retry_delay`). */
	public static function retry_delay( int $attempts, int $retry_after, $row = null ): int {
		$delay = $retry_after > 0 ? $retry_after : (int) min( 30 * ( 2 ** min( $attempts - 1, 10 ) ), HOUR_IN_SECONDS );
		return max( 0, (int) apply_filters( 'lifeline_retry_delay', $delay, $attempts, $row ) );
	}

	/** Counts for the settings page: queued, dead, the oldest queued time and its last error. */
	public static function status(): array {
		global $wpdb;
		$table = self::table();
		if ( get_option( self::DB_VERSION_OPTION ) !== self::DB_VERSION ) {
			return array( 'queued' => 0, 'dead' => 0, 'oldest' => null, 'last_error' => null, 'dead_rows' => array() );
		}
		return array(
			'queued'     => (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$table} WHERE dead = 0" ),
			'dead'       => (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$table} WHERE dead = 1" ),
			'oldest'     => $wpdb->get_var( "SELECT MIN(created_at) FROM {$table} WHERE dead = 0" ),
			'last_error' => $wpdb->get_var( "SELECT last_error FROM {$table} WHERE dead = 0 AND last_error IS NOT NULL ORDER BY id LIMIT 1" ),
			'dead_rows'  => $wpdb->get_results( "SELECT id, post_id, event, last_error, created_at FROM {$table} WHERE dead = 1 ORDER BY id DESC LIMIT 20" ),
		);
	}

	/** Events of one post still waiting (for the editor panel). */
	public static function queued_for_post( int $post_id ): int {
		global $wpdb;
		$table = self::table();
		return (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$table} WHERE dead = 0 AND post_id = %d", $post_id ) );
	}

	/** Makes every queued event due now (the settings page's "Send now"). */
	public static function make_all_due(): void {
		global $wpdb;
		$table = self::table();
		$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET next_attempt_at = %s WHERE dead = 0", gmdate( 'Y-m-d H:i:s' ) ) );
	}

	/**
	 * A MySQL named lock: released by the server if this request dies, so a crash never wedges the outbox.
	 * (A double delivery would be harmless anyway: Lifeline ignores a delivery id it has seen.)
	 */
	private static function lock(): bool {
		global $wpdb;
		return '1' === (string) $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, 0)', self::lock_name() ) );
	}

	private static function unlock(): void {
		global $wpdb;
		$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', self::lock_name() ) );
	}

	private static function lock_name(): string {
		global $wpdb;
		return 'lifeline_outbox_' . md5( DB_NAME . '|' . $wpdb->prefix );
	}
}
