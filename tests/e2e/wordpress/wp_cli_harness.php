<?php
// A stand-in for WP-CLI on machines without wp-cli.phar (tests only: Debian has no wp-cli package and CI cannot
// download one). It loads this run's WordPress as WP-CLI does, with the WP_CLI constant and class defined first
// so the plugin registers its command, then runs `lifeline <subcommand> [--flag[=value]]…` on that same command
// class. It implements only the part of WP-CLI's API the plugin calls: WP_CLI::add_command, log, line, success,
// warning, error and halt (same prefixes, streams and exit codes), WP_CLI\Utils\get_flag_value, and
// WP_CLI\Utils\make_progress_bar returning a bar that draws nothing, as WP-CLI's does when output is piped.
// It does not check a command's synopsis: the plugin's command validates its own flags.

namespace WP_CLI {
	/** What make_progress_bar() returns when nothing is drawn. */
	final class NoOp {
		public function __call( $method, $args ) {
			return null;
		}
	}
}

namespace WP_CLI\Utils {
	function get_flag_value( $assoc_args, $flag, $default = null ) {
		return isset( $assoc_args[ $flag ] ) ? $assoc_args[ $flag ] : $default;
	}

	function make_progress_bar( $message, $count, $interval = 100 ) {
		return new \WP_CLI\NoOp();
	}
}

namespace {
	define( 'WP_CLI', true );

	final class WP_CLI {
		/** @var array<string, string> */
		public static $commands = array();

		public static function add_command( $name, $callable, $args = array() ) {
			self::$commands[ $name ] = $callable;
			return true;
		}

		public static function log( $message ) {
			fwrite( STDOUT, $message . "\n" );
		}

		public static function line( $message = '' ) {
			fwrite( STDOUT, $message . "\n" );
		}

		public static function success( $message ) {
			fwrite( STDOUT, 'Success: ' . $message . "\n" );
		}

		public static function warning( $message ) {
			fwrite( STDERR, 'Warning: ' . $message . "\n" );
		}

		public static function error( $message, $exit = true ) {
			fwrite( STDERR, 'Error: ' . $message . "\n" );
			if ( $exit ) {
				exit( 1 );
			}
		}

		public static function halt( $code ) {
			exit( (int) $code );
		}
	}

	require __DIR__ . '/cli_boot.php';

	$lifeline_e2e_words = array();
	$lifeline_e2e_flags = array();
	foreach ( array_slice( $argv, 1 ) as $lifeline_e2e_arg ) {
		if ( preg_match( '/^--no-([a-z0-9-]+)$/', $lifeline_e2e_arg, $m ) ) {
			$lifeline_e2e_flags[ $m[1] ] = false;
		} elseif ( preg_match( '/^--([a-z0-9-]+)(?:=(.*))?$/s', $lifeline_e2e_arg, $m ) ) {
			$lifeline_e2e_flags[ $m[1] ] = isset( $m[2] ) ? $m[2] : true;
		} else {
			$lifeline_e2e_words[] = $lifeline_e2e_arg;
		}
	}
	if ( count( $lifeline_e2e_words ) < 2 || ! isset( WP_CLI::$commands[ $lifeline_e2e_words[0] ] ) ) {
		WP_CLI::error( 'usage: wp_cli_harness.php <command> <subcommand> [--flag[=value]]… (registered: ' . implode( ', ', array_keys( WP_CLI::$commands ) ) . ')' );
	}
	$lifeline_e2e_class  = WP_CLI::$commands[ $lifeline_e2e_words[0] ];
	$lifeline_e2e_method = str_replace( '-', '_', $lifeline_e2e_words[1] );
	$lifeline_e2e_object = new $lifeline_e2e_class();
	if ( ! method_exists( $lifeline_e2e_object, $lifeline_e2e_method ) ) {
		WP_CLI::error( sprintf( "'%s' is not a registered subcommand of '%s'.", $lifeline_e2e_words[1], $lifeline_e2e_words[0] ) );
	}
	$lifeline_e2e_object->$lifeline_e2e_method( array_slice( $lifeline_e2e_words, 2 ), $lifeline_e2e_flags );
	exit( 0 );
}
