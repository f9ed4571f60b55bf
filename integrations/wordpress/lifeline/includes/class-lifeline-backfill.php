<?php
/**
 * Archive backfill (CONTRACT.md §1–2): every post that was already published before the plugin arrived is sent
 * to Lifeline in signed batches, in post ID order, so it gets its one short link. The run's state (its id, the
 * last post ID Lifeline acknowledged, counters, times) lives in the `lifeline_backfill` option, written after
 * every acknowledged batch, so a run that dies at any point (a killed process, a PHP time limit, a crash)
 * continues from the cursor; at most the one unacknowledged batch is sent twice, which Lifeline dedupes by post.
 * WP-CLI (Lifeline_CLI_Command) and WP-Cron (Lifeline_Backfill_Cron) both drive a run through step().
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** One backfill run: selection, batches, delivery and the resumable state. */
final class Lifeline_Backfill {

	const OPTION             = 'lifeline_backfill';
	const PATH               = '/api/v1/hooks/wordpress/backfill';
	const DEFAULT_BATCH_SIZE = 100;
	const MAX_BATCH_SIZE     = 500;
	/** Seconds one batch may take: Lifeline answers a batch of 500 after writing it durably. */
	const SEND_TIMEOUT = 30;
	/** A Retry-After longer than this is capped: a misconfigured proxy must not park a run for days. */
	const MAX_RETRY_AFTER = 3600;
	/** The failed posts kept in the state for the status screens. */
	const KEPT_FAILURES = 20;
	/** Meta keys other plugins keep a post's Bitly link under: WP Bitly (`_wpbitly`), Bitly URL Generator and Alley's Bit.ly (`bitly_url`). */
	const KNOWN_SHORT_URL_META_KEYS = array( '_wpbitly', 'bitly_url' );

	/**
	 * A new run over the published archive. Its upper bound is the highest matching post ID now, so the run has
	 * a fixed total; a post published later gets its link from its own post.published event.
	 *
	 * @param string $since      '' or YYYY-MM-DD: only posts published on or after that day (GMT).
	 * @param int    $batch_size 1..500 posts per request.
	 * @param string $mode       'cli' or 'cron': who drives it.
	 * @param bool   $dry_run    Lifeline changes nothing and the run is never saved.
	 */
	public static function new_run( string $since, int $batch_size, string $mode, bool $dry_run ): array {
		$max_id = self::max_post_id( $since );
		$now    = self::now();
		return array(
			'run_id'        => wp_generate_uuid4(),
			'status'        => 'running',
			'mode'          => $mode,
			'dry_run'       => $dry_run,
			'since'         => $since,
			'batch_size'    => $batch_size,
			'max_id'        => $max_id,
			'total'         => self::count_posts( $since, $max_id ),
			'cursor'        => 0,
			'batch'         => 0,
			'sent'          => 0,
			'minted'        => 0,
			'kept'          => 0,
			'adopted'       => 0,
			'failed'        => 0,
			'outcomes'      => array(),
			'failures'      => array(),
			'attempts'      => 0,
			'last_error'    => '',
			'last_error_at' => null,
			'next_try_at'   => null,
			'started_at'    => $now,
			'updated_at'    => $now,
			'finished_at'   => null,
		);
	}

	/** The saved run, read from the database (another process may have written it: WP-CLI, WP-Cron, the Stop button). */
	public static function get_state(): ?array {
		global $wpdb;
		$raw   = $wpdb->get_var( $wpdb->prepare( "SELECT option_value FROM {$wpdb->options} WHERE option_name = %s", self::OPTION ) );
		$state = null === $raw ? null : maybe_unserialize( $raw );
		return is_array( $state ) && isset( $state['run_id'], $state['status'] ) ? $state : null;
	}

	/**
	 * Saves the run; a dry run is never saved. A "stopped" written meanwhile by the settings page (which does not
	 * take the run lock) wins over this process's "running", unless `$force` (the page itself resuming).
	 *
	 * @return array The run as saved.
	 */
	public static function save_state( array $run, bool $force = false ): array {
		if ( ! empty( $run['dry_run'] ) ) {
			return $run;
		}
		if ( ! $force && 'running' === $run['status'] ) {
			$current = self::get_state();
			if ( $current && $current['run_id'] === $run['run_id'] && 'stopped' === $current['status'] ) {
				$run['status'] = 'stopped';
			}
		}
		$run['updated_at'] = self::now();
		unset( $run['dry_run'] );
		update_option( self::OPTION, $run, false );
		$run['dry_run'] = false;
		return $run;
	}

