<?php
/**
 * The post's Lifeline link: wp_get_shortlink() returns it (so themes, the admin bar, the <link rel="shortlink">
 * tag and the "Copy link" UI use it), and the post editor shows it.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Looks up, caches and shows a post's short link. */
final class Lifeline_Shortlink {

	const META_URL        = '_lifeline_short_url';
	const META_CHECKED_AT = '_lifeline_checked_at';
	/** A cached link is re-checked after this long (it can be deleted in Lifeline). */
	const RECHECK_AFTER = 12 * HOUR_IN_SECONDS;
	/** After a miss (not minted yet, or Lifeline down), pages do not ask again for this long. */
	const MISS_TTL = MINUTE_IN_SECONDS;
	/** The block editor panel's script handle (its translations are looked up by it). */
	const EDITOR_SCRIPT = 'lifeline-editor';

	public static function init(): void {
		add_filter( 'pre_get_shortlink', array( __CLASS__, 'filter_shortlink' ), 10, 4 );
		add_action( 'rest_api_init', array( __CLASS__, 'register_rest_route' ) );
		add_action( 'enqueue_block_editor_assets', array( __CLASS__, 'enqueue_editor_assets' ) );
		add_action( 'post_submitbox_misc_actions', array( __CLASS__, 'render_classic_editor' ) );
		add_action( 'lifeline_event_delivered', array( __CLASS__, 'on_event_delivered' ), 10, 2 );
	}

	/**
	 * `pre_get_shortlink`: a non-false value short-circuits wp_get_shortlink().
	 *
	 * @param false|string $shortlink   False, or a value from an earlier filter.
	 * @param int          $id          Post ID, or 0 for the current post.
	 * @param string       $context     'post' or 'query'.
	 * @param bool         $allow_slugs Unused.
	 * @return false|string
	 */
	public static function filter_shortlink( $shortlink, $id, $context, $allow_slugs ) {
		if ( false !== $shortlink ) {
			return $shortlink;
		}
		if ( 'query' === $context && is_singular() ) {
			$id = get_queried_object_id();
		} elseif ( 'post' === $context && ! $id ) {
			$post = get_post();
			$id   = $post ? $post->ID : 0;
		}
		$url = $id ? self::get_short_url( (int) $id ) : null;
		return $url ?? $shortlink;
	}

	/** The post's short URL, from the post meta cache or from Lifeline; null while there is none. */
	public static function get_short_url( int $post_id, bool $fresh = false ): ?string {
		$post = get_post( $post_id );
		if ( ! $post || 'publish' !== $post->post_status || ! in_array( $post->post_type, Lifeline_Config::post_types(), true ) ) {
			return null;
		}
		$cached     = (string) get_post_meta( $post_id, self::META_URL, true );
		$checked_at = (int) get_post_meta( $post_id, self::META_CHECKED_AT, true );
		if ( ! $fresh && '' !== $cached && time() - $checked_at < self::RECHECK_AFTER ) {
			return $cached;
		}
		if ( ! Lifeline_Config::can_read() || ( ! $fresh && get_transient( 'lifeline_miss_' . $post_id ) ) ) {
			return '' !== $cached ? $cached : null;
		}
		$link = Lifeline_Client::fetch_link( $post_id );
		if ( is_wp_error( $link ) ) {
			// Lifeline is unreachable: keep serving what we knew.
			set_transient( 'lifeline_miss_' . $post_id, 1, self::MISS_TTL );
			return '' !== $cached ? $cached : null;
		}
		$claim = Lifeline_Post_Code::known_code( $post_id );
		$code  = isset( $link['code'] ) && is_string( $link['code'] ) ? $link['code'] : '';
		if ( null !== $link && null !== $claim && $code !== $claim ) {
			// Lifeline answers for this post ID with another code: after a move, the ID may still be bound to the
			// article that had it on the old site. The post's own claim stands; its link shows once Lifeline has
			// re-bound it (reconciliation), and the other article's link is never shown or stored here.
			set_transient( 'lifeline_miss_' . $post_id, 1, self::MISS_TTL );
			return '' !== $cached && Lifeline_Post_Code::code_from_short_url( $cached ) === $claim ? $cached : null;
		}
		if ( null === $link || 'active' !== ( $link['status'] ?? '' ) ) {
			// The cached URL goes; the claim (`_lifeline_code`) stays: a post published again gets the same code.
			delete_post_meta( $post_id, self::META_URL );
			set_transient( 'lifeline_miss_' . $post_id, 1, self::MISS_TTL );
			return null;
		}
		if ( '' !== $code ) {
			Lifeline_Post_Code::remember( $post_id, $code );
		}
		update_post_meta( $post_id, self::META_URL, esc_url_raw( $link['shortUrl'] ) );
		update_post_meta( $post_id, self::META_CHECKED_AT, time() );
		delete_transient( 'lifeline_miss_' . $post_id );
		return (string) $link['shortUrl'];
	}

