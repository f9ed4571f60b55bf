<?php
/**
 * Form data ($_POST, $_GET, $_REQUEST, $_FILES) is read only after a nonce check in the same function:
 * wp_verify_nonce(), check_admin_referer(), check_ajax_referer(), or one of the ruleset's
 * customNonceVerificationFunctions (a guard method that calls one of them). Protects the settings page's forms
 * against cross-site request forgery, as the plugin directory's review asks.
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\Security;

require_once dirname( __DIR__, 2 ) . '/Helpers.php';

use LifelineWP\Helpers;
use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;

/** Flags form data read before any nonce check. */
final class NonceVerificationSniff implements Sniff {

	/**
	 * Functions or methods that verify a nonce (ruleset property).
	 *
	 * @var string[]
	 */
	public $customNonceVerificationFunctions = array();

	const FORM_DATA = array( '$_POST', '$_GET', '$_REQUEST', '$_FILES' );
	const VERIFIERS = array( 'wp_verify_nonce', 'check_admin_referer', 'check_ajax_referer' );

	public function register() {
		return array( T_VARIABLE );
	}

	public function process( File $file, $ptr ) {
		$tokens = $file->getTokens();
		if ( ! in_array( $tokens[ $ptr ]['content'], self::FORM_DATA, true ) ) {
			return;
		}
		$scope     = Helpers::function_scope( $file, $ptr );
		$from      = null === $scope ? 0 : $scope[0];
		$verifiers = array_merge( self::VERIFIERS, array_map( 'strtolower', (array) $this->customNonceVerificationFunctions ) );
		for ( $i = $from; $i < $ptr; $i++ ) {
			if ( T_STRING === $tokens[ $i ]['code'] && in_array( strtolower( $tokens[ $i ]['content'] ), $verifiers, true ) ) {
				return;
			}
		}
		$file->addError( '%s is read without a nonce check before it in this function (check_admin_referer(), wp_verify_nonce()…).', $ptr, 'Missing', array( $tokens[ $ptr ]['content'] ) );
	}
}
