<?php
// Brings a scheduled post's time forward to now (tests only): `php make_due.php <post id>`. WordPress schedules a
// post only a minute or more ahead (wp_insert_post() publishes anything sooner at once), and a test should not
// wait that minute; so the post's date and its `publish_future_post` WP-Cron event move to a second ago, and the
// next WP-Cron run publishes it through the real path (check_and_publish_future_post → wp_publish_post).
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_id  = (int) $argv[1];
$lifeline_e2e_now = time() - 1;
if ( 'future' !== get_post_status( $lifeline_e2e_id ) ) {
	fwrite( STDERR, "post {$lifeline_e2e_id} is not scheduled\n" );
	exit( 1 );
}
$wpdb->update(
	$wpdb->posts,
	array(
		'post_date'     => get_date_from_gmt( gmdate( 'Y-m-d H:i:s', $lifeline_e2e_now ) ),
		'post_date_gmt' => gmdate( 'Y-m-d H:i:s', $lifeline_e2e_now ),
	),
	array( 'ID' => $lifeline_e2e_id )
);
clean_post_cache( $lifeline_e2e_id );
wp_clear_scheduled_hook( 'publish_future_post', array( $lifeline_e2e_id ) );
wp_schedule_single_event( $lifeline_e2e_now, 'publish_future_post', array( $lifeline_e2e_id ) );
echo wp_json_encode( array( 'due' => gmdate( 'c', $lifeline_e2e_now ) ) ) . "\n";
