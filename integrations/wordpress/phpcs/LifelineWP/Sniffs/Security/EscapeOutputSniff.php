<?php
/**
 * Output must be escaped: every operand of `echo`, `print`, `<?=`, `exit( ... )`, the arguments of printf() and
 * vprintf() and the message of wp_die() are literals, numbers, casts to a number, or the result of an escaping
 * (or self-escaping) function. `_e()` and `_ex()` print a translation unescaped and are refused. The same
 * guideline as the plugin directory's review and WordPress Coding Standards' WordPress.Security.EscapeOutput,
 * in a smaller form (no list of WordPress's auto-escaped functions beyond the common ones below).
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\Security;

require_once dirname( __DIR__, 2 ) . '/Helpers.php';

use LifelineWP\Helpers;
use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;
use PHP_CodeSniffer\Util\Tokens;

/** Flags output that is not escaped. */
final class EscapeOutputSniff implements Sniff {

	/**
	 * More functions whose result is safe to print (ruleset property).
	 *
	 * @var string[]
	 */
	public $customEscapingFunctions = array();

	/** Functions whose result is escaped for HTML output (or is a number). */
	const ESCAPING = array(
		'esc_html',
		'esc_attr',
		'esc_url',
		'esc_js',
		'esc_textarea',
		'esc_xml',
		'esc_html__',
		'esc_attr__',
		'esc_html_x',
		'esc_attr_x',
		'wp_kses',
		'wp_kses_post',
		'wp_kses_data',
		'absint',
		'intval',
		'floatval',
		'count',
		'number_format_i18n',
		'tag_escape',
		'sanitize_html_class',
		'get_submit_button',
		'selected',
		'checked',
		'disabled',
		'wp_nonce_field',
	);

	/** Formatting functions: safe when each of their arguments is. */
	const FORMATTING = array( 'sprintf', 'vsprintf' );

	public function register() {
		return array( T_ECHO, T_PRINT, T_OPEN_TAG_WITH_ECHO, T_STRING, T_EXIT );
	}

	public function process( File $file, $ptr ) {
		$tokens = $file->getTokens();
		$code   = $tokens[ $ptr ]['code'];
		if ( T_STRING === $code ) {
			$name = Helpers::called_function( $file, $ptr );
			if ( '_e' === $name || '_ex' === $name ) {
				$file->addError( '%s() prints a translation without escaping it: use esc_html_e() or esc_attr_e().', $ptr, 'UnsafePrintingFunction', array( $name ) );
				return;
			}
			if ( ! in_array( $name, array( 'printf', 'vprintf', 'wp_die' ), true ) ) {
				return;
			}
			$open = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
			$args = Helpers::arguments( $file, $open );
			if ( 'wp_die' === $name ) {
				$args = array_slice( $args, 0, 1 );
			}
			foreach ( $args as $arg ) {
				$this->check_expression( $file, $arg[0], $arg[1] );
			}
			return;
		}
		if ( T_EXIT === $code ) {
			$open = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
			if ( false !== $open && T_OPEN_PARENTHESIS === $tokens[ $open ]['code'] && $tokens[ $open ]['parenthesis_closer'] > $open + 1 ) {
				$this->check_expression( $file, $open + 1, $tokens[ $open ]['parenthesis_closer'] - 1 );
			}
			return;
		}
		$end = $file->findNext( array( T_SEMICOLON, T_CLOSE_TAG ), $ptr + 1 );
		if ( false !== $end ) {
			$this->check_expression( $file, $ptr + 1, $end - 1 );
		}
	}