	/**
	 * A delivered event can change the link's state: forget the negative cache so the next view asks again. The
	 * code Lifeline answered is kept with the post (never over a different claim).
	 *
	 * @param mixed $payload The event sent.
	 * @param mixed $result  Lifeline_Client::send_event()'s answer.
	 */
	public static function on_event_delivered( $payload, $result = null ): void {
		if ( is_array( $payload ) && isset( $payload['postId'] ) && is_array( $result ) && ! empty( $result['code'] )
			&& 'post.unpublished' !== ( $payload['event'] ?? '' ) ) {
			Lifeline_Post_Code::remember( (int) $payload['postId'], (string) $result['code'] );
		}
		if ( is_array( $payload ) && isset( $payload['postId'] ) ) {
			delete_transient( 'lifeline_miss_' . (int) $payload['postId'] );
			update_post_meta( (int) $payload['postId'], self::META_CHECKED_AT, 0 );
		}
	}

	/** GET /wp-json/lifeline/v1/posts/{id}/shortlink for the editor (editors of the post only). */
	public static function register_rest_route(): void {
		register_rest_route(
			'lifeline/v1',
			'/posts/(?P<id>\d+)/shortlink',
			array(
				'methods'             => 'GET',
				'callback'            => array( __CLASS__, 'rest_shortlink' ),
				'permission_callback' => static function ( WP_REST_Request $request ) {
					return current_user_can( 'edit_post', (int) $request['id'] );
				},
				'args'                => array(
					'id' => array(
						'validate_callback' => static function ( $value ) {
							return is_numeric( $value );
						},
					),
				),
			)
		);
	}

	public static function rest_shortlink( WP_REST_Request $request ): WP_REST_Response {
		$post_id = (int) $request['id'];
		return new WP_REST_Response( self::editor_state( $post_id ), 200 );
	}

	/** What the editor shows: the link, or why there is none yet. */
	public static function editor_state( int $post_id ): array {
		$post   = get_post( $post_id );
		$queued = Lifeline_Outbox::queued_for_post( $post_id );
		if ( ! $post || 'publish' !== $post->post_status ) {
			return array( 'shortUrl' => null, 'state' => 'not_published', 'queued' => $queued );
		}
		if ( ! Lifeline_Config::can_read() ) {
			return array( 'shortUrl' => null, 'state' => 'not_configured', 'queued' => $queued );
		}
		$url = self::get_short_url( $post_id, true );
		return array(
			'shortUrl' => $url,
			'state'    => $url ? 'active' : ( $queued > 0 ? 'queued' : 'minting' ),
			'queued'   => $queued,
		);
	}

	public static function enqueue_editor_assets(): void {
		$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
		if ( $screen && ! in_array( $screen->post_type, Lifeline_Config::post_types(), true ) ) {
			return;
		}
		// wp-editor holds the document sidebar's panel slot from WordPress 6.6 on; before that only wp-edit-post
		// has it (editor.js picks whichever exists, the current one first).
		$deps = array( 'wp-plugins', 'wp-editor', 'wp-element', 'wp-components', 'wp-data', 'wp-api-fetch', 'wp-i18n' );
		if ( version_compare( (string) get_bloginfo( 'version' ), '6.6', '<' ) ) {
			$deps[] = 'wp-edit-post';
		}
		wp_enqueue_script( self::EDITOR_SCRIPT, plugins_url( 'assets/editor.js', LIFELINE_PLUGIN_FILE ), $deps, LIFELINE_PLUGIN_VERSION, true );
		// The panel's strings: languages/lifeline-<locale>-lifeline-editor.json (made from the .po by
		// scripts/wordpress_i18n.ts), or a language pack's in WP_LANG_DIR.
		wp_set_script_translations( self::EDITOR_SCRIPT, 'lifeline', plugin_dir_path( LIFELINE_PLUGIN_FILE ) . 'languages' );
	}

	/** The classic editor's Publish box. */
	public static function render_classic_editor( $post ): void {
		if ( ! $post instanceof WP_Post || ! in_array( $post->post_type, Lifeline_Config::post_types(), true ) ) {
			return;
		}
		$state = self::editor_state( $post->ID );
		echo '<div class="misc-pub-section lifeline-shortlink">';
		echo esc_html__( 'Short link:', 'lifeline' ) . ' ';
		if ( $state['shortUrl'] ) {
			printf(
				'<a href="%1$s" target="_blank" rel="noopener"><strong>%2$s</strong></a>',
				esc_url( $state['shortUrl'] ),
				esc_html( $state['shortUrl'] )
			);
		} else {
			echo '<em>' . esc_html( self::describe_state( $state['state'] ) ) . '</em>';
		}
		echo '</div>';
	}

	public static function describe_state( string $state ): string {
		switch ( $state ) {
			case 'not_published':
				return __( 'made when the post is published', 'lifeline' );
			case 'not_configured':
				return __( 'Lifeline is not configured (Settings → Lifeline)', 'lifeline' );
			case 'queued':
				return __( 'waiting for Lifeline (queued, retried automatically)', 'lifeline' );
			default:
				return __( 'being made…', 'lifeline' );
		}
	}
}
