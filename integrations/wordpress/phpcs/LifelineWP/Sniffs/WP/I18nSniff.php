<?php
/**
 * Translatable strings as the plugin directory and translate.wordpress.org need them: every gettext call
 * (__(), _e(), _x(), _n(), esc_html__()…) names the ruleset's textDomain as a literal, its text is one string
 * literal (never a variable, so the .pot can be made from the source), a string with more than one placeholder
 * numbers them (%1$s, %2$s: translators may reorder), and a string with placeholders has a
 * "translators:" comment just above. As WordPress Coding Standards' WordPress.WP.I18n, in a smaller form.
 *
 * @package LifelineWP
 */

namespace LifelineWP\Sniffs\WP;

require_once dirname( __DIR__, 2 ) . '/Helpers.php';

use LifelineWP\Helpers;
use PHP_CodeSniffer\Files\File;
use PHP_CodeSniffer\Sniffs\Sniff;
use PHP_CodeSniffer\Util\Tokens;

/** Checks gettext calls. */
final class I18nSniff implements Sniff {

	/**
	 * The plugin's text domain (ruleset property).
	 *
	 * @var string
	 */
	public $textDomain = '';

	/** Function → [ positions of its text arguments, position of the domain ] (1-based). */
	const FUNCTIONS = array(
		'__'           => array( array( 1 ), 2 ),
		'_e'           => array( array( 1 ), 2 ),
		'esc_html__'   => array( array( 1 ), 2 ),
		'esc_html_e'   => array( array( 1 ), 2 ),
		'esc_attr__'   => array( array( 1 ), 2 ),
		'esc_attr_e'   => array( array( 1 ), 2 ),
		'_x'           => array( array( 1, 2 ), 3 ),
		'_ex'          => array( array( 1, 2 ), 3 ),
		'esc_html_x'   => array( array( 1, 2 ), 3 ),
		'esc_attr_x'   => array( array( 1, 2 ), 3 ),
		'_n'           => array( array( 1, 2 ), 4 ),
		'_nx'          => array( array( 1, 2, 4 ), 5 ),
		'_n_noop'      => array( array( 1, 2 ), 3 ),
		'_nx_noop'     => array( array( 1, 2, 3 ), 4 ),
	);

	/** A printf placeholder. */
	const PLACEHOLDER = '/%(?:(\d+)\$)?[-+ 0\'.\d]*[bcdeEfFgGosuxX]/';

	public function register() {
		return array( T_STRING );
	}

	public function process( File $file, $ptr ) {
		$name = Helpers::called_function( $file, $ptr );
		if ( ! isset( self::FUNCTIONS[ $name ] ) ) {
			return;
		}
		$tokens = $file->getTokens();
		list( $texts, $domain_at ) = self::FUNCTIONS[ $name ];
		$open = $file->findNext( Tokens::$emptyTokens, $ptr + 1, null, true );
		$args = Helpers::arguments( $file, $open );

		if ( ! isset( $args[ $domain_at - 1 ] ) ) {
			$file->addError( '%s() has no text domain: add \'%s\'.', $ptr, 'MissingTextDomain', array( $name, $this->textDomain ) );
		} else {
			list( $first, $last ) = $args[ $domain_at - 1 ];
			$literal = $first === $last && T_CONSTANT_ENCAPSED_STRING === $tokens[ $first ]['code'];
			if ( ! $literal || substr( $tokens[ $first ]['content'], 1, -1 ) !== $this->textDomain ) {
				$file->addError( '%s() must use the text domain \'%s\' as a literal; found %s.', $first, 'TextDomainMismatch', array( $name, $this->textDomain, $file->getTokensAsString( $first, $last - $first + 1 ) ) );
			}
		}

		foreach ( $texts as $position ) {
			if ( ! isset( $args[ $position - 1 ] ) ) {
				continue;
			}
			list( $first, $last ) = $args[ $position - 1 ];
			if ( $first !== $last || T_CONSTANT_ENCAPSED_STRING !== $tokens[ $first ]['code'] ) {
				$file->addError( 'The text of %s() must be a single string literal, or it cannot be extracted for translation.', $first, 'NonSingularStringLiteralText', array( $name ) );
				continue;
			}
			$text = substr( $tokens[ $first ]['content'], 1, -1 );
			preg_match_all( self::PLACEHOLDER, str_replace( '%%', '', $text ), $found, PREG_SET_ORDER );
			if ( ! $found ) {
				continue;
			}
			$unnumbered = count( array_filter( $found, static function ( $m ) {
				return ! isset( $m[1] ) || '' === $m[1];
			} ) );
			if ( count( $found ) > 1 && $unnumbered > 0 ) {
				$file->addError( 'Number the placeholders of a string with several (%%1$s, %%2$s): translators may need another order.', $first, 'UnorderedPlaceholders' );
			}
			if ( ! $this->has_translators_comment( $file, $ptr ) ) {
				$file->addWarning( 'A string with placeholders needs a "/* translators: … */" comment just above the call that says what they are.', $ptr, 'MissingTranslatorsComment' );
			}
		}
	}

	/** The nearest comment before the call, at most six lines above it, starts with "translators:". */
	private function has_translators_comment( File $file, int $ptr ): bool {
		$tokens  = $file->getTokens();
		$comment = $file->findPrevious( array_merge( array( T_COMMENT ), array_keys( Tokens::$phpcsCommentTokens ), array( T_DOC_COMMENT_STRING, T_DOC_COMMENT_OPEN_TAG ) ), $ptr - 1 );
		if ( false === $comment || $tokens[ $comment ]['line'] < $tokens[ $ptr ]['line'] - 6 ) {
			return false;
		}
		// A doc comment's text is spread over several tokens: read back to its opening.
		$text = $tokens[ $comment ]['content'];
		if ( T_DOC_COMMENT_STRING === $tokens[ $comment ]['code'] || T_DOC_COMMENT_OPEN_TAG === $tokens[ $comment ]['code'] ) {
			$opener = $file->findPrevious( T_DOC_COMMENT_OPEN_TAG, $comment );
			$text   = false === $opener ? $text : $file->getTokensAsString( $opener, $comment - $opener + 1 );
		} else {
			// A /* … */ comment on several lines is several T_COMMENT tokens.
			$j = $comment;
			while ( $j > 0 && T_COMMENT === $tokens[ $j - 1 ]['code'] ) {
				--$j;
				$text = $tokens[ $j ]['content'] . $text;
			}
		}
		return (bool) preg_match( '/translators:/i', $text );
	}
}
