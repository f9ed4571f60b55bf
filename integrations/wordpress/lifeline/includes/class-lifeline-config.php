<?php
/**
 * Where Lifeline is and how to talk to it: settings (Settings → Lifeline), each overridable by a constant in
 * wp-config.php (LIFELINE_ENDPOINT, LIFELINE_SITE_ID, LIFELINE_WEBHOOK_SECRET, LIFELINE_API_KEY,
 * LIFELINE_SHORT_DOMAIN) so secrets can stay out of the database; and this installation's own id.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Reads the plugin's configuration. */
final class Lifeline_Config {

	const OPTION_ENDPOINT = 'lifeline_endpoint';
	const OPTION_SITE_ID  = 'lifeline_site_id';
	const OPTION_SECRET   = 'lifeline_webhook_secret';
	const OPTION_API_KEY  = 'lifeline_api_key';
	/** Host name(s) of Lifeline's short links, comma-separated (for reading a post's code back from its short URL). */
	const OPTION_SHORT_DOMAIN = 'lifeline_short_domain';
	/** This WordPress installation's id: made once, never a setting (see installation_id()). */
	const OPTION_INSTALLATION_ID = 'lifeline_installation_id';

	/** Base URL of Lifeline's app host (API and webhooks), without a trailing slash. */
	public static function endpoint(): string {
		$value = defined( 'LIFELINE_ENDPOINT' ) ? (string) LIFELINE_ENDPOINT : (string) get_option( self::OPTION_ENDPOINT, '' );
		return rtrim( trim( $value ), '/' );
	}

	/**
	 * This site's id in Lifeline (letters, digits, ".", "-", "_"): the setting, else the home URL's host name. On
	 * a multisite network each blog is its own Lifeline site: a blog other than the main one whose home URL has a
	 * path (a subdirectory network) defaults to host and path ("news.example-sport"), and LIFELINE_SITE_ID names
	 * the main site only, since post IDs repeat across blogs and one id for all would mix their links. Filter
	 * `lifeline_site_id` (a network that names its blogs itself).
	 */
	public static function site_id(): string {
		$value = self::site_id_constant_applies() ? (string) LIFELINE_SITE_ID : (string) get_option( self::OPTION_SITE_ID, '' );
		if ( '' === $value ) {
			$value = self::default_site_id();
		}
		return self::sanitize_site_id( (string) apply_filters( 'lifeline_site_id', $value ) );
	}

	/** The site id when none is set: the home URL's host, plus its path for a subdirectory blog of a network. */
	public static function default_site_id(): string {
		$home  = home_url();
		$value = (string) wp_parse_url( $home, PHP_URL_HOST );
		if ( is_multisite() && ! is_main_site() ) {
			$path = trim( (string) wp_parse_url( $home, PHP_URL_PATH ), '/' );
			if ( '' !== $path ) {
				$value .= '-' . str_replace( '/', '-', $path );
			}
		}
		return $value;
	}

	/** LIFELINE_SITE_ID is defined and names this site (on a network: the main site only). */
	private static function site_id_constant_applies(): bool {
		return defined( 'LIFELINE_SITE_ID' ) && ( ! is_multisite() || is_main_site() );
	}

	/** The shared webhook secret (HMAC key). */
	public static function secret(): string {
		return defined( 'LIFELINE_WEBHOOK_SECRET' ) ? (string) LIFELINE_WEBHOOK_SECRET : (string) get_option( self::OPTION_SECRET, '' );
	}

	/** An API key with the links:read scope, used to look up a post's short link. */
	public static function api_key(): string {
		return defined( 'LIFELINE_API_KEY' ) ? (string) LIFELINE_API_KEY : (string) get_option( self::OPTION_API_KEY, '' );
	}

