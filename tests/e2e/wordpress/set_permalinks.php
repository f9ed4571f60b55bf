<?php
// Changes this run's permalink structure as the Permalinks screen does (tests only): `php set_permalinks.php
// <structure>` sets it through $wp_rewrite (update_option fires, so the plugin queues site.permalinks_changed
// and sends it) and flushes the rewrite rules so the new URLs load. Prints {"structure": "..."}.
require __DIR__ . '/cli_boot.php';
global $wp_rewrite;
$wp_rewrite->set_permalink_structure( $argv[1] );
$wp_rewrite->flush_rules( false );
echo wp_json_encode( array( 'structure' => get_option( 'permalink_structure' ) ) ) . "\n";
