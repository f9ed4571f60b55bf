<?php
/**
 * Every PHP file of the plugin stops when it is requested directly rather than loaded by WordPress: a
 * `defined( 'ABSPATH' )` (or, in uninstall.php, `defined( 'WP_UNINSTALL_PLUGIN' )`) check before its first
 * declaration or include, as the plugin directory's review asks.
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\Files;

use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;
use PHP_CodeSniffer\Util\Tokens;

/** Flags a PHP file without the direct-access guard. */
final class DirectAccessSniff implements Sniff {

	const GUARDS = array( "'ABSPATH'", '"ABSPATH"', "'WP_UNINSTALL_PLUGIN'", '"WP_UNINSTALL_PLUGIN"' );

	public function register() {
		return array( T_OPEN_TAG );
	}

	/** Runs once per file, from its first opening tag (the returned pointer skips the rest). */
	public function process( File $file, $ptr ) {
		$tokens = $file->getTokens();
		$stop   = array( T_CLASS, T_FUNCTION, T_INTERFACE, T_TRAIT, T_REQUIRE, T_REQUIRE_ONCE, T_INCLUDE, T_INCLUDE_ONCE, T_ECHO );
		for ( $i = $ptr; $i < $file->numTokens; $i++ ) {
			if ( in_array( $tokens[ $i ]['code'], $stop, true ) ) {
				break;
			}
			if ( T_STRING === $tokens[ $i ]['code'] && 'defined' === strtolower( $tokens[ $i ]['content'] ) ) {
				$open = $file->findNext( Tokens::$emptyTokens, $i + 1, null, true );
				$arg  = false === $open ? false : $file->findNext( Tokens::$emptyTokens, $open + 1, null, true );
				if ( false !== $arg && in_array( $tokens[ $arg ]['content'], self::GUARDS, true ) ) {
					return $file->numTokens;
				}
			}
		}
		$file->addError( 'This file runs when requested directly: start it with `if ( ! defined( \'ABSPATH\' ) ) { exit; }`.', $ptr, 'Missing' );
		return $file->numTokens;
	}
}
