<?php
/**
 * Settings → Lifeline: the Lifeline URL, this site's id, the webhook secret, an API key and the short link
 * domain; the outbox's state (queued and refused events) with "Send queued events now", "Test connection" and
 * "Ask Lifeline to check every post".
 *
 * @package Lifeline
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/** The settings page. */
final class Lifeline_Settings {

	const PAGE = 'lifeline';

	public static function init(): void {
		add_action( 'admin_menu', array( __CLASS__, 'add_page' ) );
		add_action( 'admin_init', array( __CLASS__, 'register' ) );
		add_action( 'admin_post_lifeline_flush', array( __CLASS__, 'handle_flush' ) );
		add_action( 'admin_post_lifeline_test', array( __CLASS__, 'handle_test' ) );
		add_action( 'admin_post_lifeline_reconcile', array( __CLASS__, 'handle_reconcile' ) );
		add_action( 'admin_notices', array( __CLASS__, 'notices' ) );
	}

	public static function add_page(): void {
		add_options_page( __( 'Lifeline short links', 'lifeline' ), __( 'Lifeline', 'lifeline' ), 'manage_options', self::PAGE, array( __CLASS__, 'render' ) );
	}

	public static function register(): void {
		register_setting(
			self::PAGE,
			Lifeline_Config::OPTION_ENDPOINT,
			array( 'type' => 'string', 'sanitize_callback' => array( __CLASS__, 'sanitize_endpoint' ), 'default' => '' )
		);
		register_setting(
			self::PAGE,
			Lifeline_Config::OPTION_SITE_ID,
			array( 'type' => 'string', 'sanitize_callback' => array( 'Lifeline_Config', 'sanitize_site_id' ), 'default' => '' )
		);
		register_setting(
			self::PAGE,
			Lifeline_Config::OPTION_SHORT_DOMAIN,
			array( 'type' => 'string', 'sanitize_callback' => array( 'Lifeline_Config', 'sanitize_short_domain' ), 'default' => '' )
		);
		foreach ( array( Lifeline_Config::OPTION_SECRET, Lifeline_Config::OPTION_API_KEY ) as $secret_option ) {
			register_setting(
				self::PAGE,
				$secret_option,
				array(
					'type'              => 'string',
					'default'           => '',
					// Secrets are never printed back; an empty field keeps the stored value.
					'sanitize_callback' => static function ( $value ) use ( $secret_option ) {
						$value = trim( (string) $value );
						return '' === $value ? (string) get_option( $secret_option, '' ) : $value;
					},
				)
			);
		}

		add_settings_section( 'lifeline_connection', __( 'Connection', 'lifeline' ), '__return_false', self::PAGE );
		$fields = array(
			Lifeline_Config::OPTION_ENDPOINT => array( __( 'Lifeline URL', 'lifeline' ), 'url', __( 'The app host, e.g. https://links.example.com (webhooks go to /api/v1/hooks/wordpress).', 'lifeline' ) ),
			Lifeline_Config::OPTION_SITE_ID  => array( __( 'Site id', 'lifeline' ), 'text', __( 'This site in Lifeline: letters, digits, ".", "-", "_". Defaults to the host name (on a multisite network, the host name and path for every site but the main one).', 'lifeline' ) ),
			Lifeline_Config::OPTION_SECRET   => array( __( 'Webhook secret', 'lifeline' ), 'password', __( 'Lifeline\'s WORDPRESS_WEBHOOK_SECRET. Leave empty to keep the stored one.', 'lifeline' ) ),
			Lifeline_Config::OPTION_API_KEY  => array( __( 'API key', 'lifeline' ), 'password', __( 'A Lifeline API key with the links:read scope, to show each post\'s short link. Leave empty to keep the stored one.', 'lifeline' ) ),
			Lifeline_Config::OPTION_SHORT_DOMAIN => array( __( 'Short link domain', 'lifeline' ), 'text', __( 'The host name of your short links (e.g. nws.li; several: comma-separated) when it is not the Lifeline URL\'s. A post imported from another WordPress is recognised by the short link it carries on this domain.', 'lifeline' ) ),
		);
		foreach ( $fields as $option => $field ) {
			add_settings_field(
				$option,
				$field[0],
				array( __CLASS__, 'render_field' ),
				self::PAGE,
				'lifeline_connection',
				array( 'option' => $option, 'type' => $field[1], 'help' => $field[2], 'label_for' => $option )
			);
		}
	}

