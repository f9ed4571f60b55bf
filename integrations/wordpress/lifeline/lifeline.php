<?php
/**
 * Plugin Name:       Lifeline Short Links
 * Description:       Gives every published post its one Lifeline short link, kept pointing at the post when its permalink changes.
 * Version:           1.3.0
 * Requires at least: 5.6
 * Requires PHP:      7.4
 * Author:            Lifeline
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       lifeline
 * Domain Path:       /languages
 * Update URI:        false
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

define( 'LIFELINE_PLUGIN_VERSION', '1.3.0' );
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
require_once __DIR__ . '/includes/class-lifeline-network.php';

// Activation and deactivation run per site; network-wide on a multisite network (Lifeline_Network).
register_activation_hook( __FILE__, array( 'Lifeline_Network', 'activate' ) );
register_deactivation_hook( __FILE__, array( 'Lifeline_Network', 'deactivate' ) );

Lifeline_Outbox::init();
Lifeline_Events::init();
Lifeline_Shortlink::init();
Lifeline_Settings::init();
Lifeline_Backfill_Cron::init();
Lifeline_Backfill_Page::init();
Lifeline_Listing::init();
Lifeline_Site_Events::init();
Lifeline_Network::init();

if ( defined( 'WP_CLI' ) && WP_CLI ) {
	require_once __DIR__ . '/includes/class-lifeline-cli-command.php';
	WP_CLI::add_command( 'lifeline', 'Lifeline_CLI_Command' );
}
