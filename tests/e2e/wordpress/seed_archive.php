<?php
// Seeds this run's WordPress with an archive written before the plugin arrived (tests only):
// `php seed_archive.php <published count>`. Published posts get dates spread over 2019–2025 in an order unlike
// their IDs (the backfill orders by ID, --since filters by date); drafts, pending, private and scheduled posts
// sit between them; a page, an auto-draft and a revision exist too. A few posts carry a Bitly link in `_wpbitly`
// (WP Bitly's meta key) or in `e2e_legacy_short_url` (read by lifeline-e2e.php's `lifeline_known_short_url`
// filter), one a broken `_wpbitly`, one an `&` in its title. The plugin's event hook is removed first: these
// posts predate it. Prints one JSON line describing what was made.
require __DIR__ . '/cli_boot.php';
remove_action( 'wp_after_insert_post', array( 'Lifeline_Events', 'on_after_insert_post' ), 10 );
wp_defer_term_counting( true );

$lifeline_e2e_count = max( 1, (int) ( $argv[1] ?? 250 ) );
$lifeline_e2e_made  = array(
	'published'   => array(),
	'draft'       => array(),
	'pending'     => array(),
	'private'     => array(),
	'future'      => array(),
	'page'        => 0,
	'autoDraft'   => 0,
	'revisions'   => array(),
	'knownShort'  => array(),
	'brokenShort' => 0,
	'ampersand'   => 0,
);

/** Inserts one post or dies loudly. */
function lifeline_e2e_insert( array $post ): int {
	$id = wp_insert_post( $post, true );
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, 'insert failed: ' . $id->get_error_message() . "\n" );
		exit( 1 );
	}
	return (int) $id;
}

$lifeline_e2e_statuses = array( 'draft', 'pending', 'private', 'future' );
for ( $i = 0; $i < $lifeline_e2e_count; $i++ ) {
	// 2,555 days from 2019-01-01, visited in a scrambled order.
	$day   = ( $i * 7919 ) % 2555;
	$date  = gmdate( 'Y-m-d H:i:s', strtotime( '2019-01-01 08:00:00 UTC' ) + $day * DAY_IN_SECONDS + $i * 37 );
	$title = 0 === $i % 10 ? 'أرشيف الأخبار رقم ' . $i : 'Archive story ' . $i;
	if ( 3 === $i ) {
		$title = 'Q&A: Tom & Jerry';
	}
	$id = lifeline_e2e_insert(
		array(
			'post_title'    => $title,
			'post_content'  => '<p>From the archive.</p>',
			'post_status'   => 'publish',
			'post_date'     => $date,
			'post_date_gmt' => $date,
		)
	);
	$lifeline_e2e_made['published'][] = array(
		'id'        => $id,
		'date'      => str_replace( ' ', 'T', $date ) . 'Z',
		'permalink' => get_permalink( $id ),
		'title'     => html_entity_decode( get_post( $id )->post_title, ENT_QUOTES | ENT_HTML5, 'UTF-8' ),
	);
	if ( 3 === $i ) {
		$lifeline_e2e_made['ampersand'] = $id;
	}
	if ( 5 === $i % 40 ) {
		update_post_meta( $id, '_wpbitly', 'https://bit.ly/lf' . $id );
		$lifeline_e2e_made['knownShort'][ $id ] = 'https://bit.ly/lf' . $id;
	}
	if ( 17 === $i ) {
		update_post_meta( $id, 'e2e_legacy_short_url', 'https://sho.rt/legacy' . $id );
		$lifeline_e2e_made['knownShort'][ $id ] = 'https://sho.rt/legacy' . $id;
	}
	if ( 18 === $i ) {
		update_post_meta( $id, '_wpbitly', 'not a url' );
		$lifeline_e2e_made['brokenShort'] = $id;
	}
	if ( 0 === $i % 25 ) {
		// Not published: between the published posts, so the backfill must skip them, not stop at them.
		$status = $lifeline_e2e_statuses[ ( $i / 25 ) % 4 ];
		$when   = 'future' === $status ? '2031-06-01 09:00:00' : $date;
		$lifeline_e2e_made[ $status ][] = lifeline_e2e_insert(
			array(
				'post_title'    => ucfirst( $status ) . ' ' . $i,
				'post_content'  => '<p>Not public.</p>',
				'post_status'   => $status,
				'post_date'     => $when,
				'post_date_gmt' => $when,
			)
		);
	}
}
$lifeline_e2e_made['page']      = lifeline_e2e_insert(
	array(
		'post_type'   => 'page',
		'post_title'  => 'About us',
		'post_status' => 'publish',
	)
);
$lifeline_e2e_made['autoDraft'] = lifeline_e2e_insert(
	array(
		'post_title'  => 'Auto Draft',
		'post_status' => 'auto-draft',
	)
);
// An edit of a published post leaves a revision (post type "revision", status "inherit").
$lifeline_e2e_edited = $lifeline_e2e_made['published'][1]['id'];
wp_update_post(
	array(
		'ID'           => $lifeline_e2e_edited,
		'post_content' => '<p>From the archive, corrected.</p>',
	)
);
$lifeline_e2e_made['revisions'] = array_map( 'intval', array_keys( wp_get_post_revisions( $lifeline_e2e_edited ) ) );
wp_defer_term_counting( false );
echo wp_json_encode( $lifeline_e2e_made, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) . "\n";