	public static function sanitize_endpoint( $value ): string {
		$value = rtrim( trim( (string) $value ), '/' );
		if ( '' === $value ) {
			return '';
		}
		if ( ! preg_match( '#^https?://#i', $value ) || false === filter_var( $value, FILTER_VALIDATE_URL ) ) {
			add_settings_error( Lifeline_Config::OPTION_ENDPOINT, 'lifeline_endpoint', __( 'The Lifeline URL must be an http(s) URL.', 'lifeline' ) );
			return (string) get_option( Lifeline_Config::OPTION_ENDPOINT, '' );
		}
		return esc_url_raw( $value, array( 'http', 'https' ) );
	}

	public static function render_field( array $args ): void {
		$option   = $args['option'];
		$fixed    = Lifeline_Config::is_constant( $option );
		$is_value = 'password' !== $args['type'];
		$value    = $is_value ? (string) get_option( $option, '' ) : '';
		$stored   = ! $is_value && '' !== (string) get_option( $option, '' );
		printf(
			'<input id="%1$s" name="%1$s" type="%2$s" class="regular-text" value="%3$s" autocomplete="off" %4$s %5$s />',
			esc_attr( $option ),
			esc_attr( $args['type'] ),
			esc_attr( $value ),
			$fixed ? 'disabled' : '',
			$stored ? 'placeholder="' . esc_attr__( '•••••• (stored)', 'lifeline' ) . '"' : ''
		);
		if ( $fixed ) {
			echo '<p class="description">' . esc_html__( 'Set by a constant in wp-config.php.', 'lifeline' ) . '</p>';
		}
		echo '<p class="description">' . esc_html( $args['help'] ) . '</p>';
	}

	public static function render(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$status = Lifeline_Outbox::status();
		echo '<div class="wrap"><h1>' . esc_html__( 'Lifeline short links', 'lifeline' ) . '</h1>';
		echo '<form method="post" action="options.php">';
		settings_fields( self::PAGE );
		do_settings_sections( self::PAGE );
		submit_button();
		echo '</form>';

		echo '<h2>' . esc_html__( 'Deliveries', 'lifeline' ) . '</h2>';
		echo '<p>' . esc_html(
			sprintf(
				/* translators: 1: queued events, 2: refused events */
				__( '%1$d event(s) queued, %2$d refused by Lifeline.', 'lifeline' ),
				$status['queued'],
				$status['dead']
			)
		) . '</p>';
		if ( $status['queued'] > 0 ) {
			/* translators: 1: date and time (UTC) of the oldest queued event, 2: the last delivery error */
			echo '<p>' . esc_html( sprintf( __( 'Oldest queued since %1$s UTC. Last error: %2$s', 'lifeline' ), (string) $status['oldest'], (string) $status['last_error'] ) ) . '</p>';
		}
		if ( ! empty( $status['dead_rows'] ) ) {
			echo '<table class="widefat striped"><thead><tr><th>' . esc_html__( 'Post', 'lifeline' ) . '</th><th>' . esc_html__( 'Event', 'lifeline' ) . '</th><th>' . esc_html__( 'Error', 'lifeline' ) . '</th><th>' . esc_html__( 'Queued', 'lifeline' ) . '</th></tr></thead><tbody>';
			foreach ( $status['dead_rows'] as $row ) {
				printf(
					'<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>',
					(int) $row->post_id,
					esc_html( $row->event ),
					esc_html( (string) $row->last_error ),
					esc_html( $row->created_at )
				);
			}
			echo '</tbody></table>';
		}
		$actions = array(
			'lifeline_flush'     => __( 'Send queued events now', 'lifeline' ),
			'lifeline_test'      => __( 'Test connection', 'lifeline' ),
			'lifeline_reconcile' => __( 'Ask Lifeline to check every post', 'lifeline' ),
		);
		foreach ( $actions as $action => $label ) {
			echo '<form method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '" style="display:inline-block;margin-right:1em">';
			echo '<input type="hidden" name="action" value="' . esc_attr( $action ) . '" />';
			wp_nonce_field( $action );
			submit_button( $label, 'secondary', 'submit', false );
			echo '</form>';
		}
		Lifeline_Backfill_Page::render_section();
		echo '</div>';
	}

