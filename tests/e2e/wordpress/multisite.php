<?php
// Finishes a subdirectory network install (tests only), once the run's config has the MULTISITE constants:
// the blogs of LIFELINE_E2E_BLOGS (JSON [{"path": "sport", "locale": "ar"}]) are made, then the Lifeline plugin is
// network-activated, as "Network Activate" does, and the admin gets an application password (valid on every blog).
// Prints {"appPassword": "...", "blogs": [{"id": n, "path": "/sport/", "url": "http://host/sport"}]}.
require __DIR__ . '/cli_boot.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';

$lifeline_e2e_blogs = array();
foreach ( (array) json_decode( (string) getenv( 'LIFELINE_E2E_BLOGS' ), true ) as $lifeline_e2e_blog ) {
	$lifeline_e2e_path = '/' . trim( $lifeline_e2e_blog['path'], '/' ) . '/';
	$lifeline_e2e_id   = wp_insert_site(
		array(
			'domain'  => get_network()->domain,
			'path'    => $lifeline_e2e_path,
			'title'   => 'Lifeline E2E ' . $lifeline_e2e_blog['path'],
			'user_id' => 1,
			'options' => isset( $lifeline_e2e_blog['locale'] ) ? array( 'WPLANG' => $lifeline_e2e_blog['locale'] ) : array(),
		)
	);
	if ( is_wp_error( $lifeline_e2e_id ) ) {
		fwrite( STDERR, 'blog failed: ' . $lifeline_e2e_id->get_error_message() . "\n" );
		exit( 1 );
	}
	// Each blog gets the main site's pretty permalinks.
	switch_to_blog( $lifeline_e2e_id );
	update_option( 'permalink_structure', '/%postname%/' );
	delete_option( 'rewrite_rules' );
	restore_current_blog();
	$lifeline_e2e_blogs[] = array(
		'id'   => $lifeline_e2e_id,
		'path' => $lifeline_e2e_path,
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
