<?php
/**
 * Request data ($_POST, $_GET, $_REQUEST, $_COOKIE, $_SERVER, $_FILES) is checked for presence before it is
 * read (isset(), empty() or array_key_exists() earlier in the function, or around it) and is read through a
 * sanitising function or a cast to a number; comparing it with === or !== needs neither. As WordPress Coding
 * Standards' WordPress.Security.ValidatedSanitizedInput, without its check that wp_unslash() comes first.
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\Security;

require_once dirname( __DIR__, 2 ) . '/Helpers.php';

use LifelineWP\Helpers;
use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;
use PHP_CodeSniffer\Util\Tokens;

/** Flags request data read without a presence check or without sanitising. */
final class ValidatedSanitizedInputSniff implements Sniff {

	/**
	 * More sanitising functions (ruleset property).
	 *
	 * @var string[]
	 */
	public $customSanitizingFunctions = array();

	const INPUT      = array( '$_POST', '$_GET', '$_REQUEST', '$_COOKIE', '$_SERVER', '$_FILES' );
	const SANITIZERS = array(
		'sanitize_text_field',
		'sanitize_textarea_field',
		'sanitize_key',
		'sanitize_title',
		'sanitize_email',
		'sanitize_file_name',
		'sanitize_user',
		'sanitize_mime_type',
		'sanitize_url',
		'esc_url_raw',
		'absint',
		'intval',
		'floatval',
		'boolval',
		'wp_kses',
		'wp_kses_post',
		'rest_sanitize_boolean',
	);

	public function register() {
		return array( T_VARIABLE );
	}

	public function process( File $file, $ptr ) {
		$tokens = $file->getTokens();
		$name   = $tokens[ $ptr ]['content'];
		if ( ! in_array( $name, self::INPUT, true ) ) {
			return;
		}
		$calls = Helpers::enclosing_calls( $file, $ptr );
		if ( isset( $calls[0] ) && in_array( $calls[0], array( 'isset', 'empty', 'array_key_exists' ), true ) ) {
			return; // The presence check itself.
		}
		if ( ! $this->validated_before( $file, $ptr ) ) {
			$file->addError( '%s is read without isset() or empty() first.', $ptr, 'InputNotValidated', array( $name ) );
		}
		$sanitizers = array_merge( self::SANITIZERS, array_map( 'strtolower', (array) $this->customSanitizingFunctions ) );
		if ( array_intersect( $calls, $sanitizers ) || Helpers::preceded_by( $file, $ptr, array( T_INT_CAST, T_BOOL_CAST, T_DOUBLE_CAST ) ) ) {
			return;
		}
		if ( Helpers::preceded_by( $file, $ptr, array( T_IS_IDENTICAL, T_IS_NOT_IDENTICAL ) ) || $this->compared_after( $file, $ptr ) ) {
			return;
		}
		$file->addError( '%s is read without a sanitising function (sanitize_text_field(), absint()…).', $ptr, 'InputNotSanitized', array( $name ) );
	}

	/** An isset(), empty() or array_key_exists() of the same variable earlier in the function. */
	private function validated_before( File $file, int $ptr ): bool {
		$tokens = $file->getTokens();
		$scope  = Helpers::function_scope( $file, $ptr );
		for ( $i = null === $scope ? 0 : $scope[0]; $i < $ptr; $i++ ) {
			if ( T_VARIABLE === $tokens[ $i ]['code'] && $tokens[ $i ]['content'] === $tokens[ $ptr ]['content'] ) {
				$calls = Helpers::enclosing_calls( $file, $i );
				if ( isset( $calls[0] ) && in_array( $calls[0], array( 'isset', 'empty', 'array_key_exists' ), true ) ) {
					return true;
				}
			}
		}
		return false;
	}

	/** `$_POST['x'] === '...'`: compared, never used as a value. */
	private function compared_after( File $file, int $ptr ): bool {
		$tokens = $file->getTokens();
		$next   = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
		while ( false !== $next && T_OPEN_SQUARE_BRACKET === $tokens[ $next ]['code'] && isset( $tokens[ $next ]['bracket_closer'] ) ) {
			$next = $file->findNext( Tokens::$emptyTokens, $tokens[ $next ]['bracket_closer'] + 1, null, true );
		}
		return false !== $next && in_array( $tokens[ $next ]['code'], array( T_IS_IDENTICAL, T_IS_NOT_IDENTICAL ), true );
	}
}