	public static function handle_flush(): void {
		self::guard( 'lifeline_flush' );
		Lifeline_Outbox::make_all_due();
		Lifeline_Outbox::flush();
		$status = Lifeline_Outbox::status();
		/* translators: %d: number of events still queued */
		self::back( sprintf( __( 'Sent. %d event(s) still queued.', 'lifeline' ), $status['queued'] ) );
	}

	public static function handle_test(): void {
		self::guard( 'lifeline_test' );
		self::back( implode( ' ', Lifeline_Client::check_connection() ) );
	}

	/** After a move to this WordPress (once the import is complete): Lifeline re-reads every post's listing. */
	public static function handle_reconcile(): void {
		self::guard( 'lifeline_reconcile' );
		if ( ! Lifeline_Config::can_send() ) {
			self::back( __( 'Set the Lifeline URL and the webhook secret first.', 'lifeline' ) );
		}
		Lifeline_Site_Events::request_check();
		$status = Lifeline_Outbox::status();
		self::back(
			0 === $status['queued']
				? __( 'Lifeline is checking every post. Links it cannot match for certain wait for review in Lifeline.', 'lifeline' )
				: __( 'The request is queued and will be sent when Lifeline is reachable.', 'lifeline' )
		);
	}

	/** Administrators only, with a valid nonce (CSRF). */
	private static function guard( string $action ): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'Sorry, you are not allowed to do that.', 'lifeline' ), 403 );
		}
		check_admin_referer( $action );
	}

	private static function back( string $message ): void {
		set_transient( 'lifeline_notice_' . get_current_user_id(), $message, MINUTE_IN_SECONDS );
		wp_safe_redirect( admin_url( 'options-general.php?page=' . self::PAGE ) );
		exit;
	}

	public static function notices(): void {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$notice = get_transient( 'lifeline_notice_' . get_current_user_id() );
		if ( $notice ) {
			delete_transient( 'lifeline_notice_' . get_current_user_id() );
			echo '<div class="notice notice-info is-dismissible"><p>' . esc_html( (string) $notice ) . '</p></div>';
		}
		if ( ! Lifeline_Config::can_send() ) {
			printf(
				'<div class="notice notice-warning"><p>%s <a href="%s">%s</a></p></div>',
				esc_html__( 'Lifeline is not configured: published posts are queued but get no short link yet.', 'lifeline' ),
				esc_url( admin_url( 'options-general.php?page=' . self::PAGE ) ),
				esc_html__( 'Configure it', 'lifeline' )
			);
			return;
		}
		$status = Lifeline_Outbox::status();
		if ( $status['dead'] > 0 || ( $status['queued'] > 0 && $status['oldest'] && strtotime( $status['oldest'] . ' UTC' ) < time() - 15 * MINUTE_IN_SECONDS ) ) {
			printf(
				'<div class="notice notice-error"><p>%s <a href="%s">%s</a></p></div>',
				esc_html__( 'Lifeline has not received some post events.', 'lifeline' ),
				esc_url( admin_url( 'options-general.php?page=' . self::PAGE ) ),
				esc_html__( 'See deliveries', 'lifeline' )
			);
		}
	}
}
