import type { ComponentChildren } from 'preact';

/** The frame of pages readers see on the short host (status pages, interstitials, previews). */
export function PublicPage(props: { title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/static/app.css" />
      </head>
      <body class="public">
        <main class="public-card">{props.children}</main>
      </body>
    </html>
  );
}
