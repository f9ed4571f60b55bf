<?php
/**
 * Removes the plugin's table and options when it is deleted from the Plugins screen.
 *
 * @package Lifeline
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

global $wpdb;
$wpdb->query( "DROP TABLE IF EXISTS {$wpdb->prefix}lifeline_outbox" );
$lifeline_options = array( 'lifeline_endpoint', 'lifeline_site_id', 'lifeline_webhook_secret', 'lifeline_api_key', 'lifeline_short_domain', 'lifeline_installation_id', 'lifeline_db_version', 'lifeline_backfill' );
foreach ( $lifeline_options as $option ) {
	delete_option( $option );
}
wp_clear_scheduled_hook( 'lifeline_flush_outbox' );
wp_clear_scheduled_hook( 'lifeline_backfill_tick' );
delete_post_meta_by_key( '_lifeline_short_url' );
delete_post_meta_by_key( '_lifeline_checked_at' );
delete_post_meta_by_key( '_lifeline_permalink' );
// `_lifeline_code` stays: it is the post's claim to a short link already in print, content like its GUID, and
// what lets a reinstalled plugin (or an export of this site) keep every link on its own article.
