<?php
// Router for PHP's built-in server in front of Debian's WordPress package (tests only). It selects this run's
// config file (/etc/wordpress/config-<name>.php, through Debian's WORDPRESS_CONFIG switch), serves the run's
// plugin assets, runs PHP files in the global scope WordPress expects, and sends every other path to
// WordPress's front controller (pretty permalinks).
$_SERVER['WORDPRESS_CONFIG'] = getenv( 'LIFELINE_E2E_WP_CONFIG' );
$lifeline_e2e_root = rtrim( $_SERVER['DOCUMENT_ROOT'], '/' );
$lifeline_e2e_path = rawurldecode( (string) parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
$lifeline_e2e_plugins = getenv( 'LIFELINE_E2E_PLUGINS_DIR' );

if ( $lifeline_e2e_plugins && 0 === strpos( $lifeline_e2e_path, '/e2e-plugins/' ) ) {
	$lifeline_e2e_file = realpath( $lifeline_e2e_plugins . substr( $lifeline_e2e_path, strlen( '/e2e-plugins' ) ) );
	$lifeline_e2e_types = array( 'js' => 'text/javascript', 'css' => 'text/css', 'svg' => 'image/svg+xml', 'png' => 'image/png' );
	$lifeline_e2e_ext = strtolower( pathinfo( (string) $lifeline_e2e_file, PATHINFO_EXTENSION ) );
	if ( $lifeline_e2e_file && is_file( $lifeline_e2e_file ) && isset( $lifeline_e2e_types[ $lifeline_e2e_ext ] ) ) {
		header( 'Content-Type: ' . $lifeline_e2e_types[ $lifeline_e2e_ext ] );
		readfile( $lifeline_e2e_file );
	} else {
		http_response_code( 404 );
	}
	return true;
}

// A subdirectory network: /<blog>/wp-admin/…, /<blog>/wp-includes/… and /<blog>/<file>.php are the root's files
// (the rewrite rules wp-admin/network.php gives Apache and nginx); REQUEST_URI keeps the blog's path.
if ( getenv( 'LIFELINE_E2E_MULTISITE' ) && preg_match( '#^/[_0-9a-zA-Z-]+(/(?:wp-(?:content|admin|includes).*|[^/]*\.php))$#', $lifeline_e2e_path, $lifeline_e2e_m ) ) {
	$lifeline_e2e_inner = $lifeline_e2e_root . $lifeline_e2e_m[1];
	if ( is_file( $lifeline_e2e_inner ) && '.php' !== substr( $lifeline_e2e_inner, -4 ) ) {
		$lifeline_e2e_types = array( 'js' => 'text/javascript', 'css' => 'text/css', 'svg' => 'image/svg+xml', 'png' => 'image/png', 'gif' => 'image/gif', 'woff' => 'font/woff', 'woff2' => 'font/woff2', 'json' => 'application/json' );
		$lifeline_e2e_ext   = strtolower( pathinfo( $lifeline_e2e_inner, PATHINFO_EXTENSION ) );
		header( 'Content-Type: ' . ( $lifeline_e2e_types[ $lifeline_e2e_ext ] ?? 'application/octet-stream' ) );
		readfile( $lifeline_e2e_inner );
		return true;
	}
	if ( is_file( $lifeline_e2e_inner ) || is_file( rtrim( $lifeline_e2e_inner, '/' ) . '/index.php' ) ) {
		$lifeline_e2e_path = $lifeline_e2e_m[1];
	}
}

$lifeline_e2e_script = $lifeline_e2e_root . '/index.php';
$lifeline_e2e_target = $lifeline_e2e_root . $lifeline_e2e_path;
if ( '/' !== $lifeline_e2e_path && is_file( $lifeline_e2e_target ) ) {
	if ( '.php' !== substr( $lifeline_e2e_target, -4 ) ) {
		return false; // A static file: the built-in server sends it.
	}
	$lifeline_e2e_script = $lifeline_e2e_target;
} elseif ( is_dir( $lifeline_e2e_target ) && is_file( rtrim( $lifeline_e2e_target, '/' ) . '/index.php' ) && '/' !== $lifeline_e2e_path ) {
	$lifeline_e2e_script = rtrim( $lifeline_e2e_target, '/' ) . '/index.php';
}
$_SERVER['SCRIPT_FILENAME'] = $lifeline_e2e_script;
$_SERVER['SCRIPT_NAME']     = substr( $lifeline_e2e_script, strlen( $lifeline_e2e_root ) );
$_SERVER['PHP_SELF']        = $_SERVER['SCRIPT_NAME'];
chdir( dirname( $lifeline_e2e_script ) );
unset( $lifeline_e2e_root, $lifeline_e2e_path, $lifeline_e2e_plugins, $lifeline_e2e_target, $lifeline_e2e_m, $lifeline_e2e_inner );
require $lifeline_e2e_script;