	/**
	 * This installation's id, a UUID v4 made the first time it is asked for and kept in an option. It is sent with
	 * every signed message so Lifeline can tell a fresh WordPress (a move: export, import, new hosting, post IDs
	 * reassigned) from the one it knew under the same site id. It travels with the database, not with an export:
	 * a WXR import into a new WordPress makes a new one, which is the point.
	 */
	public static function installation_id(): string {
		$value = (string) get_option( self::OPTION_INSTALLATION_ID, '' );
		if ( self::is_uuid( $value ) ) {
			return strtolower( $value );
		}
		global $wpdb;
		$fresh = wp_generate_uuid4();
		if ( '' === $value ) {
			// INSERT IGNORE, not add_option() (which overwrites on a duplicate key): when two first requests race,
			// the first id written wins and both read it back, so Lifeline never sees this site change installation.
			$wpdb->query(
				$wpdb->prepare(
					"INSERT IGNORE INTO {$wpdb->options} (option_name, option_value, autoload) VALUES (%s, %s, 'yes')",
					self::OPTION_INSTALLATION_ID,
					$fresh
				)
			);
		} else {
			// Not a UUID (edited by hand): replaced, as a new installation.
			update_option( self::OPTION_INSTALLATION_ID, $fresh, true );
		}
		foreach ( array( self::OPTION_INSTALLATION_ID, 'alloptions', 'notoptions' ) as $key ) {
			wp_cache_delete( $key, 'options' );
		}
		$stored = (string) $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", self::OPTION_INSTALLATION_ID ) );
		return self::is_uuid( $stored ) ? strtolower( $stored ) : $fresh;
	}

	/**
	 * The host names whose short URLs are Lifeline's: the setting (LIFELINE_SHORT_DOMAIN or Settings → Lifeline,
	 * comma-separated) and the Lifeline URL's own host (often the same service). Lower case, without ports.
	 *
	 * @return string[]
	 */
	public static function short_hosts(): array {
		$value = defined( 'LIFELINE_SHORT_DOMAIN' ) ? (string) LIFELINE_SHORT_DOMAIN : (string) get_option( self::OPTION_SHORT_DOMAIN, '' );
		$hosts = array_filter( explode( ',', self::sanitize_short_domain( $value ) ) );
		$endpoint_host = strtolower( (string) wp_parse_url( self::endpoint(), PHP_URL_HOST ) );
		if ( '' !== $endpoint_host ) {
			$hosts[] = $endpoint_host;
		}
		return array_values( array_unique( $hosts ) );
	}

	/** A host name as typed ("Nws.li", "https://nws.li/", "nws.li:443") → "nws.li"; '' when it is not one. */
	public static function sanitize_host( string $value ): string {
		$value = strtolower( trim( $value ) );
		if ( '' === $value ) {
			return '';
		}
		$host = (string) wp_parse_url( false === strpos( $value, '://' ) ? 'http://' . $value : $value, PHP_URL_HOST );
		return preg_match( '/^[a-z0-9.-]{1,253}$/', $host ) ? $host : '';
	}

	/** Comma-separated host names for the setting, each sanitised; unusable entries are dropped. */
	public static function sanitize_short_domain( $value ): string {
		$hosts = array();
		foreach ( explode( ',', (string) $value ) as $host ) {
			$host = self::sanitize_host( $host );
			if ( '' !== $host ) {
				$hosts[] = $host;
			}
		}
		return implode( ',', array_unique( $hosts ) );
	}

	private static function is_uuid( string $value ): bool {
		return (bool) preg_match( '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i', $value );
	}

	/** True when a setting is fixed by a constant in wp-config.php (the settings page shows it read-only). */
	public static function is_constant( string $option ): bool {
		$constants = array(
			self::OPTION_ENDPOINT => 'LIFELINE_ENDPOINT',
			self::OPTION_SITE_ID  => 'LIFELINE_SITE_ID',
			self::OPTION_SECRET   => 'LIFELINE_WEBHOOK_SECRET',
			self::OPTION_API_KEY  => 'LIFELINE_API_KEY',
			self::OPTION_SHORT_DOMAIN => 'LIFELINE_SHORT_DOMAIN',
		);
		if ( self::OPTION_SITE_ID === $option ) {
			return self::site_id_constant_applies();
		}
		return isset( $constants[ $option ] ) && defined( $constants[ $option ] );
	}

	/** True when events can be sent (endpoint and secret set). */
	public static function can_send(): bool {
		return '' !== self::endpoint() && '' !== self::secret();
	}

	/** True when short links can be looked up (endpoint and API key set). */
	public static function can_read(): bool {
		return '' !== self::endpoint() && '' !== self::api_key();
	}

	/** The post types whose posts get a short link (filter `lifeline_post_types`). */
	public static function post_types(): array {
		return (array) apply_filters( 'lifeline_post_types', array( 'post' ) );
	}

	/** Lifeline's site id rules: 1–100 of letters, digits, ".", "-", "_". */
	public static function sanitize_site_id( string $value ): string {
		$value = preg_replace( '/[^A-Za-z0-9._-]/', '-', trim( $value ) );
		return substr( (string) $value, 0, 100 );
	}
}