	/** Checks each printed operand of the expression from `$start` to `$end` (inclusive). */
	private function check_expression( File $file, int $start, int $end ): void {
		$tokens = $file->getTokens();
		// A ternary's condition is not printed: only its two results are.
		$then = $this->find_at_top( $file, $start, $end, array( T_INLINE_THEN ) );
		if ( null !== $then ) {
			$start = $then + 1;
		}
		$escaping = array_merge( self::ESCAPING, array_map( 'strtolower', (array) $this->customEscapingFunctions ) );
		$i        = $start;
		while ( $i <= $end ) {
			$code = $tokens[ $i ]['code'];
			if ( isset( Tokens::$emptyTokens[ $code ] ) || in_array( $code, array( T_STRING_CONCAT, T_COMMA, T_INLINE_THEN, T_INLINE_ELSE, T_NS_SEPARATOR ), true ) ) {
				++$i;
				continue;
			}
			if ( in_array( $code, array( T_CONSTANT_ENCAPSED_STRING, T_LNUMBER, T_DNUMBER, T_TRUE, T_FALSE, T_NULL, T_LINE, T_MINUS, T_PLUS ), true ) ) {
				++$i;
				continue;
			}
			if ( in_array( $code, array( T_INT_CAST, T_BOOL_CAST, T_DOUBLE_CAST ), true ) ) {
				$i = $this->operand_end( $file, $i + 1, $end ) + 1;
				continue;
			}
			if ( T_OPEN_PARENTHESIS === $code && isset( $tokens[ $i ]['parenthesis_closer'] ) ) {
				$close = $tokens[ $i ]['parenthesis_closer'];
				if ( $close > $i + 1 ) {
					$this->check_expression( $file, $i + 1, $close - 1 );
				}
				$i = $close + 1;
				continue;
			}
			if ( T_STRING === $code ) {
				$name = Helpers::called_function( $file, $i );
				$next = $file->findNext( Tokens::$emptyTokens, $i + 1, null, true );
				if ( '' === $name ) {
					$is_constant = false !== $next && ! in_array( $tokens[ $next ]['code'], array( T_OPEN_PARENTHESIS, T_DOUBLE_COLON ), true ) && strtoupper( $tokens[ $i ]['content'] ) === $tokens[ $i ]['content'];
					if ( $is_constant ) {
						++$i;
						continue;
					}
				} else {
					$close = $tokens[ $next ]['parenthesis_closer'];
					if ( in_array( $name, $escaping, true ) ) {
						$i = $close + 1;
						continue;
					}
					if ( in_array( $name, self::FORMATTING, true ) ) {
						foreach ( Helpers::arguments( $file, $next ) as $arg ) {
							$this->check_expression( $file, $arg[0], $arg[1] );
						}
						$i = $close + 1;
						continue;
					}
				}
			}
			$last = $this->operand_end( $file, $i, $end );
			$file->addError(
				'All output must be escaped (esc_html(), esc_attr(), esc_url(), wp_kses()…); found "%s".',
				$i,
				'OutputNotEscaped',
				array( trim( $file->getTokensAsString( $i, $last - $i + 1 ) ) )
			);
			$i = $last + 1;
		}
	}

	/** The last token of the operand that starts at `$i`: up to the next ".", ",", "?" or ":" outside brackets. */
	private function operand_end( File $file, int $i, int $end ): int {
		$next = $this->find_at_top( $file, $i, $end, array( T_STRING_CONCAT, T_COMMA, T_INLINE_THEN, T_INLINE_ELSE ) );
		return null === $next ? $end : $next - 1;
	}

	/** The first token of `$codes` between `$start` and `$end` that is not inside brackets opened in that range. */
	private function find_at_top( File $file, int $start, int $end, array $codes ): ?int {
		$tokens = $file->getTokens();
		for ( $i = $start; $i <= $end; $i++ ) {
			if ( in_array( $tokens[ $i ]['code'], $codes, true ) ) {
				return $i;
			}
			if ( in_array( $tokens[ $i ]['code'], array( T_OPEN_PARENTHESIS, T_OPEN_SHORT_ARRAY, T_OPEN_SQUARE_BRACKET, T_OPEN_CURLY_BRACKET ), true ) ) {
				$close = Helpers::closer( $tokens, $i );
				if ( null !== $close ) {
					$i = $close;
				}
			}
		}
		return null;
	}
}
