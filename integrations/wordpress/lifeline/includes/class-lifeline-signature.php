<?php
/**
 * Checks a signature Lifeline made: `X-Lifeline-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
 * "<t>.<message>")>`, the same scheme the plugin signs its own deliveries with (Lifeline_Client::sign).
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
