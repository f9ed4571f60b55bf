<?php
// Sets or deletes one post meta value from the command line (tests only), as `wp post meta update|delete` would:
// `php set_post_meta.php <post id> <key> [<value>]`; without a value the key is deleted. Prints {"ok": bool}.
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_ok = 4 === count( $argv )
	? false !== update_post_meta( (int) $argv[1], $argv[2], $argv[3] )
	: delete_post_meta( (int) $argv[1], $argv[2] );
echo wp_json_encode( array( 'ok' => $lifeline_e2e_ok ) ) . "\n";
