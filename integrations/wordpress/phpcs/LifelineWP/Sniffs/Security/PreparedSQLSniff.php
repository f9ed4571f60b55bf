<?php
/**
 * SQL goes through $wpdb->prepare(): the query of $wpdb->query(), get_var(), get_row(), get_col() and
 * get_results(), and the query string of prepare() itself, interpolates or concatenates no variable but
 * $wpdb's table names ({$wpdb->prefix}, {$wpdb->options}…) and the ruleset's sqlVariables (variables that only
 * ever hold SQL the plugin writes itself: a table name from $wpdb->prefix, a WHERE clause of fixed fragments and
 * placeholders; never a value). Values are passed as prepare()'s placeholders. As
 * WordPress Coding Standards' WordPress.DB.PreparedSQL, without its list of safe escaping functions.
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\Security;

require_once dirname( __DIR__, 2 ) . '/Helpers.php';

use LifelineWP\Helpers;
use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;
use PHP_CodeSniffer\Util\Tokens;

/** Flags SQL built from variables outside $wpdb->prepare(). */
final class PreparedSQLSniff implements Sniff {

	/**
	 * Variable names (without "$") that hold only SQL written in the plugin, never a value (ruleset property).
	 *
	 * @var string[]
	 */
	public $sqlVariables = array();

	const METHODS = array( 'query', 'get_var', 'get_row', 'get_col', 'get_results', 'prepare' );

	public function register() {
		return array( T_VARIABLE );
	}

	public function process( File $file, $ptr ) {
		$tokens = $file->getTokens();
		if ( '$wpdb' !== $tokens[ $ptr ]['content'] ) {
			return;
		}
		$arrow  = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
		$method = false === $arrow ? false : $file->findNext( Tokens::$emptyTokens, $arrow + 1, null, true );
		$open   = false === $method ? false : $file->findNext( Tokens::$emptyTokens, $method + 1, null, true );
		if ( false === $open || T_OBJECT_OPERATOR !== $tokens[ $arrow ]['code'] || T_OPEN_PARENTHESIS !== $tokens[ $open ]['code'] ) {
			return;
		}
		$name = strtolower( $tokens[ $method ]['content'] );
		if ( ! in_array( $name, self::METHODS, true ) ) {
			return;
		}
		$args = Helpers::arguments( $file, $open );
		if ( ! $args ) {
			return;
		}
		list( $first, $last ) = $args[0];
		if ( 'prepare' !== $name && $this->is_prepare_call( $file, $first ) ) {
			return; // prepare()'s own query is checked when this sniff meets that $wpdb.
		}
		$this->check_query( $file, $first, $last );
	}

	private function is_prepare_call( File $file, int $ptr ): bool {
		$tokens = $file->getTokens();
		if ( T_VARIABLE !== $tokens[ $ptr ]['code'] || '$wpdb' !== $tokens[ $ptr ]['content'] ) {
			return false;
		}
		$arrow  = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
		$method = $file->findNext( Tokens::$emptyTokens, $arrow + 1, null, true );
		return T_OBJECT_OPERATOR === $tokens[ $arrow ]['code'] && 'prepare' === strtolower( $tokens[ $method ]['content'] );
	}

	private function check_query( File $file, int $first, int $last ): void {
		$tokens = $file->getTokens();
		$tables = (array) $this->sqlVariables;
		for ( $i = $first; $i <= $last; $i++ ) {
			$code = $tokens[ $i ]['code'];
			if ( T_DOUBLE_QUOTED_STRING === $code || T_HEREDOC === $code ) {
				preg_match_all( '/\$(\w+)((?:->\w+)?)/', $tokens[ $i ]['content'], $found, PREG_SET_ORDER );
				foreach ( $found as $var ) {
					$ok = ( 'wpdb' === $var[1] && '' !== $var[2] ) || ( '' === $var[2] && in_array( $var[1], $tables, true ) );
					if ( ! $ok ) {
						$file->addError( 'SQL interpolates %s: pass values as $wpdb->prepare() placeholders.', $i, 'InterpolatedNotPrepared', array( '$' . $var[1] . $var[2] ) );
					}
				}
				continue;
			}
			if ( T_VARIABLE === $code ) {
				$next     = $file->findNext( Tokens::$emptyTokens, $i + 1, null, true );
				$property = false !== $next && T_OBJECT_OPERATOR === $tokens[ $next ]['code'];
				$after    = $property ? $file->findNext( Tokens::$emptyTokens, $next + 2, null, true ) : false;
				$is_call  = false !== $after && T_OPEN_PARENTHESIS === $tokens[ $after ]['code'];
				$ok       = ( '$wpdb' === $tokens[ $i ]['content'] && $property && ! $is_call ) || ( ! $property && in_array( ltrim( $tokens[ $i ]['content'], '$' ), $tables, true ) );
				if ( ! $ok ) {
					$file->addError( 'SQL is built from %s: pass values as $wpdb->prepare() placeholders.', $i, 'NotPrepared', array( $tokens[ $i ]['content'] ) );
				}
				if ( $property ) {
					$i = $next + 1;
				}
				continue;
			}
			if ( T_STRING === $code && '' !== Helpers::called_function( $file, $i ) ) {
				$file->addError( 'SQL is built from %s(): pass values as $wpdb->prepare() placeholders.', $i, 'NotPrepared', array( $tokens[ $i ]['content'] ) );
				$open = $file->findNext( Tokens::$emptyTokens, $i + 1, null, true );
				$i    = $tokens[ $open ]['parenthesis_closer'];
			}
		}
	}
}
