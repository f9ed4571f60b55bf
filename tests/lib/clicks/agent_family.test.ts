import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  agentFamilies,
  BROWSER_FAMILIES,
  familiesOfIndex,
  familyIndex,
  OS_FAMILIES,
} from '../../../lib/clicks/agent_family.ts';
import { familiesOf, readAgent } from '../../../lib/clicks/classify_click.ts';

/** User-Agent strings as browsers and apps send them (copied from real requests), with the families expected. */
const CORPUS: [string, string, string][] = [
  // Desktop
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    'chrome',
    'windows',
  ],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36',
    'chrome',
    'macos',
  ],
  [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36',
    'chrome',
    'linux',
  ],
  [
    'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    'chrome',
    'chromeos',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
    'edge',
    'windows',
  ],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', 'firefox', 'windows'],
  ['Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:124.0) Gecko/20100101 Firefox/124.0', 'firefox', 'linux'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0', 'firefox', 'macos'],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
    'safari',
    'macos',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 OPR/109.0.0.0',
    'opera',
    'windows',
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 YaBrowser/24.4.0.0 Safari/537.36',
    'yandex',
    'windows',
  ],
  // iPhone and iPad
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
    'safari',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
    'safari',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.71 Mobile/15E148 Safari/604.1',
    'chrome',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15',
    'firefox',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 EdgiOS/124.2478.50 Mobile/15E148 Safari/605.1.15',
    'edge',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.3.1;FBSS/3;FBID/phone;FBLC/ar_AR;FBOP/5]',
    'facebook',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 326.0.3.30.91 (iPhone15,2; iOS 17_4; ar_SA; ar; scale=3.00; 1179x2556; 584330682)',
    'instagram',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.85.0.40 (like Safari/8615.2.9.10.4, panda)',
    'snapchat',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_32.5.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US',
    'tiktok',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.8124',
    'linkedin',
    'ios',
  ],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    'webview',
    'ios',
  ],
  // Android
  [
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
    'chrome',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
    'samsung',
    'android',
  ],
  ['Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0', 'firefox', 'android'],
  [
    'Mozilla/5.0 (Linux; Android 13; SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.6312.118 Mobile Safari/537.36 EdgA/123.0.2420.102',
    'edge',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 12; M2101K6G) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.230 Mobile Safari/537.36 OPR/80.4.4244.7786',
    'opera',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; U; Android 11; en-US; RMX2189 Build/RP1A.200720.011) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/100.0.4896.58 UCBrowser/13.6.0.1315 Mobile Safari/537.36',
    'uc',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 13; SM-G991B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/460.0.0.48.109;]',
    'facebook',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP1A.240405.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.54 Mobile Safari/537.36 Instagram 327.0.0.39.89 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; ar_EG; 586915101)',
    'instagram',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 13; 2201117TG Build/TKQ1.221114.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/123.0.6312.120 Mobile Safari/537.36 Telegram-Android/10.11.1 (Xiaomi 2201117TG; Android 13; SDK 33; AVERAGE)',
    'telegram',
    'android',
  ],
  [
    'Mozilla/5.0 (Linux; Android 11; SM-A205F Build/RP1A.200720.012; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.82 Mobile Safari/537.36',
    'webview',
    'android',
  ],
  // Others
  [
    'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko)',
    'other',
    'other',
  ],
  [
    'Opera/9.80 (J2ME/MIDP; Opera Mini/9.80 (S60; SymbOS; Opera Mobi/23.348; U; en) Presto/2.5.25',
    'opera',
    'other',
  ],
  ['Dalvik/2.1.0 (Linux; U; Android 11; SM-A115F Build/RP1A.200720.012)', 'other', 'android'],
];

describe('agentFamilies over real User-Agent strings', () => {
  for (const [ua, browser, os] of CORPUS) {
    test(`${browser} on ${os}: ${ua.slice(0, 70)}…`, () => {
      assert.deepEqual(agentFamilies(ua), { browser, os });
    });
  }

  test('every pair survives its index, and the index is small', () => {
    for (const browser of BROWSER_FAMILIES) {
      for (const os of OS_FAMILIES) {
        const index = familyIndex({ browser, os });
        assert.ok(index >= 0 && index < BROWSER_FAMILIES.length * OS_FAMILIES.length);
        assert.deepEqual(familiesOfIndex(index), { browser, os });
      }
    }
  });

  test('an agent is worked out once: its key becomes the index of its families, shared by agents of that pair', () => {
    const a = readAgent('GET', CORPUS[0]![0]);
    const b = readAgent('GET', `${CORPUS[0]![0]} extra`);
    assert.ok(a.key < -1 && b.key < -1 && a.key !== b.key, 'unclassified readers have keys of their own');
    assert.equal(readAgent('GET', `${CORPUS[0]![0]}`), a, 'the same text, the same object');
    assert.deepEqual(familiesOf(a), { browser: 'chrome', os: 'windows' });
    assert.deepEqual(familiesOf(b), { browser: 'chrome', os: 'windows' });
    assert.equal(a.key, b.key);
    assert.equal(a.key, familyIndex({ browser: 'chrome', os: 'windows' }));
    assert.equal(familiesOf(readAgent('GET', 'curl/8.5.0')), null, 'bots have no families');
    assert.equal(readAgent('GET', 'curl/8.5.0').key, readAgent('GET', 'Googlebot/2.1').key);
  });
});
