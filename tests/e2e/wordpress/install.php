<?php
// Installs this run's WordPress from Debian's package without wp-cli (tests only): wp_install(), pretty
// permalinks, the Lifeline plugin activated and configured, and an application password for REST calls; or, with
// LIFELINE_E2E_MULTISITE, the main site of a network (multisite.php finishes it). Prints one JSON line.
$host = getenv( 'LIFELINE_E2E_WP_HOST' );
$_SERVER['HTTP_HOST']        = $host;
$_SERVER['SERVER_NAME']      = '127.0.0.1';
$_SERVER['SERVER_PORT']      = (string) parse_url( 'http://' . $host, PHP_URL_PORT );
$_SERVER['REQUEST_URI']      = '/';
$_SERVER['REQUEST_METHOD']   = 'GET';
$_SERVER['WORDPRESS_CONFIG'] = getenv( 'LIFELINE_E2E_WP_CONFIG' );
define( 'WP_INSTALLING', true );
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

$installed = wp_install( 'Lifeline E2E', 'admin', 'admin@example.test', false, '', getenv( 'LIFELINE_E2E_WP_ADMIN_PASSWORD' ) );
global $wp_rewrite, $wpdb;
$wp_rewrite->set_permalink_structure( '/%postname%/' );
$wp_rewrite->flush_rules( false );

if ( getenv( 'LIFELINE_E2E_MULTISITE' ) ) {
	// The first half of a network install, as wp-admin/network.php does it: this site becomes the main site of a
	// subdirectory network. Its config gets the MULTISITE constants next, then multisite.php adds the blogs and
	// network-activates the plugin. Without WP_HOME (it would be every blog's home), the URLs are options.
	update_option( 'home', 'http://' . $host );
	update_option( 'siteurl', 'http://' . $host );
	require_once ABSPATH . 'wp-admin/includes/network.php';
	foreach ( $wpdb->tables( 'ms_global' ) as $lifeline_e2e_table => $lifeline_e2e_prefixed ) {
		$wpdb->$lifeline_e2e_table = $lifeline_e2e_prefixed;
	}
	install_network();
	$lifeline_e2e_network = populate_network( 1, $host, 'admin@example.test', 'Lifeline E2E Network', '/', false );
	if ( is_wp_error( $lifeline_e2e_network ) ) {
		fwrite( STDERR, 'network install failed: ' . $lifeline_e2e_network->get_error_message() . "\n" );
		exit( 1 );
	}
	echo wp_json_encode( array( 'userId' => $installed['user_id'] ) ) . "\n";
	exit( 0 );
}

update_option( 'lifeline_endpoint', getenv( 'LIFELINE_E2E_ENDPOINT' ) );
update_option( 'lifeline_site_id', getenv( 'LIFELINE_E2E_SITE_ID' ) );
update_option( 'lifeline_webhook_secret', getenv( 'LIFELINE_E2E_SECRET' ) );
update_option( 'lifeline_api_key', getenv( 'LIFELINE_E2E_API_KEY' ) );
$activated = activate_plugin( 'lifeline/lifeline.php' );
if ( is_wp_error( $activated ) ) {
	fwrite( STDERR, 'plugin activation failed: ' . $activated->get_error_message() . "\n" );
	exit( 1 );
}
list( $app_password ) = WP_Application_Passwords::create_new_application_password( $installed['user_id'], array( 'name' => 'lifeline-e2e' ) );
echo wp_json_encode( array( 'userId' => $installed['user_id'], 'appPassword' => $app_password ) ) . "\n";
