<?php
/**
 * Plugin Name:       Lifeline Short Links
 * Description:       Gives every published post its one Lifeline short link: signed publish / update / unpublish webhooks that are queued and retried until Lifeline has them, wp_get_shortlink() returning the Lifeline link, the link shown in the post editor, an archive backfill (WP-CLI or the settings page), a signed post listing for reconciliation and an event when the permalink structure or home URL changes. Each post keeps its short link's code, so a move to a new WordPress keeps every link on its own article.
 * Version:           1.2.0
 * Requires at least: 5.6
 * Requires PHP:      7.4
 * Author:            Lifeline
 * Text Domain:       lifeline
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

define( 'LIFELINE_PLUGIN_VERSION', '1.2.0' );
define( 'LIFELINE_PLUGIN_FILE', __FILE__ );

require_once __DIR__ . '/includes/class-lifeline-config.php';
require_once __DIR__ . '/includes/class-lifeline-client.php';
require_once __DIR__ . '/includes/class-lifeline-outbox.php';
require_once __DIR__ . '/includes/class-lifeline-events.php';
require_once __DIR__ . '/includes/class-lifeline-shortlink.php';
require_once __DIR__ . '/includes/class-lifeline-settings.php';
require_once __DIR__ . '/includes/class-lifeline-post-fields.php';
require_once __DIR__ . '/includes/class-lifeline-post-code.php';
require_once __DIR__ . '/includes/class-lifeline-signature.php';
require_once __DIR__ . '/includes/class-lifeline-backfill.php';
require_once __DIR__ . '/includes/class-lifeline-backfill-cron.php';
require_once __DIR__ . '/includes/class-lifeline-backfill-page.php';
require_once __DIR__ . '/includes/class-lifeline-listing.php';
require_once __DIR__ . '/includes/class-lifeline-site-events.php';

register_activation_hook( __FILE__, array( 'Lifeline_Outbox', 'activate' ) );
// The installation id is made at activation (or on first use by an older activation), once per WordPress.
register_activation_hook( __FILE__, array( 'Lifeline_Config', 'installation_id' ) );
register_deactivation_hook( __FILE__, array( 'Lifeline_Outbox', 'deactivate' ) );
register_deactivation_hook( __FILE__, array( 'Lifeline_Backfill_Cron', 'deactivate' ) );

Lifeline_Outbox::init();
Lifeline_Events::init();
Lifeline_Shortlink::init();
Lifeline_Settings::init();
Lifeline_Backfill_Cron::init();
Lifeline_Backfill_Page::init();
Lifeline_Listing::init();
Lifeline_Site_Events::init();

if ( defined( 'WP_CLI' ) && WP_CLI ) {
	require_once __DIR__ . '/includes/class-lifeline-cli-command.php';
	WP_CLI::add_command( 'lifeline', 'Lifeline_CLI_Command' );
}
