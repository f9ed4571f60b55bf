<?php
// Adds one blog to the run's network (tests only): `php add_blog.php <path>`, as Network Admin → Sites → Add
// does (wp_insert_site(), which fires wp_initialize_site for network-active plugins). Prints {"id": n}.
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_id = wp_insert_site(
	array(
		'domain'  => get_network()->domain,
		'path'    => '/' . trim( $argv[1], '/' ) . '/',
		'title'   => 'Lifeline E2E ' . $argv[1],
		'user_id' => 1,
	)
);
if ( is_wp_error( $lifeline_e2e_id ) ) {
	fwrite( STDERR, $lifeline_e2e_id->get_error_message() . "\n" );
	exit( 1 );
}
echo wp_json_encode( array( 'id' => $lifeline_e2e_id ) ) . "\n";
