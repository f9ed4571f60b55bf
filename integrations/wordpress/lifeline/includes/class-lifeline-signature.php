<?php
/**
 * Signatures between Lifeline and this plugin. v1: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<message>")>`.
 * v2 binds each signature to the kind of message it signs: HMAC-SHA256(secret, "lifeline/<kind>\n<t>.<message>"),
 * so a signed event, backfill batch, listing request or listing answer can never pass for another kind (a v2
 * string starts with a letter, a v1 string with a digit: neither passes for the other either).
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Verifies signed requests from Lifeline. */
final class Lifeline_Signature {

	/** Seconds a signature stays valid either side of this server's clock (as Lifeline allows for ours). */
	const TOLERANCE = 300;

	const KIND_EVENT           = 'event';
	const KIND_BACKFILL        = 'backfill';
	const KIND_LISTING_REQUEST = 'listing-request';
	const KIND_LISTING_ANSWER  = 'listing-answer';

	/** Prefix of the options that remember listing-request nonces (one row each, pruned after the window). */
	const NONCE_OPTION_PREFIX = 'lifeline_nonce_';

	/** The v2 HMAC (hex) of `$message` of `$kind` at `$timestamp`. */
	public static function sign_kind( string $kind, string $message, string $secret, int $timestamp ): string {
		return hash_hmac( 'sha256', 'lifeline/' . $kind . "\n" . $timestamp . '.' . $message, $secret );
	}

	/** The signed string of a listing request: method, host, request target and nonce, one a line. */
	public static function listing_request_message( string $method, string $host, string $target, string $nonce ): string {
		return strtoupper( $method ) . "\n" . strtolower( $host ) . "\n" . $target . "\n" . $nonce;
	}

	/**
	 * Checks a listing request Lifeline signed: `t=<unix>,n=<nonce>,v2=<hex>` over method, Host, the request target
	 * as sent and the nonce, within the window, with a nonce never accepted before (remembered for twice the window,
	 * so a captured request cannot be sent again while its time still passes). Returns [ reason, nonce ]: reason ''
	 * when accepted. The old v1 form is refused: it named neither host nor nonce, so it could be replayed.
	 *
	 * @return array{0: string, 1: string}
	 */
	public static function verify_listing_request( string $header, string $method, string $host, string $target, string $secret, int $now ): array {
		if ( '' === $secret ) {
			return array( 'the Lifeline webhook secret is not set on this site', '' );
		}
		$fields = self::parse( $header );
		if ( null === $fields['t'] || '' === $fields['n'] || empty( $fields['v2'] ) ) {
			return array( 'malformed X-Lifeline-Signature header (expected t=<unix seconds>,n=<nonce>,v2=<hex>; update Lifeline if it sends v1)', '' );
		}
		if ( ! preg_match( '/^[0-9a-f]{16,64}$/', $fields['n'] ) ) {
			return array( 'malformed nonce', '' );
		}
		if ( abs( $now - $fields['t'] ) > self::TOLERANCE ) {
			return array( 'stale signature (more than 300 s from this server\'s clock)', '' );
		}
		$expected = self::sign_kind(
			self::KIND_LISTING_REQUEST,
			self::listing_request_message( $method, $host, $target, $fields['n'] ),
			$secret,
			$fields['t']
		);
		if ( ! self::matches( $expected, $fields['v2'] ) ) {
			return array( 'signature does not match', '' );
		}
		if ( ! self::remember_nonce( $fields['n'], $now ) ) {
			return array( 'replayed request (this nonce was already used)', '' );
		}
		return array( '', $fields['n'] );
	}

	/**
	 * Records a nonce; false when it was already recorded. One INSERT IGNORE on the options table's unique
	 * option_name: atomic, so two copies of one request arriving together cannot both pass.
	 */
	private static function remember_nonce( string $nonce, int $now ): bool {
		global $wpdb;
		$inserted = $wpdb->query(
			$wpdb->prepare(
				"INSERT IGNORE INTO {$wpdb->options} (option_name, option_value, autoload) VALUES (%s, %s, 'no')",
				self::NONCE_OPTION_PREFIX . $nonce,
				(string) $now
			)
		);
		// Forget nonces older than twice the window: their signatures are stale by then anyway.
		$wpdb->query(
			$wpdb->prepare(
				"DELETE FROM {$wpdb->options} WHERE option_name LIKE %s AND CAST(option_value AS UNSIGNED) < %d",
				$wpdb->esc_like( self::NONCE_OPTION_PREFIX ) . '%',
				$now - 2 * self::TOLERANCE
			)
		);
		return 1 === (int) $inserted;
	}

	/** @return array{t: int|null, n: string, v1: string[], v2: string[]} */
	private static function parse( string $header ): array {
		$fields = array(
			't'  => null,
			'n'  => '',
			'v1' => array(),
			'v2' => array(),
		);
		foreach ( explode( ',', $header ) as $part ) {
			$pair = explode( '=', trim( $part ), 2 );
			if ( 2 !== count( $pair ) ) {
				continue;
			}
			if ( 't' === $pair[0] && ctype_digit( $pair[1] ) ) {
				$fields['t'] = (int) $pair[1];
			} elseif ( 'n' === $pair[0] ) {
				$fields['n'] = $pair[1];
			} elseif ( 'v1' === $pair[0] || 'v2' === $pair[0] ) {
				$fields[ $pair[0] ][] = strtolower( $pair[1] );
			}
		}
		return $fields;
	}

	/** @param string[] $signatures */
	private static function matches( string $expected, array $signatures ): bool {
		$match = false;
		foreach ( $signatures as $signature ) {
			// Constant time: the comparison must not tell an attacker how many leading characters were right.
			$match = hash_equals( $expected, $signature ) || $match;
		}
		return $match;
	}

	/**
	 * Returns '' when `$header` signs `$message` with `$secret` within the time window, otherwise why not (for
	 * the 401 answer; it never says what the right signature would have been).
	 */
	public static function verify( string $header, string $message, string $secret, int $now ): string {
		if ( '' === $secret ) {
			return 'the Lifeline webhook secret is not set on this site';
		}
		if ( '' === trim( $header ) ) {
			return 'missing X-Lifeline-Signature header';
		}
		$timestamp  = null;
		$signatures = array();
		foreach ( explode( ',', $header ) as $part ) {
			$pair = explode( '=', trim( $part ), 2 );
			if ( 2 !== count( $pair ) ) {
				continue;
			}
			if ( 't' === $pair[0] && ctype_digit( $pair[1] ) ) {
				$timestamp = (int) $pair[1];
			} elseif ( 'v1' === $pair[0] ) {
				$signatures[] = strtolower( $pair[1] );
			}
		}
		if ( null === $timestamp || empty( $signatures ) ) {
			return 'malformed X-Lifeline-Signature header (expected t=<unix seconds>,v1=<hex>)';
		}
		if ( abs( $now - $timestamp ) > self::TOLERANCE ) {
			return 'stale signature (more than 300 s from this server\'s clock)';
		}
		$expected = hash_hmac( 'sha256', $timestamp . '.' . $message, $secret );
		foreach ( $signatures as $signature ) {
			// Constant time: the comparison must not tell an attacker how many leading characters were right.
			if ( hash_equals( $expected, $signature ) ) {
				return '';
			}
		}
		return 'signature does not match';
	}
}
