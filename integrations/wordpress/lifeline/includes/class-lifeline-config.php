<?php
/**
 * Where Lifeline is and how to talk to it: settings (Settings → Lifeline), each overridable by a constant in
 * wp-config.php (LIFELINE_ENDPOINT, LIFELINE_SITE_ID, LIFELINE_WEBHOOK_SECRET, LIFELINE_API_KEY) so
 * secrets can stay out of the database.
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

	/** Base URL of Lifeline's app host (API and webhooks), without a trailing slash. */
	public static function endpoint(): string {
		$value = defined( 'LIFELINE_ENDPOINT' ) ? (string) LIFELINE_ENDPOINT : (string) get_option( self::OPTION_ENDPOINT, '' );
		return rtrim( trim( $value ), '/' );
	}

	/** This site's id in Lifeline (letters, digits, ".", "-", "_"); defaults to the site's host name. */
	public static function site_id(): string {
		$value = defined( 'LIFELINE_SITE_ID' ) ? (string) LIFELINE_SITE_ID : (string) get_option( self::OPTION_SITE_ID, '' );
		if ( '' === $value ) {
			$value = (string) wp_parse_url( home_url(), PHP_URL_HOST );
		}
		return self::sanitize_site_id( $value );
	}

	/** The shared webhook secret (HMAC key). */
	public static function secret(): string {
		return defined( 'LIFELINE_WEBHOOK_SECRET' ) ? (string) LIFELINE_WEBHOOK_SECRET : (string) get_option( self::OPTION_SECRET, '' );
	}

	/** An API key with the links:read scope, used to look up a post's short link. */
	public static function api_key(): string {
		return defined( 'LIFELINE_API_KEY' ) ? (string) LIFELINE_API_KEY : (string) get_option( self::OPTION_API_KEY, '' );
	}

	/** True when a setting is fixed by a constant in wp-config.php (the settings page shows it read-only). */
	public static function is_constant( string $option ): bool {
		$constants = array(
			self::OPTION_ENDPOINT => 'LIFELINE_ENDPOINT',
			self::OPTION_SITE_ID  => 'LIFELINE_SITE_ID',
			self::OPTION_SECRET   => 'LIFELINE_WEBHOOK_SECRET',
			self::OPTION_API_KEY  => 'LIFELINE_API_KEY',
		);
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
