<?php
/**
 * The signed listing Lifeline's reconciliation reads (CONTRACT.md §5): `GET /wp-json/lifeline/v1/posts?page=&
 * per_page=&modified_after=` answers, for every post of the configured types, its status and permalink as
 * WordPress has them now. Only Lifeline may ask (the request is signed with the shared secret, for this host,
 * with a nonce used once), and the answer is signed too, bound to that request, so Lifeline knows it came from
 * this plugin for this request and not from a cache, a proxy in between or an earlier answer.
 * Each row names the code the post claims and its GUID, and the answer this installation's id, so Lifeline can
 * tell a moved site (post IDs reassigned) from the one it knew.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** GET /lifeline/v1/posts. */
final class Lifeline_Listing {

	const ROUTE            = '/lifeline/v1/posts';
	const DEFAULT_PER_PAGE = 100;
	const MAX_PER_PAGE     = 500;
	const MAX_PAGE         = 10000000;
	const MAX_POST_ID      = 999999999;
	/** The statuses listed; auto-drafts, revisions ("inherit") and custom statuses never. */
	const STATUSES = array( 'publish', 'future', 'draft', 'pending', 'private', 'trash' );

	/** The nonce of the request being answered (its answer is signed over it). */
	private static $nonce = '';

	public static function init(): void {
		add_action( 'rest_api_init', array( __CLASS__, 'register_route' ) );
		add_filter( 'rest_pre_serve_request', array( __CLASS__, 'serve_signed' ), 10, 4 );
	}

	public static function register_route(): void {
		register_rest_route(
			'lifeline/v1',
			'/posts',
			array(
				'methods'             => 'GET',
				'callback'            => array( __CLASS__, 'list_posts' ),
				'permission_callback' => array( __CLASS__, 'authorize' ),
			)
		);
	}

	/**
	 * The request must carry `X-Lifeline-Signature: t=<unix>,n=<nonce>,v2=<hex HMAC-SHA256(secret,
	 * "lifeline/listing-request\n<t>.GET\n<host>\n<path and query exactly as requested>\n<nonce>")>`: the Host it
	 * was sent to and the request target as it reached this server (so the plain-permalink form
	 * `/?rest_route=/lifeline/v1/posts&page=2` is signed as it is, and a changed query breaks the signature), with
	 * a nonce this site has not accepted before (Lifeline_Signature::verify_listing_request).
	 *
	 * @return true|WP_Error
	 */
	public static function authorize( WP_REST_Request $request ) {
		// WordPress adds slashes to $_SERVER (wp_magic_quotes); the signature covers the bytes the client sent.
		// phpcs:disable LifelineWP.Security.ValidatedSanitizedInput.InputNotSanitized -- signed bytes: sanitising would change what the HMAC covers; they are only compared in constant time, never output or stored.
		$target          = isset( $_SERVER['REQUEST_URI'] ) ? wp_unslash( (string) $_SERVER['REQUEST_URI'] ) : '';
		$host            = isset( $_SERVER['HTTP_HOST'] ) ? wp_unslash( (string) $_SERVER['HTTP_HOST'] ) : '';
		// phpcs:enable
		list( $reason, $nonce ) = Lifeline_Signature::verify_listing_request(
			(string) $request->get_header( 'X-Lifeline-Signature' ),
			$request->get_method(),
			$host,
			$target,
			Lifeline_Config::secret(),
			time()
		);
		if ( '' === $reason ) {
			self::$nonce = $nonce;
			return true;
		}
		return new WP_Error( 'lifeline_bad_signature', 'Lifeline signature refused: ' . $reason . '.', array( 'status' => 401 ) );
	}

