<?php
/**
 * The post's claim to its short link. Lifeline keys a link by (site, post ID), and a move to a fresh WordPress
 * (export, import, new hosting) reassigns post IDs; so the code travels with the post itself, in post meta that
 * a WXR export carries, and every message about a post names the code it claims (`knownCode`) and its GUID
 * (`guid`, which the WordPress Importer keeps). Lifeline trusts that claim over the post ID.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Reads and keeps the code a post claims. */
final class Lifeline_Post_Code {

	/** The post's code, written whenever Lifeline answers with one (events, backfill, the short-link lookup). */
	const META_CODE = '_lifeline_code';
	/** Lifeline's codes: letters, digits, "-" and "_", at most 64, never starting with "_". */
	const CODE_PATTERN = '/^[A-Za-z0-9-][A-Za-z0-9_-]{0,63}$/';

	/** Codes claimed by more than one post of this site, read once per request (see shared_codes()). */
	private static $shared = null;

	/**
	 * The code the post claims: its `_lifeline_code`, else the last path segment of its `_lifeline_short_url`
	 * when that URL is on one of Lifeline's short hosts (a post exported by plugin 1.1 has only the URL). Null
	 * when it claims none.
	 *
	 * @param WP_Post|int $post The post.
	 */
	public static function known_code( $post ): ?string {
		$post_id = $post instanceof WP_Post ? (int) $post->ID : (int) $post;
		$code    = get_post_meta( $post_id, self::META_CODE, true );
		if ( is_string( $code ) && self::is_code( $code ) ) {
			return $code;
		}
		$url = get_post_meta( $post_id, Lifeline_Shortlink::META_URL, true );
		return is_string( $url ) ? self::code_from_short_url( $url ) : null;
	}

	/**
	 * The claim as sent to Lifeline: known_code(), except when another post of this site claims the same code.
	 * Duplicate-post tools copy every meta key, so a copy claims its original's code; which of the two is the
	 * original cannot be told here, so neither claims it and Lifeline falls back to the GUID and the post ID.
	 */
	public static function claimed_code( WP_Post $post ): ?string {
		$code = self::known_code( $post );
		if ( null === $code ) {
			return null;
		}
		return isset( self::shared_codes()[ $code ] ) ? null : $code;
	}

	/** `$code` when it is on a Lifeline short host and looks like a code, else null. */
	public static function code_from_short_url( string $url ): ?string {
		$parts = wp_parse_url( trim( $url ) );
		if ( ! is_array( $parts ) || empty( $parts['host'] ) || empty( $parts['path'] )
			|| ! in_array( strtolower( (string) ( $parts['scheme'] ?? '' ) ), array( 'http', 'https' ), true )
			|| ! in_array( strtolower( (string) $parts['host'] ), Lifeline_Config::short_hosts(), true ) ) {
			return null;
		}
		$segments = explode( '/', trim( (string) $parts['path'], '/' ) );
		$code     = (string) end( $segments );
		return self::is_code( $code ) ? $code : null;
	}

	/**
	 * Keeps the code Lifeline answered for a post, unless the post already claims another one: right after a
	 * move, Lifeline's answer for a post ID may still be the link of the article that had that ID on the old
	 * site, and a post's own claim must never be overwritten by it. Returns whether the answer agrees.
	 */
	public static function remember( int $post_id, string $code ): bool {
		if ( $post_id <= 0 || ! self::is_code( $code ) ) {
			return false;
		}
		$claim = self::known_code( $post_id );
		if ( null !== $claim && $claim !== $code ) {
			return false;
		}
		if ( get_post_meta( $post_id, self::META_CODE, true ) !== $code ) {
			update_post_meta( $post_id, self::META_CODE, $code );
			self::$shared = null;
		}
		return true;
	}

	/**
	 * The post's GUID as stored (the Importer keeps it across a move); null when empty or longer than Lifeline
	 * takes (2,000 characters; core's column holds 255): a cut GUID would name another post.
	 */
	public static function guid( WP_Post $post ): ?string {
		$guid = trim( (string) $post->guid );
		return '' === $guid || mb_strlen( $guid ) > 2000 ? null : $guid;
	}

	/**
	 * Adds `knownCode` (when the post claims one) and `guid` (when it has one) to a message about the post.
	 *
	 * @param array   $fields The message's fields for this post.
	 * @param WP_Post $post   The post.
	 */
	public static function add_identity( array $fields, WP_Post $post ): array {
		$code = self::claimed_code( $post );
		if ( null !== $code ) {
			$fields['knownCode'] = $code;
		}
		$guid = self::guid( $post );
		if ( null !== $guid ) {
			$fields['guid'] = $guid;
		}
		return $fields;
	}

	public static function is_code( string $value ): bool {
		return (bool) preg_match( self::CODE_PATTERN, $value );
	}

	/** Forgets the per-request cache (tests and long WP-CLI runs that write claims). */
	public static function reset_cache(): void {
		self::$shared = null;
	}

	/**
	 * Codes two or more posts of this site claim, through `_lifeline_code` or the last segment of
	 * `_lifeline_short_url` (revisions carry no meta). One indexed pass over those two meta keys per request. A
	 * short URL on another host whose last segment equals a claimed code also counts: dropping a claim only
	 * makes Lifeline fall back to the GUID, where keeping a copied one could move a link to the wrong post.
	 *
	 * @return array<string, true>
	 */
	private static function shared_codes(): array {
		if ( null === self::$shared ) {
			global $wpdb;
			$codes        = $wpdb->get_col(
				$wpdb->prepare(
					// Codes are case-sensitive; the meta table's collation is not: compare the bytes.
					"SELECT CAST(code AS BINARY) AS claimed FROM (
						SELECT post_id, CASE WHEN meta_key = %s THEN meta_value
							ELSE SUBSTRING_INDEX(TRIM(TRAILING '/' FROM meta_value), '/', -1) END AS code
						FROM {$wpdb->postmeta} WHERE meta_key IN (%s, %s)
					) AS claims GROUP BY claimed HAVING COUNT(DISTINCT post_id) > 1",
					self::META_CODE,
					self::META_CODE,
					Lifeline_Shortlink::META_URL
				)
			);
			self::$shared = array_fill_keys( array_map( 'strval', (array) $codes ), true );
		}
		return self::$shared;
	}
}
