<?php
// Seeds the newsroom that is about to move (tests only): `php seed_newsroom.php <published count> [<first
// index>]` (the index numbers titles, so two calls make distinct posts). Published
// posts alternate Arabic and Latin titles (so slugs are percent-encoded Arabic or plain Latin), dated over
// 2020–2025; drafts and posts already in the trash sit between them; two published posts share one title (the
// ambiguous pair a move can lose track of). The plugin's event hook is removed first: these posts predate it and
// get their links from the backfill. Prints one JSON line: every post made, with its ID, status, title, slug.
require __DIR__ . '/cli_boot.php';
remove_action( 'wp_after_insert_post', array( 'Lifeline_Events', 'on_after_insert_post' ), 10 );
wp_defer_term_counting( true );

$lifeline_e2e_first = (int) ( $argv[2] ?? 0 );
$lifeline_e2e_count = $lifeline_e2e_first + max( 1, (int) ( $argv[1] ?? 500 ) );
$lifeline_e2e_made  = array();

/** Inserts one post or dies loudly; returns what the test needs to know about it. */
function lifeline_e2e_seed( array $post ): array {
	$id = wp_insert_post( $post, true );
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, 'insert failed: ' . $id->get_error_message() . "\n" );
		exit( 1 );
	}
	$saved = get_post( $id );
	return array(
		'id'     => (int) $id,
		'status' => $saved->post_status,
		'title'  => $saved->post_title,
		'slug'   => $saved->post_name,
	);
}

for ( $i = $lifeline_e2e_first; $i < $lifeline_e2e_count; $i++ ) {
	$date  = gmdate( 'Y-m-d H:i:s', strtotime( '2020-01-01 06:00:00 UTC' ) + ( ( $i * 4513 ) % 2190 ) * DAY_IN_SECONDS + $i * 61 );
	$title = 0 === $i % 2 ? 'تقرير الأخبار المحلية رقم ' . $i : 'Local news report ' . $i;
	if ( 7 === $i || 8 === $i ) {
		$title = 'Live: the count';
	}
	$lifeline_e2e_made[] = lifeline_e2e_seed(
		array(
			'post_title'    => $title,
			'post_content'  => '<p>Story ' . $i . '.</p>',
			'post_status'   => 'publish',
			'post_date'     => $date,
			'post_date_gmt' => $date,
		)
	);
	if ( 0 === $i % 25 ) {
		$lifeline_e2e_made[] = lifeline_e2e_seed(
			array(
				'post_title'   => 'Draft ' . $i,
				'post_content' => '<p>Not public.</p>',
				'post_status'  => 'draft',
			)
		);
	}
	if ( 12 === $i % 100 ) {
		// Published once, then trashed before the plugin came: it never had a link.
		$gone = lifeline_e2e_seed(
			array(
				'post_title'    => 'Withdrawn story ' . $i,
				'post_content'  => '<p>Withdrawn.</p>',
				'post_status'   => 'publish',
				'post_date'     => $date,
				'post_date_gmt' => $date,
			)
		);
		wp_trash_post( $gone['id'] );
		$gone['status']      = 'trash';
		$lifeline_e2e_made[] = $gone;
	}
}
wp_defer_term_counting( false );
echo wp_json_encode( $lifeline_e2e_made, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) . "\n";
