<?php
// Sets one WordPress option from the command line (tests only): `php set_option.php <name> <value>`, as
// `wp option update` would. Prints {"changed": bool}.
require __DIR__ . '/cli_boot.php';
$lifeline_e2e_changed = update_option( $argv[1], $argv[2] );
echo wp_json_encode( array( 'changed' => $lifeline_e2e_changed ) ) . "\n";
