<?php
// Loads this run's WordPress in a command-line process (tests only), as WP-CLI does for `--url`: the Host header
// selects the run's config through Debian's /etc/wordpress/config-<name>.php switch. Require it from the
// global scope of a script; WordPress keeps its state in globals.
$lifeline_e2e_host           = (string) getenv( 'LIFELINE_E2E_WP_HOST' );
$_SERVER['HTTP_HOST']        = $lifeline_e2e_host;
$_SERVER['SERVER_NAME']      = '127.0.0.1';
$_SERVER['SERVER_PORT']      = (string) parse_url( 'http://' . $lifeline_e2e_host, PHP_URL_PORT );
$_SERVER['REQUEST_URI']      = '/';
$_SERVER['REQUEST_METHOD']   = 'GET';
$_SERVER['REMOTE_ADDR']      = '127.0.0.1';
$_SERVER['WORDPRESS_CONFIG'] = getenv( 'LIFELINE_E2E_WP_CONFIG' );
unset( $lifeline_e2e_host );
require '/usr/share/wordpress/wp-load.php';
