<?php
// Exports this run's WordPress as Tools → Export → "All content" does (tests only): `php export_wxr.php <file>`
// runs WordPress core's own WXR exporter, export_wp() from wp-admin/includes/export.php, and writes what it
// would have sent as the download. Prints {"bytes": n}.
require __DIR__ . '/cli_boot.php';
require_once ABSPATH . 'wp-admin/includes/export.php';
ob_start();
export_wp( array( 'content' => 'all' ) );
$lifeline_e2e_wxr = (string) ob_get_clean();
file_put_contents( $argv[1], $lifeline_e2e_wxr );
echo wp_json_encode( array( 'bytes' => strlen( $lifeline_e2e_wxr ) ) ) . "\n";
