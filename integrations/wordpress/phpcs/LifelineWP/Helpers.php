<?php
/**
 * Token helpers the Lifeline sniffs share: function-call arguments, the function a token sits in, and the call
 * that encloses a token.
 *
 * @package LifelineWP
 */

namespace LifelineWP;

use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Util\Tokens;

/** Reads calls and scopes from a file's tokens. */
final class Helpers {

	/**
	 * The name of the function called at `$ptr` (a T_STRING followed by "("), lower case; '' when `$ptr` is not
	 * a plain function call (a method call, a declaration, a constant).
	 */
	public static function called_function( File $file, int $ptr ): string {
		$tokens = $file->getTokens();
		if ( T_STRING !== $tokens[ $ptr ]['code'] ) {
			return '';
		}
		$next = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
		if ( false === $next || T_OPEN_PARENTHESIS !== $tokens[ $next ]['code'] ) {
			return '';
		}
		$prev = $file->findPrevious( Tokens::$emptyTokens, $ptr - 1, null, true );
		if ( false !== $prev && in_array( $tokens[ $prev ]['code'], array( T_OBJECT_OPERATOR, T_DOUBLE_COLON, T_FUNCTION, T_NEW, T_NULLSAFE_OBJECT_OPERATOR ), true ) ) {
			return '';
		}
		return strtolower( $tokens[ $ptr ]['content'] );
	}

	/**
	 * The arguments of the call whose "(" is at `$open`: a list of [ first token, last token ] (non-empty tokens),
	 * split at the commas of that call.
	 *
	 * @return array<int, array{0: int, 1: int}>
	 */
	public static function arguments( File $file, int $open ): array {
		$tokens = $file->getTokens();
		if ( ! isset( $tokens[ $open ]['parenthesis_closer'] ) ) {
			return array();
		}
		$close = $tokens[ $open ]['parenthesis_closer'];
		$args  = array();
		$start = $open + 1;
		for ( $i = $open + 1; $i <= $close; $i++ ) {
			$code = $tokens[ $i ]['code'];
			if ( $i < $close && in_array( $code, array( T_OPEN_PARENTHESIS, T_OPEN_SHORT_ARRAY, T_OPEN_SQUARE_BRACKET, T_OPEN_CURLY_BRACKET ), true ) ) {
				$i = self::closer( $tokens, $i ) ?? $i;
				continue;
			}
			if ( T_COMMA === $code || $i === $close ) {
				$first = $file->findNext( Tokens::$emptyTokens, $start, $i, true );
				if ( false !== $first ) {
					$last   = $file->findPrevious( Tokens::$emptyTokens, $i - 1, $first - 1, true );
					$args[] = array( $first, false === $last ? $first : $last );
				}
				$start = $i + 1;
			}
		}
		return $args;
	}

	/** The matching closer of a bracket token, or null. */
	public static function closer( array $tokens, int $ptr ): ?int {
		foreach ( array( 'parenthesis_closer', 'bracket_closer', 'scope_closer' ) as $key ) {
			if ( isset( $tokens[ $ptr ][ $key ] ) ) {
				return $tokens[ $ptr ][ $key ];
			}
		}
		return null;
	}

	/** The function or closure a token is in: [ scope opener, scope closer ], or null at file level. */
	public static function function_scope( File $file, int $ptr ): ?array {
		$tokens = $file->getTokens();
		$scope  = null;
		foreach ( $tokens[ $ptr ]['conditions'] as $owner => $code ) {
			if ( in_array( $code, array( T_FUNCTION, T_CLOSURE ), true ) && isset( $tokens[ $owner ]['scope_opener'] ) ) {
				$scope = array( $tokens[ $owner ]['scope_opener'], $tokens[ $owner ]['scope_closer'] );
			}
		}
		return $scope;
	}

	/**
	 * The functions whose call parentheses enclose `$ptr`, innermost first, lower case ('isset' and 'empty'
	 * included; '(cast)' entries are not produced: see is_cast_before()).
	 *
	 * @return string[]
	 */
	public static function enclosing_calls( File $file, int $ptr ): array {
		$tokens = $file->getTokens();
		$names  = array();
		if ( empty( $tokens[ $ptr ]['nested_parenthesis'] ) ) {
			return $names;
		}
		foreach ( array_reverse( $tokens[ $ptr ]['nested_parenthesis'], true ) as $open => $close ) {
			$prev = $file->findPrevious( Tokens::$emptyTokens, $open - 1, null, true );
			if ( false === $prev ) {
				continue;
			}
			if ( T_ISSET === $tokens[ $prev ]['code'] ) {
				$names[] = 'isset';
			} elseif ( T_EMPTY === $tokens[ $prev ]['code'] ) {
				$names[] = 'empty';
			} elseif ( '' !== self::called_function( $file, $prev ) ) {
				$names[] = self::called_function( $file, $prev );
			}
		}
		return $names;
	}

	/** True when the token right before `$ptr` (comments and whitespace skipped) is one of `$codes`. */
	public static function preceded_by( File $file, int $ptr, array $codes ): bool {
		$prev = $file->findPrevious( Tokens::$emptyTokens, $ptr - 1, null, true );
		return false !== $prev && in_array( $file->getTokens()[ $prev ]['code'], $codes, true );
	}
}