	public static function delete_state(): void {
		delete_option( self::OPTION );
	}

	/** True when a run is neither finished nor absent: the next start continues it. */
	public static function is_unfinished( ?array $state ): bool {
		return null !== $state && 'finished' !== $state['status'];
	}

	/**
	 * Sends the run's next batch once and advances `$run` when Lifeline acknowledges it (the caller saves it).
	 * Returns [ 'result' => 'sent'|'done'|'wait'|'retry'|'fatal', 'seconds' => int (wait), 'error' => string,
	 * 'status' => int HTTP status, 'batch' => array|null ]:
	 *   sent   Lifeline took the batch (202); `$run` has the new cursor, counters and maybe status "finished";
	 *   done   the run had already finished;
	 *   wait   Lifeline asked to wait (429/503 + Retry-After): send the same batch again after `seconds`;
	 *   retry  a transient failure (connection, timeout, 5xx, 429/503 without Retry-After): back off, try again;
	 *   fatal  retrying cannot help (401 signature, 400 body, 404 no such endpoint…): a person must look.
	 */
	public static function step( array &$run ): array {
		if ( 'finished' === $run['status'] ) {
			return array( 'result' => 'done', 'seconds' => 0, 'error' => '', 'status' => 0, 'batch' => null );
		}
		$batch   = self::next_batch( $run );
		$payload = self::build_payload( $run, $batch );
		$answer  = self::send( $payload );
		if ( 'ok' !== $answer['result'] ) {
			$run['attempts']      = (int) $run['attempts'] + 1;
			$run['last_error']    = $answer['error'];
			$run['last_error_at'] = self::now();
			return array(
				'result'  => $answer['result'],
				'seconds' => $answer['retry_after'],
				'error'   => $answer['error'],
				'status'  => $answer['status'],
				'batch'   => $batch,
			);
		}
		$run['cursor']      = $batch['last_id'];
		$run['batch']       = $batch['number'];
		$run['sent']        = (int) $run['sent'] + count( $batch['posts'] );
		$run['attempts']    = 0;
		$run['next_try_at'] = null;
		self::tally( $run, $answer['results'] );
		if ( ! empty( $answer['bitly'] ) ) {
			$run['bitly_creates'] = (int) ( $run['bitly_creates'] ?? 0 ) + (int) ( $answer['bitly']['creates'] ?? 0 );
			$run['bitly']         = $answer['bitly'];
		}
		if ( empty( $run['dry_run'] ) ) {
			self::remember_codes( $batch, $answer['results'] );
		}
		if ( $batch['final'] ) {
			$run['status']      = 'finished';
			$run['finished_at'] = self::now();
		}
		return array( 'result' => 'sent', 'seconds' => 0, 'error' => '', 'status' => $answer['status'], 'batch' => $batch );
	}

	/**
	 * The batch after the cursor: up to batch_size published posts, ID ascending; `final` when no matching post
	 * is left after it (one more row is read to know). An empty archive is one empty, final batch, which closes
	 * the run on Lifeline's side too.
	 */
	public static function next_batch( array $run ): array {
		$size  = (int) $run['batch_size'];
		$ids   = self::select_ids( (string) $run['since'], (int) $run['cursor'], (int) $run['max_id'], $size + 1 );
		$final = count( $ids ) <= $size;
		$ids   = array_slice( $ids, 0, $size );
		if ( $ids ) {
			_prime_post_caches( $ids, false, true );
		}
		$posts = array();
		foreach ( $ids as $id ) {
			$post = get_post( $id );
			if ( $post instanceof WP_Post ) {
				$posts[] = self::to_batch_post( $post );
			}
		}
		self::release_memory();
		return array(
			'number'  => (int) $run['batch'] + 1,
			'final'   => $final,
			'posts'   => $posts,
			'last_id' => $ids ? (int) end( $ids ) : (int) $run['cursor'],
		);
	}

