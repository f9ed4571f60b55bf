<?php
// Imports a WXR file into this run's WordPress the way the WordPress Importer plugin (Tools → Import →
// WordPress) does (tests only): `php import_wxr.php <file>`. No importer plugin can be installed here (no
// network to wordpress.org, and Debian does not package it), so this replays its steps on the same core APIs:
// WP_IMPORTING defined (wp-admin/admin.php does so for every importer), term and comment counting deferred, the
// meta keys it refuses (`_edit_lock`, `_wp_attached_file`, `_wp_attachment_metadata`) skipped (and `_edit_last`,
// which it maps to an imported author: none here), and then, for each
// item in file order: auto-drafts and nav menu items skipped, a post with the same title, date and type treated as
// already there (post_exists()), otherwise wp_insert_post() with `import_id` (the old ID, kept only when it is
// free in this database, so colliding IDs are reassigned), the GUID, slug, status (trash included), dates and
// parent (mapped when the parent was imported before it), then its categories and tags, then add_post_meta()
// for each meta entry. Attachments, comments and authors are not replayed (the archive has none). Prints one JSON
// line: the old ID → new ID map, the posts skipped as existing, and how many post events the plugin queued.
require __DIR__ . '/cli_boot.php';
require_once ABSPATH . 'wp-admin/includes/post.php';
define( 'WP_IMPORTING', true );

$lifeline_e2e_events = 0;
add_filter(
	'lifeline_event_payload',
	static function ( $payload ) use ( &$lifeline_e2e_events ) {
		++$lifeline_e2e_events;
		return $payload;
	}
);

$lifeline_e2e_xml = simplexml_load_file( $argv[1], 'SimpleXMLElement', LIBXML_NOCDATA | LIBXML_PARSEHUGE );
if ( false === $lifeline_e2e_xml ) {
	fwrite( STDERR, "not a WXR file: {$argv[1]}\n" );
	exit( 1 );
}
$lifeline_e2e_ns = $lifeline_e2e_xml->getDocNamespaces();
wp_defer_term_counting( true );
wp_defer_comment_counting( true );
do_action( 'import_start' );

$lifeline_e2e_ids     = array();
$lifeline_e2e_skipped = array();
foreach ( $lifeline_e2e_xml->channel->item as $lifeline_e2e_item ) {
	$wp      = $lifeline_e2e_item->children( $lifeline_e2e_ns['wp'] );
	$content = $lifeline_e2e_item->children( $lifeline_e2e_ns['content'] );
	$excerpt = $lifeline_e2e_item->children( $lifeline_e2e_ns['excerpt'] );
	$post    = array(
		'post_id'        => (int) $wp->post_id,
		'post_title'     => (string) $lifeline_e2e_item->title,
		'guid'           => (string) $lifeline_e2e_item->guid,
		'post_content'   => (string) $content->encoded,
		'post_excerpt'   => (string) $excerpt->encoded,
		'post_date'      => (string) $wp->post_date,
		'post_date_gmt'  => (string) $wp->post_date_gmt,
		'comment_status' => (string) $wp->comment_status,
		'ping_status'    => (string) $wp->ping_status,
		'post_name'      => (string) $wp->post_name,
		'status'         => (string) $wp->status,
		'post_parent'    => (int) $wp->post_parent,
		'menu_order'     => (int) $wp->menu_order,
		'post_type'      => (string) $wp->post_type,
		'post_password'  => (string) $wp->post_password,
	);
	if ( ! post_type_exists( $post['post_type'] ) || 'auto-draft' === $post['status'] || 'nav_menu_item' === $post['post_type'] ) {
		continue;
	}
	$existing = post_exists( $post['post_title'], '', $post['post_date'], $post['post_type'] );
	if ( $existing && get_post_type( $existing ) === $post['post_type'] ) {
		$lifeline_e2e_ids[ $post['post_id'] ] = (int) $existing;
		$lifeline_e2e_skipped[]               = $post['post_id'];
		continue;
	}
	$parent = $post['post_parent'];
	if ( $parent ) {
		$parent = isset( $lifeline_e2e_ids[ $parent ] ) ? $lifeline_e2e_ids[ $parent ] : 0;
	}
	$postdata = array(
		'import_id'      => $post['post_id'],
		'post_author'    => get_current_user_id() ? get_current_user_id() : 1,
		'post_date'      => $post['post_date'],
		'post_date_gmt'  => $post['post_date_gmt'],
		'post_content'   => $post['post_content'],
		'post_excerpt'   => $post['post_excerpt'],
		'post_title'     => $post['post_title'],
		'post_status'    => $post['status'],
		'post_name'      => $post['post_name'],
		'comment_status' => $post['comment_status'],
		'ping_status'    => $post['ping_status'],
		'guid'           => $post['guid'],
		'post_parent'    => $parent,
		'menu_order'     => $post['menu_order'],
		'post_type'      => $post['post_type'],
		'post_password'  => $post['post_password'],
	);
	$new_id = wp_insert_post( wp_slash( $postdata ), true );
	if ( is_wp_error( $new_id ) ) {
		fwrite( STDERR, "import of post {$post['post_id']} failed: " . $new_id->get_error_message() . "\n" );
		exit( 1 );
	}
	do_action( 'wp_import_insert_post', $new_id, $post['post_id'], $postdata, $post );
	$lifeline_e2e_ids[ $post['post_id'] ] = (int) $new_id;

	$terms = array();
	foreach ( $lifeline_e2e_item->category as $category ) {
		$taxonomy = 'tag' === (string) $category['domain'] ? 'post_tag' : (string) $category['domain'];
		if ( taxonomy_exists( $taxonomy ) ) {
			$term = term_exists( (string) $category['nicename'], $taxonomy );
			if ( ! $term ) {
				$term = wp_insert_term( (string) $category, $taxonomy, array( 'slug' => (string) $category['nicename'] ) );
			}
			if ( ! is_wp_error( $term ) ) {
				$terms[ $taxonomy ][] = (int) $term['term_id'];
			}
		}
	}
	foreach ( $terms as $taxonomy => $ids ) {
		wp_set_post_terms( $new_id, $ids, $taxonomy );
	}

	foreach ( $wp->postmeta as $meta ) {
		$key = (string) $meta->meta_key;
		if ( in_array( $key, array( '_edit_lock', '_wp_attached_file', '_wp_attachment_metadata', '_edit_last' ), true ) ) {
			continue;
		}
		$value = maybe_unserialize( (string) $meta->meta_value );
		add_post_meta( $new_id, wp_slash( $key ), wp_slash_strings_only( $value ) );
		do_action( 'import_post_meta', $new_id, $key, $value );
	}
}
wp_defer_term_counting( false );
wp_defer_comment_counting( false );
do_action( 'import_end' );
echo wp_json_encode(
	array(
		'ids'     => (object) $lifeline_e2e_ids,
		'skipped' => $lifeline_e2e_skipped,
		'events'  => $lifeline_e2e_events,
	)
) . "\n";
