<?php
/**
 * HTTP to Lifeline: signed webhook deliveries and short-link lookups.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Talks to Lifeline's API. */
final class Lifeline_Client {

	/** Seconds a delivery may take; an editor's save waits for the first try. */
	const SEND_TIMEOUT = 5;
	/** Seconds a short-link lookup may take while a page renders. */
	const READ_TIMEOUT = 2;

	/**
	 * The signature header value (API.md): `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`,
	 * and with `$kind` also `,v2=<hex>` bound to that kind (Lifeline_Signature::sign_kind), which Lifeline checks
	 * instead when present; v1 stays for a Lifeline that predates v2. It covers the exact bytes sent, and its
	 * own time, so a delivery retried hours later is signed afresh.
	 */
	public static function sign( string $body, string $secret, int $timestamp, string $kind = '' ): string {
		$header = 't=' . $timestamp . ',v1=' . hash_hmac( 'sha256', $timestamp . '.' . $body, $secret );
		if ( '' !== $kind ) {
			$header .= ',v2=' . Lifeline_Signature::sign_kind( $kind, $body, $secret, $timestamp );
		}
		return $header;
	}

	/**
	 * Sends one event. Returns [ 'ok' => bool, 'retry' => bool, 'status' => int, 'error' => string,
	 * 'retry_after' => int seconds|0, 'code' => string|null ]. Connection failures, 401 (wrong secret or
	 * clock, fixable by an administrator), 429 and 5xx are retried; a 4xx about the payload is not.
	 */
	public static function send_event( array $payload ): array {
		$body     = wp_json_encode( $payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
		$response = wp_remote_post(
			Lifeline_Config::endpoint() . '/api/v1/hooks/wordpress',
			array(
				'timeout'            => self::SEND_TIMEOUT,
				'redirection'        => 0,
				// The endpoint is set by an administrator and is often on a private network next to WordPress.
				'reject_unsafe_urls' => false,
				'headers'            => array(
					'Content-Type'         => 'application/json; charset=utf-8',
					'Accept'               => 'application/json',
					'User-Agent'           => 'Lifeline-WordPress/' . LIFELINE_PLUGIN_VERSION . '; ' . home_url( '/' ),
					'X-Lifeline-Signature' => self::sign( (string) $body, Lifeline_Config::secret(), time(), Lifeline_Signature::KIND_EVENT ),
				),
				'body'               => $body,
			)
		);
		if ( is_wp_error( $response ) ) {
			return array(
				'ok'          => false,
				'retry'       => true,
				'status'      => 0,
				'error'       => $response->get_error_message(),
				'retry_after' => 0,
				'code'        => null,
			);
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		$json   = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( $status >= 200 && $status < 300 ) {
			return array(
				'ok'          => true,
				'retry'       => false,
				'status'      => $status,
				'error'       => '',
				'retry_after' => 0,
				'code'        => is_array( $json ) && isset( $json['code'] ) ? (string) $json['code'] : null,
			);
		}
		$detail = is_array( $json ) && isset( $json['detail'] ) ? (string) $json['detail'] : (string) wp_remote_retrieve_response_message( $response );
		return array(
			'ok'          => false,
			'retry'       => 401 === $status || 408 === $status || 429 === $status || $status >= 500,
			'status'      => $status,
			'error'       => sprintf( 'HTTP %d: %s', $status, substr( $detail, 0, 300 ) ),
			'retry_after' => (int) wp_remote_retrieve_header( $response, 'retry-after' ),
			'code'        => null,
		);
	}

	/**
	 * The post's link from GET /api/v1/links/by-post/{site}/{postId}: the decoded link, null while it has
	 * none (404), or a WP_Error when Lifeline cannot be asked.
	 *
	 * @return array|null|WP_Error
	 */
	public static function fetch_link( int $post_id ) {
		$url      = sprintf(
			'%s/api/v1/links/by-post/%s/%d',
			Lifeline_Config::endpoint(),
			rawurlencode( Lifeline_Config::site_id() ),
			$post_id
		);
		$response = wp_remote_get(
			$url,
			array(
				'timeout'            => self::READ_TIMEOUT,
				'redirection'        => 0,
				'reject_unsafe_urls' => false,
				'headers'            => array(
					'Authorization' => 'Bearer ' . Lifeline_Config::api_key(),
					'Accept'        => 'application/json',
				),
			)
		);
		if ( is_wp_error( $response ) ) {
			return $response;
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		if ( 404 === $status ) {
			return null;
		}
		$json = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( 200 !== $status || ! is_array( $json ) || empty( $json['shortUrl'] ) ) {
			return new WP_Error( 'lifeline_http', sprintf( 'Lifeline answered HTTP %d', $status ) );
		}
		return $json;
	}

	/**
	 * Checks the settings against Lifeline without changing anything: the webhook secret (a signed empty
	 * body must be refused as a bad payload, 400, not as a bad signature, 401) and the API key.
	 *
	 * @return string[] One line per check.
	 */
	public static function check_connection(): array {
		$lines = array();
		if ( ! Lifeline_Config::can_send() ) {
			return array( __( 'Set the Lifeline URL and the webhook secret first.', 'lifeline' ) );
		}
		$body     = '{}';
		$response = wp_remote_post(
			Lifeline_Config::endpoint() . '/api/v1/hooks/wordpress',
			array(
				'timeout'            => self::SEND_TIMEOUT,
				'redirection'        => 0,
				'reject_unsafe_urls' => false,
				'headers'            => array(
					'Content-Type'         => 'application/json',
					'X-Lifeline-Signature' => self::sign( $body, Lifeline_Config::secret(), time(), Lifeline_Signature::KIND_EVENT ),
				),
				'body'               => $body,
			)
		);
		if ( is_wp_error( $response ) ) {
			/* translators: %s: the connection error */
			$lines[] = sprintf( __( 'Lifeline is unreachable: %s', 'lifeline' ), $response->get_error_message() );
			return $lines;
		}
		$status  = (int) wp_remote_retrieve_response_code( $response );
		$lines[] = 400 === $status
			? __( 'Webhook secret: accepted.', 'lifeline' )
			/* translators: %d: HTTP status code */
			: sprintf( __( 'Webhook secret: refused (HTTP %d). Check the secret and this server\'s clock.', 'lifeline' ), $status );
		if ( Lifeline_Config::can_read() ) {
			$read    = self::fetch_link( 1 );
			$lines[] = is_wp_error( $read )
				/* translators: %s: why the API key was refused */
				? sprintf( __( 'API key: %s', 'lifeline' ), $read->get_error_message() )
				: __( 'API key: accepted.', 'lifeline' );
		} else {
			$lines[] = __( 'API key: not set (short links cannot be shown).', 'lifeline' );
		}
		return $lines;
	}
}
