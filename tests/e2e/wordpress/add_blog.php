<?php
// Adds one blog to the run's network (tests only): `php add_blog.php <path>` (insert_blog.php). Prints {"id": n}.
require __DIR__ . '/cli_boot.php';
require __DIR__ . '/insert_blog.php';
echo wp_json_encode( array( 'id' => lifeline_e2e_insert_blog( $argv[1] ) ) ) . "\n";
