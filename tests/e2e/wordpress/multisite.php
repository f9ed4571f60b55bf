<?php
// Finishes a subdirectory network install (tests only), once the run's config has the MULTISITE constants:
// the blogs of LIFELINE_E2E_BLOGS (JSON [{"path": "sport", "locale": "ar"}]) are made, then the Lifeline plugin is
// network-activated, as "Network Activate" does, and the admin gets an application password (valid on every blog).
// Prints {"appPassword": "...", "blogs": [{"id": n, "path": "/sport/", "url": "http://host/sport"}]}.
require __DIR__ . '/cli_boot.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
require __DIR__ . '/insert_blog.php';

$lifeline_e2e_blogs = array();
foreach ( (array) json_decode( (string) getenv( 'LIFELINE_E2E_BLOGS' ), true ) as $lifeline_e2e_blog ) {
	$lifeline_e2e_id      = lifeline_e2e_insert_blog(
		$lifeline_e2e_blog['path'],
		isset( $lifeline_e2e_blog['locale'] ) ? array( 'WPLANG' => $lifeline_e2e_blog['locale'] ) : array()
	);
	$lifeline_e2e_blogs[] = array(
		'id'   => $lifeline_e2e_id,
		'path' => get_site( $lifeline_e2e_id )->path,
		'url'  => get_home_url( $lifeline_e2e_id ),
	);
}

$lifeline_e2e_activated = activate_plugin( 'lifeline/lifeline.php', '', true );
if ( is_wp_error( $lifeline_e2e_activated ) ) {
	fwrite( STDERR, 'network activation failed: ' . $lifeline_e2e_activated->get_error_message() . "\n" );
	exit( 1 );
}
list( $lifeline_e2e_password ) = WP_Application_Passwords::create_new_application_password( 1, array( 'name' => 'lifeline-e2e' ) );
echo wp_json_encode(
	array(
		'appPassword' => $lifeline_e2e_password,
		'blogs'       => $lifeline_e2e_blogs,
	)
) . "\n";
