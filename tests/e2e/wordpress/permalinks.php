<?php
// Every post's permalink as WordPress emits it (tests only): `php permalinks.php`. Prints one JSON line,
// {"<post ID>": {"status", "title", "permalink", "guid"}} for posts of type `post`.
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_out = array();
foreach ( $wpdb->get_col( "SELECT ID FROM {$wpdb->posts} WHERE post_type = 'post' AND post_status <> 'auto-draft' ORDER BY ID" ) as $lifeline_e2e_id ) {
	$lifeline_e2e_post                          = get_post( (int) $lifeline_e2e_id );
	$lifeline_e2e_out[ (int) $lifeline_e2e_id ] = array(
		'status'    => $lifeline_e2e_post->post_status,
		'title'     => $lifeline_e2e_post->post_title,
		'permalink' => (string) get_permalink( $lifeline_e2e_post ),
		'guid'      => $lifeline_e2e_post->guid,
	);
}
echo wp_json_encode( (object) $lifeline_e2e_out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) . "\n";