	/**
	 * Empties the in-memory object cache after a batch is built: a run over 100,000 posts in one WP-CLI process
	 * would otherwise keep every post and its meta there until PHP's memory limit. A persistent object cache
	 * (Redis, Memcached) is left alone unless it can drop its in-memory layer only.
	 */
	private static function release_memory(): void {
		if ( function_exists( 'wp_cache_supports' ) && function_exists( 'wp_cache_flush_runtime' ) ) {
			if ( wp_cache_supports( 'flush_runtime' ) ) {
				wp_cache_flush_runtime();
			}
			return;
		}
		if ( ! wp_using_ext_object_cache() ) {
			wp_cache_flush();
		}
	}

	/** The request body (CONTRACT.md §1). */
	public static function build_payload( array $run, array $batch ): array {
		return array(
			'id'             => $run['run_id'] . ':' . $batch['number'],
			'run'            => $run['run_id'],
			'site'           => Lifeline_Config::site_id(),
			'installationId' => Lifeline_Config::installation_id(),
			'batch'          => $batch['number'],
			'dryRun'         => ! empty( $run['dry_run'] ),
			'final'          => $batch['final'],
			'total'          => (int) $run['total'],
			'restUrl'        => rest_url( 'lifeline/v1/' ),
			'posts'          => $batch['posts'],
		);
	}

	public static function to_batch_post( WP_Post $post ): array {
		$entry = array(
			'postId'      => (int) $post->ID,
			'permalink'   => (string) get_permalink( $post ),
			'title'       => Lifeline_Post_Fields::title( $post ),
			'publishedAt' => Lifeline_Post_Fields::published_at( $post ),
			'modifiedAt'  => Lifeline_Post_Fields::modified_at( $post ),
		);
		$known = self::get_known_short_url( $post );
		if ( null !== $known ) {
			$entry['knownShortUrl'] = $known;
		}
		// Our own claim (`_lifeline_code`, or `_lifeline_short_url` that a WXR import carried) and the GUID.
		return Lifeline_Post_Code::add_identity( $entry, $post );
	}

	/**
	 * A short URL the post already has elsewhere (a Bitly link made by an earlier plugin), so Lifeline can adopt
	 * its back-half instead of minting a new one. Read from the meta keys of filter
	 * `lifeline_known_short_url_meta_keys` (default `_wpbitly`, `bitly_url`), then filter `lifeline_known_short_url`
	 * ( ?string $url, WP_Post $post ) lets a site supply or veto it. Only an absolute http(s) URL is sent: anything
	 * else would make Lifeline refuse the whole batch.
	 */
	public static function get_known_short_url( WP_Post $post ): ?string {
		$url = null;
		foreach ( (array) apply_filters( 'lifeline_known_short_url_meta_keys', self::KNOWN_SHORT_URL_META_KEYS ) as $key ) {
			$value = get_post_meta( $post->ID, (string) $key, true );
			if ( is_string( $value ) && '' !== trim( $value ) ) {
				$url = trim( $value );
				break;
			}
		}
		$url = apply_filters( 'lifeline_known_short_url', $url, $post );
		if ( ! is_string( $url ) || '' === $url || strlen( $url ) > 2048 ) {
			return null;
		}
		if ( ! preg_match( '#^https?://#i', $url ) || false === filter_var( $url, FILTER_VALIDATE_URL ) ) {
			return null;
		}
		return $url;
	}

