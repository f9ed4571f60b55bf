<?php
// Posts written on the new WordPress before the old site's archive is imported (tests only): `php
// seed_fillers.php <count>`. They take the next post IDs, which on a fresh site are the IDs the old site gave
// other articles, so the import must reassign those (and, through auto-increment, many after them). Every fourth
// is published, the rest are drafts. Made without the plugin's event hook, as seed_archive.php does. Prints one
// JSON line: the posts made (ID, status, title).
require __DIR__ . '/cli_boot.php';
remove_action( 'wp_after_insert_post', array( 'Lifeline_Events', 'on_after_insert_post' ), 10 );
$lifeline_e2e_made = array();
for ( $i = 0, $n = max( 1, (int) ( $argv[1] ?? 60 ) ); $i < $n; $i++ ) {
	$status = 0 === $i % 4 ? 'publish' : 'draft';
	$id     = wp_insert_post(
		array(
			'post_title'   => 'New site note ' . $i,
			'post_content' => '<p>Written on the new site.</p>',
			'post_status'  => $status,
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() . "\n" );
		exit( 1 );
	}
	$lifeline_e2e_made[] = array( 'id' => (int) $id, 'status' => $status, 'title' => 'New site note ' . $i );
}
echo wp_json_encode( $lifeline_e2e_made ) . "\n";
