<?php
// Takes a post out of the trash as the Trash screen's "Restore" does (tests only): `php untrash.php <post id>`.
// WordPress 5.6+ restores it as a draft with its original slug; publishing it again is a separate step.
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_post = wp_untrash_post( (int) $argv[1] );
echo wp_json_encode( array( 'status' => $lifeline_e2e_post ? get_post_status( (int) $argv[1] ) : null ) ) . "\n";
