<?php
/**
 * Test-only must-use plugin: the outbox retries after 1 s and WP-Cron may flush it every second, so an
 * end-to-end test does not wait the production minute.
 *
 * @package Lifeline
 */

add_filter( 'lifeline_retry_delay', static function () {
	return 1;
} );
add_filter( 'lifeline_flush_interval', static function () {
	return 1;
} );

// No mail transport on test machines: WordPress's install and notification mails are dropped.
if ( ! function_exists( 'wp_mail' ) ) {
	function wp_mail() {
		return true;
	}
}

// Backfill: a transient failure is retried after 1 s, and WP-Cron sends one batch per tick, so a test sees the
// tick reschedule itself.
add_filter( 'lifeline_backfill_retry_delay', static function () {
	return 1;
} );
add_filter( 'lifeline_backfill_batches_per_tick', static function () {
	return 1;
} );

// A site that knows a post's earlier short link from its own meta key supplies it through this filter.
add_filter(
	'lifeline_known_short_url',
	static function ( $url, $post ) {
		$legacy = get_post_meta( $post->ID, 'e2e_legacy_short_url', true );
		return '' !== $legacy ? $legacy : $url;
	},
	10,
	2
);
