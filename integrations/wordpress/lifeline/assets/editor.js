/* Lifeline: the post's short link in the block editor's document sidebar (no build step: WordPress globals). */
((wp) => {
  if (!wp?.plugins || !wp.element || !wp.data) return;
  // The panel slot lives in @wordpress/editor since WordPress 6.6, where the wp.editPost one is deprecated (and
  // warns when read). Older WordPress (5.6 to 6.5) has only wp.editPost's; it is read only when wp.editor has none.
  const PluginDocumentSettingPanel =
    wp.editor?.PluginDocumentSettingPanel ?? wp.editPost?.PluginDocumentSettingPanel;
  if (!PluginDocumentSettingPanel) return;
  const { createElement: el, useState, useEffect } = wp.element;
  const { useSelect } = wp.data;
  const { __ } = wp.i18n;
  const { Button } = wp.components;

  const MESSAGES = {
    not_published: __('Made when the post is published.', 'lifeline'),
    not_configured: __('Lifeline is not configured (Settings → Lifeline).', 'lifeline'),
    queued: __('Waiting for Lifeline: queued, retried automatically.', 'lifeline'),
    minting: __('Being made…', 'lifeline'),
  };

  function LifelinePanel() {
    const post = useSelect((select) => {
      const editor = select('core/editor');
      return {
        id: editor.getCurrentPostId(),
        status: editor.getCurrentPostAttribute('status'),
        saving: editor.isSavingPost(),
      };
    }, []);
    const [link, setLink] = useState(null);

    useEffect(() => {
      if (!post.id || post.saving) return undefined;
      let cancelled = false;
      let tries = 0;
      function load() {
        wp.apiFetch({ path: `/lifeline/v1/posts/${post.id}/shortlink` })
          .then((result) => {
            if (cancelled) return;
            setLink(result);
            // Minting takes a moment after publishing: look again a few times.
            if (result.state === 'minting' && tries++ < 10) setTimeout(load, 1500);
          })
          .catch(() => {
            if (!cancelled) setLink({ shortUrl: null, state: 'minting' });
          });
      }
      load();
      return () => {
        cancelled = true;
      };
    }, [post.id, post.status, post.saving]);

    let body;
    if (!link) body = el('p', null, '…');
    else if (link.shortUrl)
      body = el(
        'div',
        { className: 'lifeline-shortlink' },
        el('p', null, el('a', { href: link.shortUrl, target: '_blank', rel: 'noopener' }, link.shortUrl)),
        el(
          Button,
          {
            variant: 'secondary',
            onClick: () => {
              if (window.navigator.clipboard) window.navigator.clipboard.writeText(link.shortUrl);
            },
          },
          __('Copy', 'lifeline'),
        ),
      );
    else body = el('p', { className: 'lifeline-shortlink-state' }, MESSAGES[link.state] || MESSAGES.minting);

    return el(
      PluginDocumentSettingPanel,
      { name: 'lifeline-shortlink', title: __('Lifeline short link', 'lifeline') },
      body,
    );
  }

  wp.plugins.registerPlugin('lifeline-shortlink', { render: LifelinePanel, icon: 'admin-links' });
})(window.wp);