	/**
	 * One page of posts, ordered by post ID (new posts only ever append, so earlier pages stay put while
	 * Lifeline pages through).
	 *
	 * @return WP_REST_Response|WP_Error
	 */
	public static function list_posts( WP_REST_Request $request ) {
		$page     = self::read_int( $request, 'page', 1, 1, self::MAX_PAGE );
		$per_page = self::read_int( $request, 'per_page', self::DEFAULT_PER_PAGE, 1, self::MAX_PER_PAGE );
		$after    = self::read_time( $request, 'modified_after' );
		// One post by ID: Lifeline asks for the article behind a dead link rather than for the whole site.
		$post_id = self::read_int( $request, 'post_id', 0, 1, self::MAX_POST_ID );
		foreach ( array( $page, $per_page, $after, $post_id ) as $value ) {
			if ( is_wp_error( $value ) ) {
				return $value;
			}
		}

		global $wpdb;
		$types = array_values( array_filter( array_map( 'strval', Lifeline_Config::post_types() ) ) );
		$posts = array();
		$total = 0;
		if ( $types ) {
			$where = 'post_type IN (' . implode( ',', array_fill( 0, count( $types ), '%s' ) ) . ')'
				. ' AND post_status IN (' . implode( ',', array_fill( 0, count( self::STATUSES ), '%s' ) ) . ')';
			$args  = array_merge( $types, self::STATUSES );
			if ( $post_id > 0 ) {
				$where .= ' AND ID = %d';
				$args[] = $post_id;
			}
			if ( null !== $after ) {
				// At or after that second: post_modified_gmt has no fractions, and a repeat is harmless where a miss is not.
				$where .= ' AND post_modified_gmt >= %s';
				$args[] = gmdate( 'Y-m-d H:i:s', $after );
			}
			$total = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$wpdb->posts} WHERE {$where}", $args ) );
			$ids   = array_map(
				'intval',
				$wpdb->get_col(
					$wpdb->prepare(
						"SELECT ID FROM {$wpdb->posts} WHERE {$where} ORDER BY ID ASC LIMIT %d OFFSET %d",
						array_merge( $args, array( $per_page, ( $page - 1 ) * $per_page ) )
					)
				)
			);
			if ( $ids ) {
				_prime_post_caches( $ids, false, true );
			}
			foreach ( $ids as $id ) {
				$post = get_post( $id );
				if ( $post instanceof WP_Post ) {
					$posts[] = Lifeline_Post_Code::add_identity(
						array(
							'postId'     => (int) $post->ID,
							'status'     => $post->post_status,
							'permalink'  => Lifeline_Post_Fields::permalink( $post ),
							'title'      => Lifeline_Post_Fields::title( $post ),
							'modifiedAt' => Lifeline_Post_Fields::modified_at( $post ),
						),
						$post
					);
				}
			}
		}
		$response = new WP_REST_Response(
			array(
				'site'           => Lifeline_Config::site_id(),
				'installationId' => Lifeline_Config::installation_id(),
				'page'           => $page,
				'perPage'        => $per_page,
				'total'          => $total,
				'totalPages'     => (int) ceil( $total / $per_page ),
				'posts'          => $posts,
			),
			200
		);
		// Every answer is for Lifeline alone and signed at its time: no page cache or proxy may keep it.
		$response->header( 'Cache-Control', 'no-store, private' );
		return $response;
	}

	/**
	 * `rest_pre_serve_request`: serves this route's successful answers itself, so the bytes signed are exactly
	 * the bytes sent: `X-Lifeline-Signature: t=<unix>,v2=<hex HMAC-SHA256(secret, "lifeline/listing-answer\n<t>.
	 * <request nonce>\n<raw body>")>` (bound to the request it answers; never v1, which Lifeline would also read
	 * as a signed backfill batch or event).
	 *
	 * @param bool             $served  Whether an earlier filter served the request.
	 * @param WP_HTTP_Response $result  The response about to be sent.
	 * @param WP_REST_Request  $request The request.
	 * @param WP_REST_Server   $server  The REST server.
	 * @return bool
	 */
	public static function serve_signed( $served, $result, $request, $server ) {
		if ( $served || ! $request instanceof WP_REST_Request || self::ROUTE !== $request->get_route()
			|| ! $result instanceof WP_HTTP_Response || 200 !== $result->get_status() || '' === self::$nonce ) {
			return $served;
		}
		$body = wp_json_encode( $result->get_data(), JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
		if ( false === $body ) {
			return $served;
		}
		$now = time();
		$server->send_header(
			'X-Lifeline-Signature',
			't=' . $now . ',v2=' . Lifeline_Signature::sign_kind(
				Lifeline_Signature::KIND_LISTING_ANSWER,
				self::$nonce . "\n" . $body,
				Lifeline_Config::secret(),
				$now
			)
		);
		if ( 'HEAD' !== $request->get_method() ) {
			echo $body; // phpcs:ignore LifelineWP.Security.EscapeOutput.OutputNotEscaped -- JSON with its own content type, byte for byte what the signature covers, as WordPress's REST server sends it.
		}
		return true;
	}

	/** @return int|WP_Error */
	private static function read_int( WP_REST_Request $request, string $name, int $default, int $min, int $max ) {
		$value = $request->get_param( $name );
		if ( null === $value || '' === $value ) {
			return $default;
		}
		if ( ! is_scalar( $value ) || ! preg_match( '/^\d{1,9}$/', (string) $value ) || (int) $value < $min || (int) $value > $max ) {
			return new WP_Error(
				'lifeline_bad_request',
				sprintf( '%s must be a whole number from %d to %d.', $name, $min, $max ),
				array( 'status' => 400 )
			);
		}
		return (int) $value;
	}

	/**
	 * An ISO 8601 date-time with its zone (`2024-03-01T09:30:00Z`, `…+02:00`), as a Unix time; null when absent.
	 * A `+` that arrived unencoded reads as a space in a query string; it is taken back.
	 *
	 * @return int|null|WP_Error
	 */
	private static function read_time( WP_REST_Request $request, string $name ) {
		$value = $request->get_param( $name );
		if ( null === $value || '' === $value ) {
			return null;
		}
		$value = is_scalar( $value ) ? str_replace( ' ', '+', trim( (string) $value ) ) : '';
		if ( ! preg_match( '/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i', $value ) || false === strtotime( $value ) ) {
			return new WP_Error(
				'lifeline_bad_request',
				sprintf( '%s must be an ISO 8601 date-time with a zone, e.g. 2024-03-01T09:30:00Z.', $name ),
				array( 'status' => 400 )
			);
		}
		return (int) strtotime( $value );
	}
}
