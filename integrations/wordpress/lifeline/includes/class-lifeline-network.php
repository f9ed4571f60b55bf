<?php
/**
 * Activation, deactivation and translations, on a single site and on a multisite network. Each blog of a network
 * is its own Lifeline site: its own settings, outbox table, WP-Cron events, installation id and site id
 * (Lifeline_Config::site_id()). Network activation sets every blog up; blogs beyond the first
 * NETWORK_SETUP_LIMIT, and blogs made later, set themselves up on their first request (the outbox's
 * maybe_install() on plugins_loaded, the installation id on first use), so activating on a large network never
 * runs into a time limit.
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** Per-site setup and teardown, looped over the blogs of a network. */
final class Lifeline_Network {

	/** Blogs set up during a network activation; the rest set themselves up on their first request. */
	const NETWORK_SETUP_LIMIT = 100;

	public static function init(): void {
		// Early on init, before anything of this plugin translates (the outbox's schedule name on init).
		add_action( 'init', array( __CLASS__, 'load_textdomain' ), 1 );
		// A blog created while the plugin is network-active is set up at once (WordPress 5.1+).
		add_action( 'wp_initialize_site', array( __CLASS__, 'on_new_site' ), 200 );
		// Deleting a blog drops its outbox table with its other tables.
		add_filter( 'wpmu_drop_tables', array( __CLASS__, 'drop_tables' ), 10, 2 );
	}

	/**
	 * The plugin's own translations (languages/); a language pack in WP_LANG_DIR/plugins, when present, is
	 * loaded first and wins.
	 */
	public static function load_textdomain(): void {
		load_plugin_textdomain( 'lifeline', false, dirname( plugin_basename( LIFELINE_PLUGIN_FILE ) ) . '/languages' );
	}

	/**
	 * Activation hook. `$network_wide` is true for "Network Activate" on a multisite network.
	 *
	 * @param bool $network_wide Whether the plugin is being activated for every blog of the network.
	 */
	public static function activate( $network_wide = false ): void {
		if ( is_multisite() && $network_wide ) {
			self::each_site( array( __CLASS__, 'setup_site' ), self::NETWORK_SETUP_LIMIT );
			return;
		}
		self::setup_site();
	}

	/**
	 * Deactivation hook: the scheduled events of every blog it was active on go (the queued events stay in the
	 * outbox table for a later activation).
	 *
	 * @param bool $network_wide Whether the plugin is being deactivated for the whole network.
	 */
	public static function deactivate( $network_wide = false ): void {
		if ( is_multisite() && $network_wide ) {
			self::each_site( array( __CLASS__, 'teardown_site' ), 0 );
			return;
		}
		self::teardown_site();
	}

	/** One site's setup: the outbox table, its WP-Cron event and this installation's id. */
	public static function setup_site(): void {
		Lifeline_Outbox::activate();
		Lifeline_Config::installation_id();
	}

	public static function teardown_site(): void {
		Lifeline_Outbox::deactivate();
		Lifeline_Backfill_Cron::deactivate();
	}

	/**
	 * `wp_initialize_site`: a new blog of a network where the plugin is network-active.
	 *
	 * @param WP_Site $site The new blog.
	 */
	public static function on_new_site( $site ): void {
		if ( ! $site instanceof WP_Site || ! self::is_network_active() ) {
			return;
		}
		switch_to_blog( (int) $site->blog_id );
		try {
			self::setup_site();
		} finally {
			restore_current_blog();
		}
	}

	/**
	 * `wpmu_drop_tables`: the blog's outbox table goes with it.
	 *
	 * @param string[] $tables  Tables WordPress drops for the blog.
	 * @param int      $blog_id The blog being deleted.
	 * @return string[]
	 */
	public static function drop_tables( $tables, $blog_id ): array {
		global $wpdb;
		$tables   = (array) $tables;
		$tables[] = $wpdb->get_blog_prefix( (int) $blog_id ) . 'lifeline_outbox';
		return $tables;
	}

	public static function is_network_active(): bool {
		if ( ! is_multisite() ) {
			return false;
		}
		if ( ! function_exists( 'is_plugin_active_for_network' ) ) {
			require_once ABSPATH . 'wp-admin/includes/plugin.php';
		}
		return is_plugin_active_for_network( plugin_basename( LIFELINE_PLUGIN_FILE ) );
	}

	/**
	 * Runs `$callback` in the context of each blog of the current network (at most `$limit` blogs; 0: all).
	 *
	 * @param callable $callback Called with no arguments while switched to each blog.
	 * @param int      $limit    The most blogs to visit, 0 for all.
	 */
	public static function each_site( callable $callback, int $limit ): void {
		$ids = get_sites(
			array(
				'fields'     => 'ids',
				'network_id' => get_current_network_id(),
				'number'     => $limit > 0 ? $limit : 0,
				'orderby'    => 'id',
			)
		);
		foreach ( $ids as $blog_id ) {
			switch_to_blog( (int) $blog_id );
			try {
				call_user_func( $callback );
			} finally {
				restore_current_blog();
			}
		}
	}
}
