<?php
/**
 * How a post is described to Lifeline outside the publish events (archive backfill and the signed listing):
 * its title as readers see it, its times in UTC, and its permalink, including the one a trashed post had.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** A post's fields as Lifeline's contract spells them (integrations/wordpress/CONTRACT.md). */
final class Lifeline_Post_Fields {

	/** Lifeline stores titles up to this many characters. */
	const TITLE_MAX_CHARS = 1000;

	/**
	 * The title decoded: WordPress stores `&` typed by an author without unfiltered_html as `&amp;` (kses), and
	 * imports often carry numeric entities; Lifeline wants the characters.
	 */
	public static function title( WP_Post $post ): string {
		$title = html_entity_decode( (string) $post->post_title, ENT_QUOTES | ENT_HTML5, 'UTF-8' );
		return mb_substr( $title, 0, self::TITLE_MAX_CHARS );
	}

	public static function published_at( WP_Post $post ): string {
		return self::to_iso_gmt( (string) $post->post_date_gmt, (string) $post->post_date );
	}

	public static function modified_at( WP_Post $post ): string {
		return self::to_iso_gmt( (string) $post->post_modified_gmt, (string) $post->post_modified );
	}

	/**
	 * `2024-03-01T09:30:00Z` from a GMT column. Some imports leave the GMT column zero; the local column, read in
	 * the site's time zone, is the fallback.
	 */
	public static function to_iso_gmt( string $gmt, string $local ): string {
		if ( '' === $gmt || 0 === strpos( $gmt, '0000-00-00' ) ) {
			$gmt = get_gmt_from_date( $local );
		}
		$time = strtotime( $gmt . ' UTC' );
		return gmdate( 'Y-m-d\TH:i:s\Z', false === $time ? 0 : $time );
	}

	/**
	 * The permalink as WordPress emits it (non-Latin slugs stay percent-encoded). For a post in the trash, the
	 * permalink it had before: trashing renames the slug to `<slug>__trashed` (the original is kept in
	 * `_wp_desired_post_slug`) and a trashed post only gets the plain `?p=` link, so Lifeline could not match it.
	 */
	public static function permalink( WP_Post $post ): string {
		if ( 'trash' !== $post->post_status ) {
			return (string) get_permalink( $post );
		}
		if ( 'publish' !== get_post_meta( $post->ID, '_wp_trash_meta_status', true ) ) {
			// It was never public (a draft, a scheduled post…): its link was the plain one, as now.
			return (string) get_permalink( $post );
		}
		// get_permalink() asks get_post_status() whether the post is public; answer as it was before the trash.
		$as_published = static function ( $status, $candidate ) use ( $post ) {
			return $candidate instanceof WP_Post && (int) $candidate->ID === (int) $post->ID ? 'publish' : $status;
		};
		add_filter( 'get_post_status', $as_published, 10, 2 );
		try {
			$permalink = (string) get_permalink( $post );
		} finally {
			remove_filter( 'get_post_status', $as_published, 10 );
		}
		$desired = (string) get_post_meta( $post->ID, '_wp_desired_post_slug', true );
		if ( '' === $desired && '__trashed' === substr( (string) $post->post_name, -9 ) ) {
			$desired = substr( (string) $post->post_name, 0, -9 );
		}
		if ( '' !== $desired && '' !== (string) $post->post_name && $desired !== $post->post_name ) {
			$permalink = str_replace( (string) $post->post_name, $desired, $permalink );
		}
		return $permalink;
	}
}
