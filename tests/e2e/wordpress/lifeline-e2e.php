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
