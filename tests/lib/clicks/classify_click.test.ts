import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyClick, countryOf, hasQrMarker, referrerHostOf } from '../../../lib/clicks/classify_click.ts';
import { PROBE_USER_AGENT } from '../../../lib/prober/run_probe.ts';

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

describe('classifyClick', () => {
  test('people are human; ?qr=1 makes a scan; HEAD is head whatever the agent', () => {
    assert.equal(classifyClick('GET', CHROME, ''), 'human');
    assert.equal(classifyClick('GET', IPHONE, 'utm_source=x'), 'human');
    assert.equal(classifyClick('GET', IPHONE, 'qr=1'), 'qr');
    assert.equal(classifyClick('GET', IPHONE, 'a=1&qr=1&b=2'), 'qr');
    assert.equal(classifyClick('GET', IPHONE, 'qr=10'), 'human');
    assert.equal(classifyClick('GET', IPHONE, 'xqr=1'), 'human');
    assert.equal(classifyClick('HEAD', CHROME, 'qr=1'), 'head');
    assert.equal(classifyClick('HEAD', 'Slackbot-LinkExpanding 1.0', ''), 'head');
  });

  test('link-preview fetchers are previews, before the general bot list', () => {
    for (const ua of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'Twitterbot/1.0',
      'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
      'WhatsApp/2.23.20.0',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'Mastodon/4.2.0 (http.rb/5.1.1; +https://mastodon.social/) Bot',
      'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
      'TelegramBot (like TwitterBot)',
      'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5',
    ]) {
      assert.equal(classifyClick('GET', ua, 'qr=1'), 'preview', ua);
    }
  });

  test('crawlers, tools and requests without a User-Agent are bots', () => {
    for (const ua of [
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
      'curl/8.5.0',
      'python-requests/2.31.0',
      undefined,
      '',
    ]) {
      assert.equal(classifyClick('GET', ua, ''), 'bot', String(ua));
    }
    assert.equal(
      classifyClick('GET', `${CHROME} ${'x'.repeat(100_000)} Googlebot`, ''),
      'human',
      'bounded work',
    );
  });

  test("the prober's agent is no click of any kind; only an agent that starts with it", () => {
    assert.equal(classifyClick('GET', PROBE_USER_AGENT, ''), null);
    assert.equal(classifyClick('GET', PROBE_USER_AGENT, 'qr=1'), null);
    assert.equal(classifyClick('GET', PROBE_USER_AGENT, ''), null, 'the remembered verdict too');
    assert.equal(classifyClick('GET', `${CHROME} LifelineProbe/1`, ''), 'human');
    assert.equal(classifyClick('GET', 'lifelineprobe/1', ''), 'bot', 'case matters: a tool, not our prober');
  });

  test('hasQrMarker', () => {
    assert.equal(hasQrMarker('qr=1'), true);
    assert.equal(hasQrMarker('x=1&qr=1'), true);
    assert.equal(hasQrMarker('qr=0'), false);
    assert.equal(hasQrMarker(''), false);
  });
});

describe('countryOf', () => {
  test('two letters, upper-cased; anything else unknown', () => {
    assert.equal(countryOf('de'), 'DE');
    assert.equal(countryOf('US'), 'US');
    for (const v of [undefined, '', 'T1', 'XX', 'USA', 'D', 'd€', ' DE', 'DE\r\n'])
      assert.equal(countryOf(v), '', v);
  });
});

describe('referrerHostOf', () => {
  test('the lower-cased host only, without credentials, port or a trailing dot', () => {
    assert.equal(referrerHostOf('https://www.Facebook.com/some/path?q=1#x'), 'www.facebook.com');
    assert.equal(referrerHostOf('http://user:pw@News.Example:8080/a'), 'news.example');
    assert.equal(referrerHostOf('https://t.co'), 't.co');
    assert.equal(referrerHostOf('https://example.com./'), 'example.com');
    assert.equal(referrerHostOf('https://[2001:db8::1]:443/x'), '[2001:db8::1]');
    assert.equal(referrerHostOf('android-app://com.google.android.gm/'), '');
  });

  test('absent, odd or oversized hosts become empty', () => {
    for (const v of [
      undefined,
      '',
      'not a url',
      'https://',
      'https://exa mple.com/',
      'https://例え.jp/',
      'https://evil.com%0d%0a/',
      `https://${'a'.repeat(101)}.com/`,
      `https://${'a.'.repeat(5000)}com/`,
    ]) {
      assert.equal(referrerHostOf(v), '', String(v).slice(0, 40));
    }
  });
});
