<?php
// Adds a blog to the run's network, as Network Admin → Sites → Add does (wp_insert_site(), which fires
// wp_initialize_site for network-active plugins). Tests only; required by multisite.php and add_blog.php.
// WordPress drops the ":" of a domain with a port (wp_normalize_site_data() runs sanitize_user() on it), and a
// test network listens on a free port: the blog's domain and URLs are then put right, as a network on port 80
// would have them.

/**
 * @param string $path    The blog's path without slashes (`sport`).
 * @param array  $options Options for the new blog (`WPLANG`…).
 * @return int The blog's id.
 */
function lifeline_e2e_insert_blog( $path, array $options = array() ) {
	global $wpdb;
	$domain = get_network()->domain;
	$path   = '/' . trim( $path, '/' ) . '/';
	$id     = wp_insert_site(
		array(
			'domain'  => $domain,
			'path'    => $path,
			'title'   => 'Lifeline E2E ' . trim( $path, '/' ),
			'user_id' => 1,
			'options' => $options,
		)
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, 'blog failed: ' . $id->get_error_message() . "\n" );
		exit( 1 );
	}
	$wpdb->update( $wpdb->blogs, array( 'domain' => $domain ), array( 'blog_id' => $id ) );
	clean_blog_cache( $id );
	switch_to_blog( $id );
	update_option( 'home', 'http://' . $domain . untrailingslashit( $path ) );
	update_option( 'siteurl', 'http://' . $domain . untrailingslashit( $path ) );
	// The main site's pretty permalinks.
	update_option( 'permalink_structure', '/%postname%/' );
	delete_option( 'rewrite_rules' );
	restore_current_blog();
	return $id;
}