	/**
	 * POSTs one signed batch. Returns [ 'result' => 'ok'|'wait'|'retry'|'fatal', 'status' => int, 'error' =>
	 * string, 'retry_after' => int seconds, 'results' => array ]. Signed at send time, so a batch resent after a
	 * Retry-After carries a fresh timestamp.
	 */
	public static function send( array $payload ): array {
		$body = wp_json_encode( $payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE );
		if ( false === $body ) {
			return self::answer( 'fatal', 0, 'the batch could not be encoded as JSON' );
		}
		$response = wp_remote_post(
			Lifeline_Config::endpoint() . self::PATH,
			array(
				'timeout'            => (int) apply_filters( 'lifeline_backfill_timeout', self::SEND_TIMEOUT ),
				'redirection'        => 0,
				// As for the events: the endpoint is set by an administrator and often on a private network.
				'reject_unsafe_urls' => false,
				'headers'            => array(
					'Content-Type'         => 'application/json; charset=utf-8',
					'Accept'               => 'application/json',
					'User-Agent'           => 'Lifeline-WordPress/' . LIFELINE_PLUGIN_VERSION . '; ' . home_url( '/' ),
					'X-Lifeline-Signature' => Lifeline_Client::sign( $body, Lifeline_Config::secret(), time(), Lifeline_Signature::KIND_BACKFILL ),
				),
				'body'               => $body,
			)
		);
		if ( is_wp_error( $response ) ) {
			return self::answer( 'retry', 0, 'Lifeline is unreachable: ' . $response->get_error_message() );
		}
		$status = (int) wp_remote_retrieve_response_code( $response );
		$json   = json_decode( (string) wp_remote_retrieve_body( $response ), true );
		if ( $status >= 200 && $status < 300 ) {
			$answer            = self::answer( 'ok', $status, '' );
			$answer['results'] = is_array( $json ) && isset( $json['results'] ) && is_array( $json['results'] ) ? $json['results'] : array();
			// A dry run's Bitly budget (CONTRACT.md §1), when Lifeline has Bitly configured.
			$answer['bitly'] = is_array( $json ) && isset( $json['bitly'] ) && is_array( $json['bitly'] ) ? $json['bitly'] : null;
			return $answer;
		}
		$detail = is_array( $json ) && isset( $json['detail'] ) ? (string) $json['detail'] : (string) wp_remote_retrieve_response_message( $response );
		$error  = sprintf( 'HTTP %d: %s', $status, substr( $detail, 0, 300 ) );
		if ( 429 === $status || 503 === $status ) {
			$retry_after = self::parse_retry_after( (string) wp_remote_retrieve_header( $response, 'retry-after' ) );
			return null === $retry_after ? self::answer( 'retry', $status, $error ) : self::answer( 'wait', $status, $error, $retry_after );
		}
		if ( 408 === $status || $status >= 500 ) {
			return self::answer( 'retry', $status, $error );
		}
		if ( 401 === $status ) {
			$error .= ' (check the webhook secret and this server\'s clock)';
		}
		return self::answer( 'fatal', $status, $error );
	}

	/**
	 * Retry-After in seconds (delta-seconds or an HTTP date), at least 1 and at most MAX_RETRY_AFTER; null when
	 * absent or unreadable.
	 */
	public static function parse_retry_after( string $value ): ?int {
		$value = trim( $value );
		if ( '' === $value ) {
			return null;
		}
		if ( ctype_digit( $value ) ) {
			$seconds = (int) $value;
		} else {
			$at = strtotime( $value );
			if ( false === $at ) {
				return null;
			}
			$seconds = $at - time();
		}
		return max( 1, min( self::MAX_RETRY_AFTER, $seconds ) );
	}

	/** Counts the server's per-post outcomes; anything but minted / kept / adopted (or their dry-run "would-") is a failure. */
	private static function tally( array &$run, array $results ): void {
		$buckets = array(
			'minted'      => 'minted',
			'would-mint'  => 'minted',
			'kept'        => 'kept',
			'would-keep'  => 'kept',
			'adopted'     => 'adopted',
			'would-adopt' => 'adopted',
		);
		foreach ( $results as $result ) {
			if ( ! is_array( $result ) ) {
				continue;
			}
			$outcome                     = isset( $result['outcome'] ) ? substr( (string) $result['outcome'], 0, 40 ) : 'unknown';
			$run['outcomes'][ $outcome ] = ( $run['outcomes'][ $outcome ] ?? 0 ) + 1;
			if ( isset( $buckets[ $outcome ] ) ) {
				$run[ $buckets[ $outcome ] ] = (int) $run[ $buckets[ $outcome ] ] + 1;
				continue;
			}
			$run['failed']     = (int) $run['failed'] + 1;
			$run['failures'][] = array(
				'postId'  => isset( $result['postId'] ) ? (int) $result['postId'] : 0,
				'outcome' => $outcome,
			);
			$run['failures'] = array_slice( $run['failures'], -self::KEPT_FAILURES );
		}
	}

	/**
	 * Keeps each post's code from Lifeline's answer in `_lifeline_code`, so the code travels with the post (an
	 * export carries it). Only for posts of this batch, and never over a different code the post already claims.
	 */
	private static function remember_codes( array $batch, array $results ): void {
		$in_batch = array();
		foreach ( $batch['posts'] as $entry ) {
			$in_batch[ (int) $entry['postId'] ] = true;
		}
		foreach ( $results as $result ) {
			if ( is_array( $result ) && isset( $result['postId'], $result['code'] ) && is_string( $result['code'] )
				&& isset( $in_batch[ (int) $result['postId'] ] ) ) {
				Lifeline_Post_Code::remember( (int) $result['postId'], $result['code'] );
			}
		}
	}

