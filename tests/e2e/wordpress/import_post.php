<?php
// Inserts one published post the way an importer does (tests only): `php import_post.php <title> [<meta key>
// <meta value>]`: WP_IMPORTING defined (wp-admin/admin.php does so for every importer), wp_insert_post(), then
// add_post_meta() after it, as the WordPress Importer orders them. Prints {"id": n}.
require __DIR__ . '/cli_boot.php';
define( 'WP_IMPORTING', true );
$lifeline_e2e_id = wp_insert_post(
	array(
		'post_title'   => $argv[1],
		'post_content' => '<p>Imported.</p>',
		'post_status'  => 'publish',
	),
	true
);
if ( is_wp_error( $lifeline_e2e_id ) ) {
	fwrite( STDERR, $lifeline_e2e_id->get_error_message() . "\n" );
	exit( 1 );
}
if ( isset( $argv[3] ) ) {
	add_post_meta( $lifeline_e2e_id, $argv[2], $argv[3] );
}
echo wp_json_encode( array( 'id' => $lifeline_e2e_id ) ) . "\n";
