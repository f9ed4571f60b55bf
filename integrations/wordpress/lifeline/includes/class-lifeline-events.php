<?php
/**
 * Turns post status changes into Lifeline events (API.md, "WordPress webhook"):
 *   post.published   the post became public (first publish, scheduled publish from cron, republish);
 *   post.updated     a public post's permalink changed (slug, date, category in the permalink);
 *   post.unpublished a public post stopped being public (draft, private, pending, trash, deleted).
 * Drafts never produce an event, so they never mint. Every event names the post's claimed code (`knownCode`),
 * its GUID and this installation's id (Lifeline_Post_Code, Lifeline_Config::installation_id()).
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Hooks WordPress's post lifecycle. */
final class Lifeline_Events {

	/** The permalink Lifeline was last told about (to send post.updated only when it changed). */
	const META_PERMALINK = '_lifeline_permalink';

	public static function init(): void {
		// After terms and meta are saved (WP 5.6+), so the permalink is final; fires for the classic editor,
		// the block editor (REST), quick edit, trash and scheduled publishing alike.
		add_action( 'wp_after_insert_post', array( __CLASS__, 'on_after_insert_post' ), 10, 4 );
		// Deleting a post that was still public (without going through the trash).
		add_action( 'before_delete_post', array( __CLASS__, 'on_before_delete_post' ), 10, 2 );
	}

	/**
	 * @param int          $post_id     Post ID.
	 * @param WP_Post      $post        The post as saved.
	 * @param bool         $update      Whether this was an update.
	 * @param WP_Post|null $post_before The post before the save (null for new posts).
	 */
	public static function on_after_insert_post( $post_id, $post, $update, $post_before ): void {
		if ( ! $post instanceof WP_Post || ! self::is_tracked( $post ) || self::is_importing() ) {
			return;
		}
		$is_public  = 'publish' === $post->post_status;
		$was_public = $post_before instanceof WP_Post && 'publish' === $post_before->post_status;
		if ( $is_public ) {
			$permalink = (string) get_permalink( $post );
			if ( ! $was_public ) {
				self::emit( 'post.published', $post, $permalink );
			} elseif ( get_post_meta( $post->ID, self::META_PERMALINK, true ) !== $permalink ) {
				// The block editor may save twice (REST, then legacy meta boxes): the second save changes nothing.
				self::emit( 'post.updated', $post, $permalink );
			}
		} elseif ( $was_public ) {
			self::emit( 'post.unpublished', $post, null );
		}
	}

	/**
	 * @param int     $post_id Post ID.
	 * @param WP_Post $post    The post about to be deleted.
	 */
	public static function on_before_delete_post( $post_id, $post = null ): void {
		$post = $post instanceof WP_Post ? $post : get_post( $post_id );
		if ( $post instanceof WP_Post && 'publish' === $post->post_status && self::is_tracked( $post ) && ! self::is_importing() ) {
			self::emit( 'post.unpublished', $post, null );
		}
	}

	private static function is_tracked( WP_Post $post ): bool {
		return ! wp_is_post_revision( $post ) && ! wp_is_post_autosave( $post )
			&& in_array( $post->post_type, Lifeline_Config::post_types(), true );
	}

	/**
	 * True while an importer runs (the WordPress Importer defines WP_IMPORTING): it inserts each post first and
	 * adds its meta afterwards, so an event sent from the insert would carry no claim to the post's code, and a
	 * post ID that the old site gave another article would move that article's link. Imported posts are sent by
	 * the backfill and read from the listing instead, with their claims (docs: "Moving to a new WordPress").
	 */
	private static function is_importing(): bool {
		return defined( 'WP_IMPORTING' ) && WP_IMPORTING;
	}

	/** Microsecond UTC time, ISO 8601: orders a publish and a quick slug fix made within the same second. */
	public static function now_iso(): string {
		$now = DateTime::createFromFormat( 'U.u', sprintf( '%.6F', microtime( true ) ), new DateTimeZone( 'UTC' ) );
		return $now->format( 'Y-m-d\TH:i:s.u\Z' );
	}

	private static function emit( string $event, WP_Post $post, ?string $permalink ): void {
		$payload = array(
			'id'             => wp_generate_uuid4(),
			'event'          => $event,
			'site'           => Lifeline_Config::site_id(),
			'installationId' => Lifeline_Config::installation_id(),
			'postId'         => (int) $post->ID,
			'title'          => mb_substr( (string) $post->post_title, 0, 1000 ),
			'occurredAt'     => self::now_iso(),
			// Where Lifeline reads this site's signed listing; the newest one it saw per site wins.
			'restUrl'        => rest_url( 'lifeline/v1/' ),
		);
		// The code the post claims and its GUID: Lifeline trusts them over the post ID (a moved site reuses IDs).
		$payload = Lifeline_Post_Code::add_identity( $payload, $post );
		if ( null !== $permalink ) {
			// As WordPress emits it: non-Latin slugs stay percent-encoded (lowercase hex), never re-encoded.
			$payload['permalink'] = $permalink;
			update_post_meta( $post->ID, self::META_PERMALINK, $permalink );
		}
		$payload = (array) apply_filters( 'lifeline_event_payload', $payload, $post );
		Lifeline_Outbox::enqueue( $payload );
	}
}