	/** Published posts of the configured types after `$after_id` and up to `$max_id`, ID ascending. */
	private static function select_ids( string $since, int $after_id, int $max_id, int $limit ): array {
		global $wpdb;
		list( $where, $args ) = self::where( $since );
		if ( null === $where ) {
			return array();
		}
		$args[] = $after_id;
		$args[] = $max_id;
		$args[] = $limit;
		return array_map(
			'intval',
			$wpdb->get_col( $wpdb->prepare( "SELECT ID FROM {$wpdb->posts} WHERE {$where} AND ID > %d AND ID <= %d ORDER BY ID ASC LIMIT %d", $args ) )
		);
	}

	private static function max_post_id( string $since ): int {
		global $wpdb;
		list( $where, $args ) = self::where( $since );
		if ( null === $where ) {
			return 0;
		}
		return (int) $wpdb->get_var( $wpdb->prepare( "SELECT MAX(ID) FROM {$wpdb->posts} WHERE {$where}", $args ) );
	}

	private static function count_posts( string $since, int $max_id ): int {
		global $wpdb;
		list( $where, $args ) = self::where( $since );
		if ( null === $where ) {
			return 0;
		}
		$args[] = $max_id;
		return (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$wpdb->posts} WHERE {$where} AND ID <= %d", $args ) );
	}

	/**
	 * The shared WHERE: published posts of the configured types (drafts, pending, private and scheduled posts
	 * never), published on or after `$since` (GMT) when given. [ null, [] ] when no post type is configured.
	 */
	private static function where( string $since ): array {
		$types = array_values( array_filter( array_map( 'strval', Lifeline_Config::post_types() ) ) );
		if ( ! $types ) {
			return array( null, array() );
		}
		$where = 'post_type IN (' . implode( ',', array_fill( 0, count( $types ), '%s' ) ) . ") AND post_status = 'publish'";
		$args  = $types;
		if ( '' !== $since ) {
			$where .= ' AND post_date_gmt >= %s';
			$args[] = $since . ' 00:00:00';
		}
		return array( $where, $args );
	}

	/** '' when `$value` is a real calendar day written YYYY-MM-DD, otherwise why not. */
	public static function check_since( string $value ): string {
		if ( ! preg_match( '/^(\d{4})-(\d{2})-(\d{2})$/', $value, $m ) || ! checkdate( (int) $m[2], (int) $m[3], (int) $m[1] ) ) {
			return sprintf( 'since must be a day written YYYY-MM-DD, not "%s"', $value );
		}
		return '';
	}

	/** '' when `$value` is a whole number from 1 to 500, otherwise why not. */
	public static function check_batch_size( string $value ): string {
		if ( ! preg_match( '/^\d{1,4}$/', $value ) || (int) $value < 1 || (int) $value > self::MAX_BATCH_SIZE ) {
			return sprintf( 'batch size must be a whole number from 1 to %d, not "%s"', self::MAX_BATCH_SIZE, $value );
		}
		return '';
	}

	/**
	 * One run at a time, across WP-CLI and WP-Cron: a MySQL named lock, which the server releases when the
	 * holder's connection ends, so a killed process never leaves a run locked.
	 */
	public static function lock(): bool {
		global $wpdb;
		return '1' === (string) $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, 0)', self::lock_name() ) );
	}

	public static function unlock(): void {
		global $wpdb;
		$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', self::lock_name() ) );
	}

	/** True while some process (this one included) holds the run lock. */
	public static function is_locked(): bool {
		global $wpdb;
		return '0' === (string) $wpdb->get_var( $wpdb->prepare( 'SELECT IS_FREE_LOCK(%s)', self::lock_name() ) );
	}

	private static function lock_name(): string {
		global $wpdb;
		return 'lifeline_backfill_' . md5( DB_NAME . '|' . $wpdb->prefix );
	}

	/** UTC now, ISO 8601 to the second. */
	public static function now(): string {
		return gmdate( 'Y-m-d\TH:i:s\Z' );
	}

	private static function answer( string $result, int $status, string $error, int $retry_after = 0 ): array {
		return array(
			'result'      => $result,
			'status'      => $status,
			'error'       => $error,
			'retry_after' => $retry_after,
			'results'     => array(),
		);
	}
}
