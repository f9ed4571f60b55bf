<?php
/**
 * Removes the plugin's table and options when it is deleted from the Plugins screen: on every blog of a
 * multisite network (each has its own table and options).
 *
 * @package Lifeline
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

/** One blog's cleanup. */
function lifeline_uninstall_site() {
	global $wpdb;
	$wpdb->query( "DROP TABLE IF EXISTS {$wpdb->prefix}lifeline_outbox" );
	$options = array( 'lifeline_endpoint', 'lifeline_site_id', 'lifeline_webhook_secret', 'lifeline_api_key', 'lifeline_short_domain', 'lifeline_installation_id', 'lifeline_db_version', 'lifeline_backfill' );
	foreach ( $options as $option ) {
		delete_option( $option );
	}
	wp_clear_scheduled_hook( 'lifeline_flush_outbox' );
	wp_clear_scheduled_hook( 'lifeline_backfill_tick' );
	delete_post_meta_by_key( '_lifeline_short_url' );
	delete_post_meta_by_key( '_lifeline_checked_at' );
	delete_post_meta_by_key( '_lifeline_permalink' );
	// `_lifeline_code` stays: it is the post's claim to a short link already in print, content like its GUID, and
	// what lets a reinstalled plugin (or an export of this site) keep every link on its own article.
}

if ( is_multisite() ) {
	foreach ( get_sites( array( 'fields' => 'ids', 'number' => 0 ) ) as $lifeline_blog_id ) {
		switch_to_blog( (int) $lifeline_blog_id );
		lifeline_uninstall_site();
		restore_current_blog();
	}
} else {
	lifeline_uninstall_site();
}
