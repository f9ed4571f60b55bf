<?php
/**
 * `site.permalinks_changed` (CONTRACT.md §6): when the permalink structure, the category or tag base, the home
 * URL or the site URL really changes, every post's permalink may have moved at once. Lifeline hears it through
 * the outbox (so it is not lost while Lifeline is down) and re-reads the signed listing at `restUrl`.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Hooks the options that shape every permalink. */
final class Lifeline_Site_Events {

	/** The options watched; each is the event's `reason` when it changes. */
	const OPTIONS = array( 'permalink_structure', 'category_base', 'tag_base', 'home', 'siteurl' );

	/** Reasons already sent in this request: one save of the Permalinks screen is one event per option. */
	private static $sent = array();

	public static function init(): void {
		foreach ( self::OPTIONS as $option ) {
			// update_option() fires this only when the stored value changed.
			add_action(
				"update_option_{$option}",
				static function ( $old_value, $value ) use ( $option ) {
					self::on_change( $option, $old_value, $value );
				},
				10,
				2
			);
			// An option that did not exist yet (category_base on some installs) and is now set.
			add_action(
				"add_option_{$option}",
				static function ( $name, $value ) use ( $option ) {
					self::on_change( $option, '', $value );
				},
				10,
				2
			);
		}
	}

	/**
	 * @param string $option    The option.
	 * @param mixed  $old_value Its value before.
	 * @param mixed  $value     Its value now.
	 */
	public static function on_change( string $option, $old_value, $value ): void {
		if ( self::normalize( $option, $old_value ) === self::normalize( $option, $value ) || isset( self::$sent[ $option ] ) ) {
			return;
		}
		self::$sent[ $option ] = true;
		if ( 'permalink_structure' === $option ) {
			// WP_Rewrite re-reads the structure only after this hook (set_permalink_structure() calls init() next);
			// restUrl must already use the new one (e.g. `/index.php/wp-json/` vs `/wp-json/`).
			global $wp_rewrite;
			if ( $wp_rewrite instanceof WP_Rewrite ) {
				$wp_rewrite->init();
			}
		}
		self::queue( $option );
	}

	/**
	 * An administrator asks Lifeline to check every post now (Settings → Lifeline, `wp lifeline reconcile`):
	 * after a move to a new WordPress, once the import is complete, so Lifeline re-binds each link to its post.
	 * Sent as `site.permalinks_changed` with reason `requested`, which makes Lifeline read the whole listing.
	 */
	public static function request_check(): void {
		self::queue( 'requested' );
	}

	private static function queue( string $reason ): void {
		$payload = array(
			'id'             => wp_generate_uuid4(),
			'event'          => 'site.permalinks_changed',
			'site'           => Lifeline_Config::site_id(),
			'installationId' => Lifeline_Config::installation_id(),
			'occurredAt'     => Lifeline_Events::now_iso(),
			'restUrl'        => rest_url( 'lifeline/v1/' ),
			'reason'         => $reason,
		);
		Lifeline_Outbox::enqueue( (array) apply_filters( 'lifeline_site_event_payload', $payload ) );
	}

	/** A trailing slash or surrounding space is no change of a URL. */
	private static function normalize( string $option, $value ): string {
		$value = trim( is_scalar( $value ) ? (string) $value : '' );
		return 'home' === $option || 'siteurl' === $option ? untrailingslashit( $value ) : $value;
	}
}
